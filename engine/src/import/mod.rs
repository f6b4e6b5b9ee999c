//! Initial fields from files: a NumPy `.npy` array (2-D, float32 or float64, C or Fortran
//! order, any size) or an image (PNG or JPEG), whose luminance is mapped linearly onto a chosen
//! range of values. The file's contents decide what it is, not its name: a text file named
//! `.png` is refused as "not an image", whatever it is called.
//!
//! Everything a user may hand in is checked before it is trusted: the array's rank and type,
//! its size against the largest side and the memory there is, non-finite values, truncated
//! data. Each refusal is a [`HeatlabError::InvalidInput`] (or `OutOfMemory`) naming the file
//! and saying what to do.

use std::fmt;
use std::io::{BufReader, Read};
use std::path::Path;
use std::str::FromStr;

use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};
use crate::memory::ensure_host_memory;

mod jpeg;
pub mod material_map;
mod npy;

use npy::read_npy_field;
pub use npy::{is_npy_file, npy_field_size, npy_header_size, read_npy_rows};

/// The first bytes of every `.npy` file.
const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// Copies of the field that decoding an image holds at its peak: the pixels (up to 16-bit
/// RGBA, two copies' worth), the luminance and the field.
const IMAGE_DECODE_COPIES: usize = 6;

/// The values that black and white of an image become.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LuminanceRange {
    /// The value of black (luminance 0).
    pub black: f32,
    /// The value of white (luminance 1).
    pub white: f32,
}

impl Default for LuminanceRange {
    fn default() -> Self {
        Self {
            black: 0.0,
            white: 1.0,
        }
    }
}

impl LuminanceRange {
    /// A range, checked to be finite.
    pub fn new(black: f32, white: f32) -> Result<Self> {
        if !black.is_finite() || !white.is_finite() {
            return Err(HeatlabError::InvalidInput(format!(
                "the image's range must be two finite numbers, got {black},{white}"
            )));
        }
        Ok(Self { black, white })
    }

    /// The value of a luminance in 0..=1.
    pub fn map(self, luminance: f32) -> f32 {
        self.black + (self.white - self.black) * luminance
    }
}

impl fmt::Display for LuminanceRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.black, self.white)
    }
}

impl FromStr for LuminanceRange {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self> {
        let bad = || {
            HeatlabError::InvalidInput(format!(
                "expected LO,HI (the values of black and white, e.g. 0,1), got {text:?}"
            ))
        };
        let (black, white) = text.split_once(',').ok_or_else(bad)?;
        let black: f32 = black.trim().parse().map_err(|_| bad())?;
        let white: f32 = white.trim().parse().map_err(|_| bad())?;
        Self::new(black, white)
    }
}

/// What kind of file an import was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportKind {
    /// A NumPy array.
    Npy,
    /// A PNG or JPEG image.
    Image,
}

/// Reads the initial field in `path`: a `.npy` array as it is, or an image's luminance mapped
/// onto `range`.
pub fn import_field(path: &Path, range: LuminanceRange) -> Result<(Grid, ImportKind)> {
    import_field_for(path, range, 1)
}

/// As [`import_field`], for a caller that will hold `held_copies` copies of the field at once
/// (a run): the size in the file's header is checked against the memory those copies need, or
/// the import's own if more, before the data is read or decoded.
pub fn import_field_for(
    path: &Path,
    range: LuminanceRange,
    held_copies: usize,
) -> Result<(Grid, ImportKind)> {
    let refuse_here = |why: &str| refuse(path, why);
    let input = Input::open(path, &refuse_here)?;
    if input.start.starts_with(NPY_MAGIC) {
        return Ok((
            read_npy_field(input.reader, path, held_copies)?,
            ImportKind::Npy,
        ));
    }
    match image::guess_format(&input.start) {
        Ok(format @ (image::ImageFormat::Png | image::ImageFormat::Jpeg)) => {
            let bytes = input.read_all(path, &refuse_here)?;
            let field = read_image_field(&bytes, format, path, range, held_copies)?;
            Ok((field, ImportKind::Image))
        }
        Ok(other) => Err(refuse(
            path,
            &format!("is a {other:?} image; heatlab imports PNG and JPEG images and .npy arrays"),
        )),
        Err(_) => Err(refuse(path, &not_recognised(path))),
    }
}

/// A file a user named, opened once (a FIFO cannot be opened twice: its writer is gone after
/// the first reader), with its first bytes read to tell what it is.
pub(crate) struct Input {
    /// Up to the first 16 bytes.
    pub start: Vec<u8>,
    /// The whole file from its first byte.
    pub reader: std::io::Chain<std::io::Cursor<Vec<u8>>, BufReader<std::fs::File>>,
    /// The length a regular file reports (0 for a pipe or a device, whose length is unknown).
    length: u64,
}

