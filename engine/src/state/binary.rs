//! The state file's bytes: its preamble and header, the grids and the map, written and read
//! through a running checksum.

use std::io::{Read, Write};
use std::path::Path;

use super::{
    StateFileError, StateHeader, CHECKSUM_BYTES, FORMAT_VERSION, MAGIC, MAX_HEADER_BYTES,
    PREAMBLE_BYTES, UNIFORM_FORMAT_VERSION,
};
use crate::compute::StepParams;
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::import::read_up_to;

/// Reads the preamble (magic, version, header length) and returns the version and the
/// header's length,
/// refusing another file, an unknown version or an impossible length.
pub(super) fn read_preamble(reader: &mut impl Read, path: &Path) -> Result<(u32, u32)> {
    let refuse = |reason| HeatlabError::StateFile {
        path: path.to_path_buf(),
        reason,
    };
    let mut preamble = [0u8; PREAMBLE_BYTES];
    let got =
        read_up_to(reader, &mut preamble).map_err(|e| HeatlabError::io("reading", path, e))?;
    if got < MAGIC.len() || preamble[..MAGIC.len()] != MAGIC {
        return Err(refuse(StateFileError::WrongMagic));
    }
    if got < PREAMBLE_BYTES {
        return Err(refuse(StateFileError::Truncated {
            expected: PREAMBLE_BYTES as u64,
            found: got as u64,
        }));
    }
    let version = u32::from_le_bytes([preamble[8], preamble[9], preamble[10], preamble[11]]);
    if version == 0 {
        return Err(refuse(StateFileError::BadHeader(
            "format version 0 does not exist".into(),
        )));
    }
    if version > FORMAT_VERSION {
        return Err(refuse(StateFileError::NewerVersion {
            found: version,
            ours: env!("CARGO_PKG_VERSION"),
            supported: FORMAT_VERSION,
        }));
    }
    let header_len = u32::from_le_bytes([preamble[12], preamble[13], preamble[14], preamble[15]]);
    if header_len > MAX_HEADER_BYTES {
        return Err(refuse(StateFileError::BadHeader(format!(
            "a header of {header_len} bytes"
        ))));
    }
    Ok((version, header_len))
}

/// The header's JSON, the size of its fields and its step parameters, each checked; the
/// error says what is wrong with it.
/// Reads a state's preamble and header and checks the length a regular file has against
/// the one they give: the header, the field's size, its parameters and the expected length.
pub(super) fn read_header<R: Read>(
    reader: &mut ChecksumReader<R>,
    length: Option<u64>,
    path: &Path,
) -> Result<(StateHeader, GridSize, StepParams, u64)> {
    let refuse = |reason| HeatlabError::StateFile {
        path: path.to_path_buf(),
        reason,
    };
    let (version, header_len) = read_preamble(reader, path)?;
    let fixed = (PREAMBLE_BYTES + CHECKSUM_BYTES) as u64 + u64::from(header_len);
    let check_length = |expected: u64| match length {
        Some(found) if found < expected => {
            Err(refuse(StateFileError::Truncated { expected, found }))
        }
        _ => Ok(()),
    };
    check_length(fixed)?;
    let mut header = vec![0u8; header_len as usize];
    reader
        .read_exact(&mut header)
        .map_err(|e| cut_short(path, length, fixed, reader.consumed, e))?;
    let (header, size, params) =
        parse_header(&header).map_err(|why| refuse(StateFileError::BadHeader(why)))?;
    // Version 2 is the version of a state with a heat problem, and only of one: a version-1
    // file with a problem is not one heatlab wrote, and its length would be misread.
    match (version, header.problem.is_some()) {
        (UNIFORM_FORMAT_VERSION, true) => {
            return Err(refuse(StateFileError::BadHeader(
                "format version 1 holds no heat problem, yet this header has one".into(),
            )))
        }
        (FORMAT_VERSION, false) => {
            return Err(refuse(StateFileError::BadHeader(
                "format version 2 holds a heat problem, yet this header has none".into(),
            )))
        }
        _ => {}
    }
    let map_bytes = if header.problem.is_some() {
        size.cells() as u64
    } else {
        0
    };
    let expected = fixed + 2 * size.bytes() as u64 + map_bytes;
    check_length(expected)?;
    if let Some(found) = length.filter(|&found| found > expected) {
        return Err(refuse(StateFileError::TrailingBytes {
            extra: found - expected,
        }));
    }
    Ok((header, size, params, expected))
}

