//! `.npy` arrays as fields: the whole array from any reader (a file, a pipe, a device), or the
//! rows of one band from a regular file, which each rank of a field split over ranks reads
//! for itself (no rank holds the whole field). Both check the same things: a 2-D float32 or
//! float64 array, its size, data long enough, values within float32's range and finite.

use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use super::{checked_size, refuse};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::memory::try_vec_with_capacity;

/// Bytes a rank's reader buffers between seeks.
const ROWS_READ_BUFFER: usize = 1 << 20;

/// What a `.npy` header says, checked: a 2-D float32 or float64 array of `size`.
#[derive(Debug, Clone, Copy)]
struct Layout {
    size: GridSize,
    /// 4 or 8.
    float_bytes: usize,
    /// Column-major (Fortran order).
    fortran: bool,
    /// Values stored big-endian.
    big_endian: bool,
}

/// The header of `npy` checked, for a caller that holds `copies` copies of the field.
fn layout_of<R: Read>(npy: &npyz::NpyFile<R>, path: &Path, copies: usize) -> Result<Layout> {
    let bad = |why: String| refuse(path, &why);
    let shape = npy.shape().to_vec();
    if shape.len() != 2 {
        return Err(bad(format!(
            "is a {}-D array of shape {shape:?}; heatlab needs a 2-D array (rows, cols){}",
            shape.len(),
            if shape.len() > 2 {
                ": pick one slice, e.g. np.save(name, a[0])"
            } else {
                ""
            }
        )));
    }
    let (float_bytes, big_endian) = float_bytes(&npy.dtype()).map_err(bad)?;
    let fortran = npy.order() == npyz::Order::Fortran;
    let size = checked_size(path, shape[0], shape[1], copies)?;
    Ok(Layout {
        size,
        float_bytes,
        fortran,
        big_endian,
    })
}

/// Opens the `.npy` at `path` (a regular file, read at offsets) and checks its header.
fn open_seekable(
    path: &Path,
    copies: usize,
) -> Result<(npyz::NpyFile<BufReader<std::fs::File>>, Layout)> {
    // Looked at before it is opened: opening a FIFO waits for a writer.
    let metadata = std::fs::metadata(path).map_err(|e| HeatlabError::io("reading", path, e))?;
    if !metadata.is_file() {
        return Err(refuse(
            path,
            "is not a regular file; a field split over ranks is read by every rank at its \
             rows' offset",
        ));
    }
    let file = std::fs::File::open(path).map_err(|e| HeatlabError::io("opening", path, e))?;
    let reader = BufReader::with_capacity(ROWS_READ_BUFFER, file);
    let npy = npyz::NpyFile::new(reader)
        .map_err(|e| refuse(path, &format!("is not a readable .npy array ({e})")))?;
    let layout = layout_of(&npy, path, copies)?;
    Ok((npy, layout))
}

/// Whether `path` is a regular file that begins as a `.npy` array does (looked at before it
/// is opened: a FIFO is not opened).
pub fn is_npy_file(path: &Path) -> bool {
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let mut magic = [0_u8; 6];
    regular
        && std::fs::File::open(path)
            .and_then(|mut file| file.read_exact(&mut magic))
            .is_ok()
        && magic == super::NPY_MAGIC
}

/// The size of the field in the `.npy` at `path` (a regular file), from its header alone (its
/// length unchecked: a read checks it).
pub fn npy_header_size(path: &Path) -> Result<GridSize> {
    open_seekable(path, 0).map(|(_, layout)| layout.size)
}

/// The size of the field in the `.npy` at `path` (a regular file), from its header and its
/// length alone: checked as a read checks it, a file too short for its shape refused, but
/// against no memory (the caller holds none of it).
pub fn npy_field_size(path: &Path) -> Result<GridSize> {
    let (npy, layout) = open_seekable(path, 0)?;
    let data_start = npy
        .into_inner()
        .stream_position()
        .map_err(|e| HeatlabError::io("reading", path, e))?;
    let length = std::fs::metadata(path)
        .map_err(|e| HeatlabError::io("reading", path, e))?
        .len();
    let data = layout.size.cells() as u64 * layout.float_bytes as u64;
    if length < data_start + data {
        return Err(refuse(
            path,
            &format!(
                "is cut short: a {} array needs {data} bytes of data, the file holds {}",
                layout.size,
                length.saturating_sub(data_start)
            ),
        ));
    }
    Ok(layout.size)
}

/// A `.npy` array as a field, for a caller that holds `held_copies` copies of it.
pub(super) fn read_npy_field(reader: impl Read, path: &Path, held_copies: usize) -> Result<Grid> {
    let npy = npyz::NpyFile::new(reader)
        .map_err(|e| refuse(path, &format!("is not a readable .npy array ({e})")))?;
    // The field and, for Fortran order, one more copy while converting.
    let copies = if npy.order() == npyz::Order::Fortran {
        2
    } else {
        1
    };
    let layout = layout_of(&npy, path, copies.max(held_copies))?;
    let size = layout.size;
    let mut values: Vec<f32> = try_vec_with_capacity(&format!("{size} field"), size.cells())?;
    let whole = [(0, size.cells())];
    read_runs(npy, &layout, path, &whole, &mut values, |_, _| Ok(()))?;
    let values = if layout.fortran {
        transpose_column_major(&values, size)?
    } else {
        values
    };
    finite_grid(Grid::from_vec(size, values)?, 0, path)
}

