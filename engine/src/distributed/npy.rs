//! One `.npy` file of a field split over ranks, each rank writing its own rows at their offset:
//! no rank ever holds the whole field. Rank 0 makes the file (through [`AtomicFile`]: a
//! temporary file beside the target, renamed into place once every rank has written), writes
//! the header and sizes it; the ranks then write their rows; the file is kept only when every
//! rank succeeded. A target that is not a regular file (standard output, a pipe, a device) is
//! written through in row order by rank 0 from the joined rows.

use std::io::Write;
use std::path::Path;

use crate::error::{HeatlabError, Result};
use crate::export::AtomicFile;
use crate::grid::{Grid, GridSize};

use super::bands::Band;
use super::link::RankLink;

/// The header NumPy (and [`crate::export::write_npy`]) writes for a float32 `(rows, cols)`
/// array in C order: version 1.0, the dictionary padded with spaces to a multiple of 64 bytes.
pub fn npy_header(size: GridSize) -> Vec<u8> {
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}, {}, ), }}",
        size.rows, size.cols
    );
    let unpadded = 10 + dict.len() + 1;
    let total = unpadded.div_ceil(64) * 64;
    let header_len = total - 10;
    let mut header = Vec::with_capacity(total);
    header.extend_from_slice(b"\x93NUMPY\x01\x00");
    // The dictionary of a 2-D shape is far below 65,536 bytes.
    header.extend_from_slice(&(header_len as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    header.resize(total - 1, b' ');
    header.push(b'\n');
    header
}

/// Writes the field of `size`, split over the ranks of `link`, as one `.npy` at `path`: this
/// rank's `own` rows (of `band`) at their offset. Every rank calls it with its own rows.
pub fn write_npy_by_ranks(
    path: &Path,
    size: GridSize,
    band: &Band,
    own: &[f32],
    link: &mut dyn RankLink,
) -> Result<()> {
    let root = link.rank() == 0;
    // Rank 0 opens the file; a stream has no temporary file to write into at offsets.
    let mut opened = None;
    let mut temporary = Vec::new();
    let mut failure = None;
    if root {
        match open_sized(path, size) {
            Ok(file) => {
                temporary = file
                    .temporary_path()
                    .map(|p| p.as_os_str().as_encoded_bytes().to_vec())
                    .unwrap_or_default();
                opened = Some(file);
            }
            Err(error) => failure = Some(error),
        }
    }
    let shared = link.broadcast_bytes(&temporary, 0)?;
    if link.max(f64::from(u8::from(failure.is_some())))? > 0.0 {
        return match failure {
            Some(error) => Err(error),
            None => Err(HeatlabError::Internal(format!(
                "rank 0 could not write {}",
                path.display()
            ))),
        };
    }
    if shared.is_empty() {
        // A stream: rank 0 writes the joined rows after the header, in order.
        let joined = link.gather_rows(own, 0)?;
        return match (opened, joined) {
            (Some(mut file), Some(values)) => {
                write_values(&mut file, path, &values)?;
                file.commit()
            }
            _ => Ok(()),
        };
    }
    let written = write_rows_at(&shared, size, band, own);
    let failed = link.max(f64::from(u8::from(written.is_err())))? > 0.0;
    // Rank 0 renames the file into place when every rank wrote its rows; dropped without a
    // commit, the temporary file goes.
    if let (Some(file), false) = (opened, failed) {
        file.commit()?;
    }
    written?;
    if failed {
        return Err(HeatlabError::Internal(format!(
            "another rank could not write its rows of {}",
            path.display()
        )));
    }
    Ok(())
}

/// Opens `path` through an [`AtomicFile`] with the header written and, for a temporary file,
/// the whole array's length reserved.
fn open_sized(path: &Path, size: GridSize) -> Result<AtomicFile> {
    let mut file = AtomicFile::create(path)?;
    let header = npy_header(size);
    file.write_all(&header)
        .and_then(|()| file.flush())
        .map_err(|e| HeatlabError::io("writing", path, e))?;
    if let Some(temporary) = file.temporary_path() {
        let length = header.len() as u64 + size.bytes() as u64;
        std::fs::OpenOptions::new()
            .write(true)
            .open(temporary)
            .and_then(|f| f.set_len(length))
            .map_err(|e| HeatlabError::io("sizing", path, e))?;
    }
    Ok(file)
}

fn write_values(file: &mut AtomicFile, path: &Path, values: &[f32]) -> Result<()> {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    file.write_all(&bytes)
        .map_err(|e| HeatlabError::io("writing", path, e))
}

/// Values of a band converted to bytes and written at once.
const ROWS_WRITE_CHUNK: usize = 1 << 20;

/// Writes `own` (the band's rows) into the file at `temporary` at their offset.
fn write_rows_at(temporary: &[u8], size: GridSize, band: &Band, own: &[f32]) -> Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileExt;
    let path = Path::new(std::ffi::OsStr::from_bytes(temporary));
    let mut offset = npy_header(size).len() as u64 + (band.first_row * size.cols * 4) as u64;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| HeatlabError::io("opening", path, e))?;
    // A chunk of the rows at a time: no second copy of the band.
    let mut bytes = Vec::with_capacity(ROWS_WRITE_CHUNK * 4);
    for chunk in own.chunks(ROWS_WRITE_CHUNK) {
        bytes.clear();
        bytes.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
        file.write_all_at(&bytes, offset)
            .map_err(|e| HeatlabError::io("writing rows into", path, e))?;
        offset += bytes.len() as u64;
    }
    Ok(())
}

/// The rows `band` owns of `whole` (for tests and single-process callers).
pub fn own_rows_of(whole: &Grid, band: &Band) -> Vec<f32> {
    let cols = whole.cols();
    whole.as_slice()[band.first_row * cols..(band.first_row + band.rows) * cols].to_vec()
}
