//! Editing the field on the device (`kernels/brush.cu`): a brush dab launched over its bounding
//! box only, and gathering or setting a few cells by index, so that painting, probes and undo
//! never move the whole field across the bus.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::{driver_error, CudaBackend, CudaDevice};
use crate::compute::brush::{check_cells, BrushStamp};
use crate::error::{HeatlabError, Result};

/// The edit kernels' source, embedded so that the binary needs no files beside it.
pub const BRUSH_SOURCE: &str = include_str!("../../../../kernels/brush.cu");

/// Threads per block of the gather and scatter kernels.
const CELLS_PER_BLOCK: u32 = 256;

/// The kernels of `kernels/brush.cu`.
pub(super) struct EditKernels {
    brush_stamp: CudaFunction,
    gather_cells: CudaFunction,
    scatter_cells: CudaFunction,
}

impl EditKernels {
    /// Compiles (once per process) and loads the edit kernels.
    pub(super) fn load(device: &CudaDevice) -> Result<Self> {
        let module = device.load_kernels("brush.cu", BRUSH_SOURCE)?;
        Ok(Self {
            brush_stamp: device.function(&module, "brush_stamp")?,
            gather_cells: device.function(&module, "gather_cells")?,
            scatter_cells: device.function(&module, "scatter_cells")?,
        })
    }
}

