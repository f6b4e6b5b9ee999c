//! NumPy `.npy` arrays: float32, shape (rows, cols), C order.

use std::path::Path;

use npyz::WriterBuilder;

use super::atomic::write_atomically;
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

/// Writes `grid` as a `.npy` file that `np.load` reads back as float32 `(rows, cols)`.
pub fn write_npy(path: &Path, grid: &Grid) -> Result<()> {
    write_f32_array(
        path,
        &[grid.rows() as u64, grid.cols() as u64],
        grid.as_slice(),
    )
}

/// Values converted to bytes and written at once.
const WRITE_CHUNK_VALUES: usize = 1 << 20;

/// Writes any float32 array with the given shape (C order).
pub fn write_f32_array(path: &Path, shape: &[u64], values: &[f32]) -> Result<()> {
    write_atomically(path, |writer| {
        let writer = npyz::WriteOptions::<f32>::new()
            .default_dtype()
            .shape(shape)
            .writer(writer)
            .write_header_only()?;
        // The values a chunk at a time (a value at a time through npyz wrote about 100 MB/s).
        let mut bytes = Vec::with_capacity(WRITE_CHUNK_VALUES * 4);
        for chunk in values.chunks(WRITE_CHUNK_VALUES) {
            bytes.clear();
            bytes.extend(chunk.iter().flat_map(|value| value.to_le_bytes()));
            writer.write_all(&bytes)?;
        }
        Ok(())
    })
}

/// Reads a 2-D float32 `.npy` array into a [`Grid`].
pub fn read_npy(bytes: &[u8]) -> Result<Grid> {
    let bad =
        |message: String| HeatlabError::InvalidInput(format!("not a 2-D float32 .npy: {message}"));
    let npy = npyz::NpyFile::new(bytes).map_err(|e| bad(e.to_string()))?;
    let shape = npy.shape().to_vec();
    if shape.len() != 2 || npy.order() != npyz::Order::C {
        return Err(bad(format!("shape {shape:?}")));
    }
    let values: Vec<f32> = npy.into_vec().map_err(|e| bad(e.to_string()))?;
    Grid::from_vec(GridSize::new(shape[0] as usize, shape[1] as usize)?, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.npy");
        let grid = Grid::from_vec(
            GridSize::new(2, 3).unwrap(),
            vec![1.0, 2.0, 3.0, 4.0, 5.0, -6.5],
        )
        .unwrap();
        write_npy(&path, &grid).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.starts_with(b"\x93NUMPY"));
        assert_eq!(read_npy(&bytes).unwrap(), grid);
    }
}