/// Rows `first_row..first_row + rows` of the field in the `.npy` at `path` (a regular file),
/// read at their offset: one band of a field split over ranks. `size` is the whole field's,
/// as rank 0 read it from the header; a file changed since is refused.
pub fn read_npy_rows(path: &Path, size: GridSize, first_row: usize, rows: usize) -> Result<Grid> {
    let band = GridSize::new(rows, size.cols)?;
    let (npy, layout) = open_seekable(path, 0)?;
    if layout.size != size || first_row + rows > size.rows {
        return Err(refuse(
            path,
            &format!(
                "holds a {} array where rank 0 read {size}; was it replaced during the run?",
                layout.size
            ),
        ));
    }
    // The memory for the band (and its columns, in Fortran order) is the caller's to check.
    let runs: Vec<(usize, usize)> = match layout.fortran {
        false => vec![(first_row * size.cols, band.cells())],
        true => (0..size.cols)
            .map(|col| (col * size.rows + first_row, rows))
            .collect(),
    };
    let mut values: Vec<f32> = try_vec_with_capacity(&format!("{band} band"), band.cells())?;
    let value_bytes = layout.float_bytes as u64;
    // The reader stands at the first value when the first run is sought.
    let mut data_start = None;
    read_runs(npy, &layout, path, &runs, &mut values, |reader, start| {
        let origin = match data_start {
            Some(origin) => origin,
            None => *data_start.insert(reader.stream_position()?),
        };
        reader
            .seek(SeekFrom::Start(origin + start as u64 * value_bytes))
            .map(|_| ())
    })?;
    let values = if layout.fortran {
        transpose_column_major(&values, band)?
    } else {
        values
    };
    finite_grid(Grid::from_vec(band, values)?, first_row, path)
}

/// Values read from the file at once (8 MiB of float64).
const CHUNK_VALUES: usize = 1 << 20;

/// Reads the values of `runs` (each a first index in file order and a count) of the array
/// `npy` into `values`, narrowed to float32; `seek` moves the reader to a run's first index (a
/// stream is read in order and never moves). The values are read in chunks, not one by one.
fn read_runs<R: Read>(
    npy: npyz::NpyFile<R>,
    layout: &Layout,
    path: &Path,
    runs: &[(usize, usize)],
    values: &mut Vec<f32>,
    mut seek: impl FnMut(&mut R, usize) -> std::io::Result<()>,
) -> Result<()> {
    let bad = |why: String| refuse(path, &why);
    let size = layout.size;
    let truncated = |e: std::io::Error| {
        bad(format!(
            "is cut short or damaged: {e} (a {size} array needs {} bytes of data)",
            size.cells() * layout.float_bytes
        ))
    };
    let width = layout.float_bytes;
    let mut reader = npy.into_inner();
    let mut bytes = vec![0_u8; CHUNK_VALUES * width];
    for &(start, count) in runs {
        seek(&mut reader, start).map_err(truncated)?;
        let mut done = 0;
        while done < count {
            let chunk = (count - done).min(CHUNK_VALUES);
            let raw = &mut bytes[..chunk * width];
            reader.read_exact(raw).map_err(truncated)?;
            for (at, value) in raw.chunks_exact(width).enumerate() {
                let value = match (width, layout.big_endian) {
                    (4, false) => {
                        f64::from(f32::from_le_bytes([value[0], value[1], value[2], value[3]]))
                    }
                    (4, true) => {
                        f64::from(f32::from_be_bytes([value[0], value[1], value[2], value[3]]))
                    }
                    (_, false) => f64::from_le_bytes(eight(value)),
                    (_, true) => f64::from_be_bytes(eight(value)),
                };
                let narrowed = value as f32;
                if value.is_finite() && !narrowed.is_finite() {
                    return Err(bad(format!(
                        "holds {value:e} at index {}, beyond float32's range (about 3.4e38)",
                        start + done + at
                    )));
                }
                values.push(narrowed);
            }
            done += chunk;
        }
    }
    Ok(())
}

/// The 8 bytes of a float64.
fn eight(bytes: &[u8]) -> [u8; 8] {
    let mut value = [0_u8; 8];
    value.copy_from_slice(bytes);
    value
}