/// A launch of one thread per cell for `n` cells.
fn per_cell(n: usize) -> Result<(LaunchConfig, i32)> {
    let count =
        i32::try_from(n).map_err(|_| HeatlabError::Unsupported(format!("{n} cells at once")))?;
    let config = LaunchConfig {
        grid_dim: ((n as u32).div_ceil(CELLS_PER_BLOCK).max(1), 1, 1),
        block_dim: (CELLS_PER_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    Ok((config, count))
}

fn int(value: usize) -> Result<i32> {
    i32::try_from(value).map_err(|_| HeatlabError::Unsupported(format!("{value} is too large")))
}

impl CudaBackend {
    fn stream_arc(&self) -> Arc<CudaStream> {
        self.device.stream().clone()
    }

    /// One brush dab, launched over the stamp's bounding box only.
    pub(super) fn stamp_on_device(&mut self, stamp: &BrushStamp) -> Result<()> {
        stamp.check()?;
        // A step computed ahead for the Laplacian view started from the field before the dab.
        self.lookahead = None;
        let stream = self.stream_arc();
        let function = self.edit_kernels.brush_stamp.clone();
        let buffers = self.buffers()?;
        let Some(rect) = stamp.bounds(buffers.size) else {
            return Ok(());
        };
        let cols = int(buffers.size.cols)?;
        let (row0, col0) = (int(rect.row)?, int(rect.col)?);
        let (box_rows, box_cols) = (int(rect.rows)?, int(rect.cols)?);
        let (r2, inv_r2) = stamp.radius_terms();
        let edge = stamp.edge.code();
        let config = LaunchConfig {
            grid_dim: (
                (rect.cols as u32).div_ceil(32),
                (rect.rows as u32).div_ceil(8),
                1,
            ),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut launch = stream.launch_builder(&function);
        launch
            .arg(&mut buffers.current)
            .arg(&cols)
            .arg(&row0)
            .arg(&col0)
            .arg(&box_rows)
            .arg(&box_cols)
            .arg(&stamp.row)
            .arg(&stamp.col)
            .arg(&r2)
            .arg(&inv_r2)
            .arg(&stamp.amount)
            .arg(&edge);
        // SAFETY: brush_stamp(float* field, int cols, int row0, int col0, int box_rows,
        // int box_cols, float centre_row, float centre_col, float r2, float inv_r2, float amount,
        // int edge): `current` holds rows*cols floats and the box (from `bounds`) lies inside
        // the field; threads outside box_rows x box_cols return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching brush_stamp"))?;
        Ok(())
    }

    /// The values of `cells`, copying only them to the host.
    pub(super) fn gather_on_device(&mut self, cells: &[u32]) -> Result<Vec<f32>> {
        let stream = self.stream_arc();
        let function = self.edit_kernels.gather_cells.clone();
        let buffers = self.buffers()?;
        check_cells(buffers.size, cells, None)?;
        if cells.is_empty() {
            return Ok(Vec::new());
        }
        let (config, n) = per_cell(cells.len())?;
        let cells_dev = stream
            .clone_htod(cells)
            .map_err(driver_error("uploading probe cells"))?;
        let mut out = stream
            .alloc_zeros::<f32>(cells.len())
            .map_err(driver_error("allocating probe values"))?;
        let mut launch = stream.launch_builder(&function);
        launch
            .arg(&buffers.current)
            .arg(&cells_dev)
            .arg(&mut out)
            .arg(&n);
        // SAFETY: gather_cells(const float* field, const unsigned int* cells, float* out, int n):
        // cells and out hold n elements, and every index was checked to be below rows*cols, the
        // length of `current`; threads with i >= n return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching gather_cells"))?;
        let values = stream
            .clone_dtoh(&out)
            .map_err(driver_error("downloading probe values"))?;
        stream
            .synchronize()
            .map_err(driver_error("downloading probe values"))?;
        Ok(values)
    }

    /// Sets `cells` to `values`, copying only them to the device.
    pub(super) fn scatter_on_device(&mut self, cells: &[u32], values: &[f32]) -> Result<()> {
        // A step computed ahead for the Laplacian view started from the field before the edit.
        self.lookahead = None;
        let stream = self.stream_arc();
        let function = self.edit_kernels.scatter_cells.clone();
        let buffers = self.buffers()?;
        check_cells(buffers.size, cells, Some(values))?;
        if cells.is_empty() {
            return Ok(());
        }
        let (config, n) = per_cell(cells.len())?;
        let cells_dev = stream
            .clone_htod(cells)
            .map_err(driver_error("uploading cells to set"))?;
        let values_dev = stream
            .clone_htod(values)
            .map_err(driver_error("uploading cell values"))?;
        let mut launch = stream.launch_builder(&function);
        launch
            .arg(&mut buffers.current)
            .arg(&cells_dev)
            .arg(&values_dev)
            .arg(&n);
        // SAFETY: scatter_cells(float* field, const unsigned int* cells, const float* values,
        // int n): cells and values hold n elements, every index was checked to be below
        // rows*cols, the length of `current`; threads with i >= n return.
        unsafe { launch.launch(config) }.map_err(driver_error("launching scatter_cells"))?;
        // The host buffers the copies read from are freed when this returns.
        stream
            .synchronize()
            .map_err(driver_error("setting cells on the GPU"))?;
        Ok(())
    }

    /// Rows of the held field into `values`: one copy of the rows' contiguous range.
    pub(super) fn read_rows_on_device(
        &mut self,
        first_row: usize,
        values: &mut [f32],
    ) -> Result<()> {
        let stream = self.stream_arc();
        let buffers = self.buffers()?;
        let range = super::super::brush::row_range(buffers.size, first_row, values.len())?;
        stream
            .memcpy_dtoh(&buffers.current.slice(range), values)
            .map_err(driver_error("copying rows to the host"))?;
        stream
            .synchronize()
            .map_err(driver_error("copying rows to the host"))
    }

    /// Overwrites rows of the held field with `values`: one copy into the rows' range.
    pub(super) fn write_rows_on_device(&mut self, first_row: usize, values: &[f32]) -> Result<()> {
        // A step computed ahead for the Laplacian view started from the field before the edit.
        self.lookahead = None;
        let stream = self.stream_arc();
        let buffers = self.buffers()?;
        let range = super::super::brush::row_range(buffers.size, first_row, values.len())?;
        stream
            .memcpy_htod(values, &mut buffers.current.slice_mut(range))
            .map_err(driver_error("copying rows to the GPU"))?;
        // The host rows the copy reads belong to the caller, who may change them next.
        stream
            .synchronize()
            .map_err(driver_error("copying rows to the GPU"))
    }

    /// The stream and the held field's buffer, for halos exchanged where the field is (NCCL, in
    /// `distributed`): what is queued on the stream comes before the next step.
    pub fn field_on_device(&mut self) -> Result<(Arc<CudaStream>, &mut CudaSlice<f32>)> {
        self.settle()?;
        // A step computed ahead for the Laplacian view started from the field before the edit.
        self.lookahead = None;
        let stream = self.stream_arc();
        let buffers = self.buffers()?;
        Ok((stream, &mut buffers.current))
    }
}
