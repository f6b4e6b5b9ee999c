//! The bottom of heatlab: the field's shape ([`Grid`], [`GridSize`]) and the small types every
//! layer above shares: the [`Boundary`] condition, colour [`ValueRange`]s and how they are chosen
//! ([`RangeMode`]), and NumPy's percentile. Nothing here imports another heatlab module but
//! `error`, so every layer may use it.

pub mod boundary;
pub mod percentile;
pub mod range;

pub use boundary::Boundary;
pub use range::{RangeMode, ValueRange};

use std::fmt;
use std::str::FromStr;

use crate::error::HeatlabError;

/// The largest side length heatlab accepts (a 131072² field is 64 GiB of `f32`: it runs split
/// over the GPUs of one host; one GPU holds up to about 65536 x 131072).
pub const MAX_SIDE: usize = 131_072;

/// Whole rows of a field: `count` rows from row `first`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RowSpan {
    /// The first row.
    pub first: usize,
    /// How many rows.
    pub count: usize,
}

impl RowSpan {
    /// Part `index` of `rows` rows split into `parts` spans in order, the first
    /// `rows % parts` of them one row longer (how a field is split over ranks).
    pub fn part_of(rows: usize, parts: usize, index: usize) -> Self {
        let parts = parts.max(1);
        let (base, longer) = (rows / parts, rows % parts);
        Self {
            first: index * base + index.min(longer),
            count: base + usize::from(index < longer),
        }
    }

    /// The span's cells in a row-major field of `cols` columns.
    pub fn cells(&self, cols: usize) -> std::ops::Range<usize> {
        self.first * cols..(self.first + self.count) * cols
    }
}

/// Rows and columns of a field. Parsed from `N` (square) or `ROWSxCOLS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct GridSize {
    /// Number of rows (the first NumPy axis).
    pub rows: usize,
    /// Number of columns (the second NumPy axis, contiguous in memory).
    pub cols: usize,
}

impl GridSize {
    /// A size, checked to be non-empty and within [`MAX_SIDE`].
    pub fn new(rows: usize, cols: usize) -> Result<Self, HeatlabError> {
        if rows == 0 || cols == 0 {
            return Err(HeatlabError::InvalidInput(format!(
                "field size must be at least 1x1, got {rows}x{cols}"
            )));
        }
        if rows > MAX_SIDE || cols > MAX_SIDE {
            return Err(HeatlabError::InvalidInput(format!(
                "field size {rows}x{cols} exceeds the largest supported side of {MAX_SIDE}"
            )));
        }
        Ok(Self { rows, cols })
    }

    /// A square size.
    pub fn square(n: usize) -> Result<Self, HeatlabError> {
        Self::new(n, n)
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.rows * self.cols
    }

    /// Bytes of one `f32` copy of the field.
    pub fn bytes(&self) -> usize {
        self.cells() * std::mem::size_of::<f32>()
    }
}

impl fmt::Display for GridSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.rows, self.cols)
    }
}

impl FromStr for GridSize {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parse_side = |side: &str| {
            side.trim().parse::<usize>().map_err(|_| {
                HeatlabError::InvalidInput(format!(
                    "field size '{text}' is not N or ROWSxCOLS with positive whole numbers"
                ))
            })
        };
        let lower = text.trim().to_ascii_lowercase();
        match lower.split_once('x') {
            Some((rows, cols)) => Self::new(parse_side(rows)?, parse_side(cols)?),
            None => Self::square(parse_side(&lower)?),
        }
    }
}

/// A field of `f32` values in row-major (C) order, as NumPy stores a `(rows, cols)` array.
#[derive(Clone, PartialEq)]
pub struct Grid {
    size: GridSize,
    data: Vec<f32>,
}

impl fmt::Debug for Grid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Grid({})", self.size)
    }
}

impl Grid {
    /// A field of zeros.
    pub fn zeros(size: GridSize) -> Self {
        Self {
            size,
            data: vec![0.0; size.cells()],
        }
    }

    /// A field of zeros in `storage`, whose allocation is reused when it is large enough (the
    /// values of a picture no longer shown, say).
    pub fn zeros_in(size: GridSize, mut storage: Vec<f32>) -> Self {
        storage.clear();
        storage.resize(size.cells(), 0.0);
        Self {
            size,
            data: storage,
        }
    }

    /// A field of zeros, or [`HeatlabError::OutOfMemory`] when the allocator refuses it
    /// (where [`Grid::zeros`] would abort the process).
    pub fn try_zeros(size: GridSize) -> Result<Self, HeatlabError> {
        let data = crate::memory::try_filled_vec(&format!("{size} field"), size.cells(), 0.0)?;
        Ok(Self { size, data })
    }

    /// A field whose value at (row, column) is `value(row, col)`.
    pub fn from_fn(size: GridSize, value: impl Fn(usize, usize) -> f32) -> Self {
        let cols = size.cols;
        let data = (0..size.cells())
            .map(|i| value(i / cols, i % cols))
            .collect();
        Self { size, data }
    }

    /// Wraps row-major data; its length must be `rows * cols`.
    pub fn from_vec(size: GridSize, data: Vec<f32>) -> Result<Self, HeatlabError> {
        if data.len() != size.cells() {
            return Err(HeatlabError::Internal(format!(
                "{} values do not fill a {size} field ({} cells)",
                data.len(),
                size.cells()
            )));
        }
        Ok(Self { size, data })
    }

    /// The field's size.
    pub fn size(&self) -> GridSize {
        self.size
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.size.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> usize {
        self.size.cols
    }

    /// The values, row-major.
    pub fn as_slice(&self) -> &[f32] {
        &self.data
    }

    /// The values, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [f32] {
        &mut self.data
    }

    /// The value at `(row, col)`.
    pub fn get(&self, row: usize, col: usize) -> f32 {
        self.data[row * self.size.cols + col]
    }

    /// The first index whose value is NaN or infinite, if any.
    pub fn first_non_finite(&self) -> Option<(usize, usize)> {
        self.data
            .iter()
            .position(|v| !v.is_finite())
            .map(|i| (i / self.size.cols, i % self.size.cols))
    }

    /// How many values are NaN or infinite.
    pub fn non_finite_count(&self) -> usize {
        self.data.iter().filter(|v| !v.is_finite()).count()
    }

    /// Exchanges the values with `other`, which must hold as many; used to flip double buffers.
    pub fn swap_values(&mut self, other: &mut Vec<f32>) {
        debug_assert_eq!(self.data.len(), other.len());
        std::mem::swap(&mut self.data, other);
    }

    /// Takes the values out.
    pub fn into_vec(self) -> Vec<f32> {
        self.data
    }
}