/// `grid` (rows from `first_row` of the file's array), refused if it holds a non-finite value.
fn finite_grid(grid: Grid, first_row: usize, path: &Path) -> Result<Grid> {
    if let Some((row, col)) = grid.first_non_finite() {
        return Err(refuse(
            path,
            &format!(
                "holds a non-finite value ({}) at row {}, column {col}; replace NaN and \
                 infinities first (np.nan_to_num)",
                grid.get(row, col),
                first_row + row
            ),
        ));
    }
    Ok(grid)
}

/// Bytes of each value of an array of `dtype`, 4 or 8 (float32 or float64), and whether they
/// are stored big-endian; the error says what else it holds.
fn float_bytes(dtype: &npyz::DType) -> std::result::Result<(usize, bool), String> {
    let npyz::DType::Plain(type_str) = dtype else {
        return Err(
            "holds records or sub-arrays; heatlab needs a plain float32 or float64 array".into(),
        );
    };
    let big_endian = type_str.endianness() == npyz::Endianness::Big;
    match (type_str.type_char(), type_str.size_field()) {
        (npyz::TypeChar::Float, 4) => Ok((4, big_endian)),
        (npyz::TypeChar::Float, 8) => Ok((8, big_endian)),
        _ => Err(format!(
            "holds {type_str} values; heatlab imports float32 or float64 arrays \
             (convert with a.astype(np.float32))"
        )),
    }
}

/// Row-major values of a column-major (Fortran order) array.
fn transpose_column_major(values: &[f32], size: GridSize) -> Result<Vec<f32>> {
    let mut rows: Vec<f32> = try_vec_with_capacity(&format!("{size} field"), size.cells())?;
    for row in 0..size.rows {
        rows.extend((0..size.cols).map(|col| values[col * size.rows + row]));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.npy` file of `values` (row-major, `rows` x `cols`) stored as `descr`, in Fortran
    /// order when asked.
    fn npy_file(dir: &Path, name: &str, rows: usize, cols: usize, descr: &str, fortran: bool) {
        let value = |row: usize, col: usize| (row * 1000 + col) as f64 * 0.25 - 7.0;
        let order: Vec<(usize, usize)> = match fortran {
            false => (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r, c)))
                .collect(),
            true => (0..cols)
                .flat_map(|c| (0..rows).map(move |r| (r, c)))
                .collect(),
        };
        let mut data = Vec::new();
        for (row, col) in order {
            match descr {
                "<f4" => data.extend_from_slice(&(value(row, col) as f32).to_le_bytes()),
                ">f8" => data.extend_from_slice(&value(row, col).to_be_bytes()),
                _ => data.extend_from_slice(&value(row, col).to_le_bytes()),
            }
        }
        let shape = format!("({rows}, {cols})");
        let bytes = crate::import::tests::npy(descr, fortran, &shape, &data);
        std::fs::write(dir.join(name), bytes).unwrap();
    }

    #[test]
    fn a_band_of_rows_is_the_whole_reads_rows_in_every_layout() {
        let dir = tempfile::tempdir().unwrap();
        for (descr, fortran) in [("<f4", false), ("<f8", true), (">f8", false), ("<f4", true)] {
            let name = format!("{}{fortran}.npy", &descr[1..]);
            npy_file(dir.path(), &name, 13, 7, descr, fortran);
            let path = dir.path().join(&name);
            let file = std::fs::File::open(&path).unwrap();
            let whole = read_npy_field(file, &path, 1).unwrap();
            let size = npy_field_size(&path).unwrap();
            assert_eq!(size, whole.size());
            for (first, rows) in [(0, 13), (0, 1), (5, 4), (12, 1), (3, 10)] {
                let band = read_npy_rows(&path, size, first, rows).unwrap();
                assert_eq!(
                    band.as_slice(),
                    &whole.as_slice()[first * 7..(first + rows) * 7],
                    "{name}: rows {first}..{}",
                    first + rows
                );
            }
        }
    }

    #[test]
    fn a_band_is_refused_when_the_file_changed_or_holds_a_nan() {
        let dir = tempfile::tempdir().unwrap();
        npy_file(dir.path(), "a.npy", 13, 7, "<f4", false);
        let path = dir.path().join("a.npy");
        let other = GridSize::new(14, 7).unwrap();
        let error = read_npy_rows(&path, other, 0, 7).unwrap_err().to_string();
        assert!(error.contains("replaced during the run"), "{error}");
        // A NaN in row 9: the band holding it names the file's row.
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - (13 * 7 - (9 * 7 + 2)) * 4;
        bytes[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let size = npy_field_size(&path).unwrap();
        assert!(read_npy_rows(&path, size, 0, 9).is_ok());
        let error = read_npy_rows(&path, size, 8, 3).unwrap_err().to_string();
        assert!(error.contains("at row 9, column 2"), "{error}");
        // Cut short: the band past the end says so.
        std::fs::write(&path, &bytes[..bytes.len() - 20]).unwrap();
        assert!(read_npy_rows(&path, size, 0, 5).is_ok());
        let error = read_npy_rows(&path, size, 10, 3).unwrap_err().to_string();
        assert!(error.contains("cut short"), "{error}");
    }
}