/// The error of a read that ended early: `expected` bytes against the file's length (or the
/// `consumed` bytes of a stream); any other failure is an I/O error.
pub(super) fn cut_short(
    path: &Path,
    length: Option<u64>,
    expected: u64,
    consumed: u64,
    error: std::io::Error,
) -> HeatlabError {
    match error.kind() {
        std::io::ErrorKind::UnexpectedEof => HeatlabError::StateFile {
            path: path.to_path_buf(),
            reason: StateFileError::Truncated {
                expected,
                found: length.unwrap_or(consumed),
            },
        },
        _ => HeatlabError::io("reading", path, error),
    }
}

pub(super) fn parse_header(
    bytes: &[u8],
) -> std::result::Result<(StateHeader, GridSize, StepParams), String> {
    let header: StateHeader = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let size = GridSize::new(header.rows, header.cols).map_err(|e| e.to_string())?;
    let params = StepParams {
        coeff: header.coeff,
        boundary: header.boundary,
    };
    params.validate(true).map_err(|e| e.to_string())?;
    Ok((header, size, params))
}

/// A failure while reading a field: the allocation or the input.
pub(super) enum GridReadError {
    Memory(HeatlabError),
    Io(std::io::Error),
}

pub(super) fn read_grid(reader: &mut impl Read, size: GridSize) -> Result<Grid, GridReadError> {
    let mut values: Vec<f32> =
        crate::memory::try_vec_with_capacity(&format!("{size} field"), size.cells())
            .map_err(GridReadError::Memory)?;
    let mut chunk = vec![0u8; 1 << 16];
    let mut remaining = size.bytes();
    while remaining > 0 {
        let n = remaining.min(chunk.len());
        reader
            .read_exact(&mut chunk[..n])
            .map_err(GridReadError::Io)?;
        values.extend(
            chunk[..n]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
        remaining -= n;
    }
    Grid::from_vec(size, values).map_err(GridReadError::Memory)
}

/// The cell map of a heat problem, one byte a cell.
pub(super) fn read_problem_map(reader: &mut impl Read, size: GridSize) -> std::io::Result<Vec<u8>> {
    let mut map = vec![0u8; size.cells()];
    reader.read_exact(&mut map)?;
    Ok(map)
}

pub(super) fn write_f32s(writer: &mut impl Write, values: &[f32]) -> std::io::Result<()> {
    let mut buffer = Vec::with_capacity(1 << 16);
    for chunk in values.chunks(1 << 14) {
        buffer.clear();
        buffer.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
        writer.write_all(&buffer)?;
    }
    Ok(())
}

/// Passes bytes on and keeps their CRC-32.
pub(super) struct ChecksumWriter<W> {
    pub(super) inner: W,
    pub(super) hasher: crc32fast::Hasher,
}

impl<W: Write> ChecksumWriter<W> {
    pub(super) fn new(inner: W) -> Self {
        Self {
            inner,
            hasher: crc32fast::Hasher::new(),
        }
    }
}

impl<W: Write> Write for ChecksumWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Passes bytes on, counts them and keeps their CRC-32.
pub(super) struct ChecksumReader<R> {
    pub(super) inner: R,
    pub(super) hasher: crc32fast::Hasher,
    pub(super) consumed: u64,
}

impl<R: Read> ChecksumReader<R> {
    pub(super) fn new(inner: R) -> Self {
        Self {
            inner,
            hasher: crc32fast::Hasher::new(),
            consumed: 0,
        }
    }
}

impl<R: Read> Read for ChecksumReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.consumed += n as u64;
        Ok(n)
    }
}