impl Input {
    /// Opens `path`, refusing a folder and an empty file through `refuse`.
    pub(crate) fn open(path: &Path, refuse: &dyn Fn(&str) -> HeatlabError) -> Result<Self> {
        let file = std::fs::File::open(path).map_err(|e| HeatlabError::io("opening", path, e))?;
        let metadata = file
            .metadata()
            .map_err(|e| HeatlabError::io("reading", path, e))?;
        if metadata.is_dir() {
            return Err(refuse("is a folder, not a file"));
        }
        let mut reader = BufReader::new(file);
        let mut start = [0u8; 16];
        let got = read_up_to(&mut reader, &mut start)
            .map_err(|e| HeatlabError::io("reading", path, e))?;
        if got == 0 {
            return Err(refuse("is empty"));
        }
        let start = start[..got].to_vec();
        Ok(Self {
            reader: std::io::Cursor::new(start.clone()).chain(reader),
            start,
            length: metadata.len(),
        })
    }

    /// The whole file, read up to the memory there is: compressed images are small beside
    /// what they decode to (their decoded size is checked before decoding), and a pipe or a
    /// device may never end.
    pub(crate) fn read_all(
        self,
        path: &Path,
        refuse: &dyn Fn(&str) -> HeatlabError,
    ) -> Result<Vec<u8>> {
        ensure_host_memory(
            &format!("{} image file", path.display()),
            usize::try_from(self.length).unwrap_or(usize::MAX),
        )?;
        let limit = crate::memory::host_available_bytes().map_or(u64::MAX, |b| b as u64);
        read_to_end_bounded(self.reader, limit).map_err(|e| match e {
            BoundedReadError::Io(e) => HeatlabError::io("reading", path, e),
            BoundedReadError::Longer(limit) => refuse(&format!(
                "is longer than the {} MiB of memory there is",
                limit >> 20
            )),
        })
    }
}

/// What to say about a file that is neither an array nor an image, naming what its name claims.
fn not_recognised(path: &Path) -> String {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    match extension.as_deref() {
        Some("png") => {
            "is named .png but is not a PNG image (its first bytes are not PNG's)".into()
        }
        Some("jpg" | "jpeg") => {
            "is named .jpg but is not a JPEG image (its first bytes are not JPEG's)".into()
        }
        Some("npy") => {
            "is named .npy but is not a NumPy array (it does not start with \\x93NUMPY); save \
             it with np.save"
                .into()
        }
        _ => "is neither a .npy array nor a PNG or JPEG image".into(),
    }
}

/// A decoder's message on one line: some end with a newline, or hold several lines, where a
/// refusal is one line.
pub(crate) fn one_line(message: &impl fmt::Display) -> String {
    message
        .to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn refuse(path: &Path, why: &str) -> HeatlabError {
    HeatlabError::InvalidInput(format!("cannot import {}: it {why}", path.display()))
}

/// Reads until `buffer` is full or the input ends; returns the bytes read (file headers of
/// imports and saved states).
pub(crate) fn read_up_to(reader: &mut impl Read, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match reader.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Why [`read_to_end_bounded`] stopped.
#[derive(Debug)]
pub enum BoundedReadError {
    /// The input failed.
    Io(std::io::Error),
    /// The input holds more than this many bytes.
    Longer(u64),
}

/// Reads `reader` to its end, refusing more than `limit` bytes: a pipe or a device such as
/// `/dev/zero` reports no length and may never end.
pub fn read_to_end_bounded(
    reader: impl Read,
    limit: u64,
) -> std::result::Result<Vec<u8>, BoundedReadError> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(BoundedReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(BoundedReadError::Longer(limit));
    }
    Ok(bytes)
}

/// The size of a 2-D array or image, checked against heatlab's largest side and the memory
/// there is for `copies` copies of the field (the import's own, or its caller's if more).
pub(crate) fn checked_size(path: &Path, rows: u64, cols: u64, copies: usize) -> Result<GridSize> {
    if rows == 0 || cols == 0 {
        return Err(refuse(
            path,
            &format!("is empty ({rows}x{cols}); a field needs at least one row and one column"),
        ));
    }
    let rows = usize::try_from(rows).unwrap_or(usize::MAX);
    let cols = usize::try_from(cols).unwrap_or(usize::MAX);
    let size =
        GridSize::new(rows, cols).map_err(|e| refuse(path, &format!("is too large: {e}")))?;
    ensure_host_memory(
        &format!("{size} field imported from {}", path.display()),
        size.bytes().saturating_mul(copies),
    )?;
    Ok(size)
}

/// An image's luminance (Rec. 709, from 8- or 16-bit pixels), mapped onto `range`. The top
/// row of the image is the field's first row, as the views draw it.
fn read_image_field(
    bytes: &[u8],
    format: image::ImageFormat,
    path: &Path,
    range: LuminanceRange,
    held_copies: usize,
) -> Result<Grid> {
    let damaged =
        |e: image::ImageError| refuse(path, &format!("is a damaged image: {}", one_line(&e)));
    let reader = image::ImageReader::with_format(std::io::Cursor::new(bytes), format);
    let (width, height) = reader.into_dimensions().map_err(damaged)?;
    // The decoder holds the pixels (up to 16-bit RGBA) and the luminance beside the field.
    checked_size(
        path,
        u64::from(height),
        u64::from(width),
        IMAGE_DECODE_COPIES.max(held_copies),
    )?;
    if format == image::ImageFormat::Jpeg {
        jpeg::check_complete(bytes).map_err(|cut| refuse(path, &cut.to_string()))?;
    }
    let mut reader = image::ImageReader::with_format(std::io::Cursor::new(bytes), format);
    reader.no_limits();
    let image = reader.decode().map_err(damaged)?;
    let luminance = image.to_luma32f();
    drop(image);
    let size = GridSize::new(height as usize, width as usize)?;
    let values = luminance
        .into_raw()
        .into_iter()
        .map(|l| range.map(l.clamp(0.0, 1.0)))
        .collect();
    Grid::from_vec(size, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    /// A version-1 `.npy` file's bytes: `descr` values of `shape`, then `data`.
    pub(super) fn npy(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
        let mut header = format!(
            "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
            if fortran { "True" } else { "False" }
        );
        while (10 + header.len() + 1) % 64 != 0 {
            header.push(' ');
        }
        header.push('\n');
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
        bytes.extend_from_slice(header.as_bytes());
        bytes.extend_from_slice(data);
        bytes
    }

    fn f64s(values: &[f64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn error(path: &Path) -> String {
        import_field(path, LuminanceRange::default())
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn arrays_in_both_orders_and_both_widths() {
        let dir = tempfile::tempdir().unwrap();
        let c = write(
            dir.path(),
            "c.npy",
            &npy("<f8", false, "(2, 3)", &f64s(&[1., 2., 3., 4., 5., 6.])),
        );
        let f = write(
            dir.path(),
            "f.npy",
            &npy("<f8", true, "(2, 3)", &f64s(&[1., 4., 2., 5., 3., 6.])),
        );
        let (c, kind) = import_field(&c, LuminanceRange::default()).unwrap();
        assert_eq!(kind, ImportKind::Npy);
        assert_eq!(c.as_slice(), &[1., 2., 3., 4., 5., 6.]);
        let (f, _) = import_field(&f, LuminanceRange::default()).unwrap();
        assert_eq!(f, c);
        let data: Vec<u8> = [0.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let single = write(dir.path(), "s.npy", &npy("<f4", false, "(1, 2)", &data));
        let (single, _) = import_field(&single, LuminanceRange::default()).unwrap();
        assert_eq!(single.as_slice(), &[0.5, -2.0]);
    }

    #[test]
    fn bad_arrays_are_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let three = write(
            dir.path(),
            "cube.npy",
            &npy("<f4", false, "(2, 2, 2)", &[0u8; 32]),
        );
        assert!(error(&three).contains("3-D array"), "{}", error(&three));
        let ints = write(dir.path(), "i.npy", &npy("<i8", false, "(1, 1)", &[0u8; 8]));
        assert!(
            error(&ints).contains("float32 or float64"),
            "{}",
            error(&ints)
        );
        let cut = write(
            dir.path(),
            "cut.npy",
            &npy("<f8", false, "(2, 3)", &f64s(&[1., 2.])),
        );
        assert!(error(&cut).contains("cut short"), "{}", error(&cut));
        let nan = write(
            dir.path(),
            "nan.npy",
            &npy("<f8", false, "(1, 2)", &f64s(&[1., f64::NAN])),
        );
        assert!(error(&nan).contains("non-finite"), "{}", error(&nan));
        let wide = write(
            dir.path(),
            "wide.npy",
            &npy("<f8", false, "(1, 2)", &f64s(&[1., 1e300])),
        );
        assert!(error(&wide).contains("float32's range"), "{}", error(&wide));
        let huge = write(
            dir.path(),
            "huge.npy",
            &npy("<f4", false, "(200000, 200000)", &[]),
        );
        assert!(error(&huge).contains("too large"), "{}", error(&huge));
        let empty = write(dir.path(), "empty.npy", b"");
        assert!(error(&empty).contains("is empty"), "{}", error(&empty));
        let text = write(dir.path(), "notes.png", b"hello, this is text\n");
        assert!(error(&text).contains("not a PNG image"), "{}", error(&text));
        assert!(
            error(dir.path()).contains("folder"),
            "{}",
            error(dir.path())
        );
    }

    #[test]
    fn images_map_luminance_onto_the_range() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.png");
        // Two pixels wide, one high: black, white.
        crate::export::write_png_rgb(&path, 2, 1, &[0, 0, 0, 255, 255, 255]).unwrap();
        let range: LuminanceRange = "-1, 3".parse().unwrap();
        let (grid, kind) = import_field(&path, range).unwrap();
        assert_eq!(kind, ImportKind::Image);
        assert_eq!(grid.size(), GridSize::new(1, 2).unwrap());
        assert_eq!(grid.as_slice(), &[-1.0, 3.0]);
        assert!("1".parse::<LuminanceRange>().is_err());
        assert!("0,inf".parse::<LuminanceRange>().is_err());
        let mut cut = std::fs::read(&path).unwrap();
        cut.truncate(cut.len() / 2);
        let cut = write(dir.path(), "cut.png", &cut);
        assert!(error(&cut).contains("damaged image"), "{}", error(&cut));
    }
}
