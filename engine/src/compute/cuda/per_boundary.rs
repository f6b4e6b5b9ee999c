//! Tables with one entry per uniform boundary, and the per-boundary kernels loaded into them.
//!
//! Every per-boundary kernel is made once for each boundary by `HEATLAB_FOR_EACH_BOUNDARY`
//! (`kernels/stencil.cu`) and named `<base>_<boundary>`, the boundary's [`Boundary::name`];
//! [`BoundaryKernels::load`] looks the name up for every boundary of [`Boundary::ALL`], so a new
//! boundary needs no change here or where the tables are used.

use std::ops::Index;
use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaModule};

use super::CudaDevice;
use crate::error::{HeatlabError, Result};
use crate::grid::Boundary;

/// One `T` for each boundary, read as `table[boundary]`. Held in the order of
/// [`Boundary::ALL`], which is the order of [`Boundary::kernel_index`] (checked when compiling).
#[derive(Debug, Clone)]
pub(super) struct PerBoundary<T>([T; Boundary::ALL.len()]);

impl<T> PerBoundary<T> {
    /// The table of `make(boundary)` for every boundary, or the first error.
    pub(super) fn try_new(make: impl FnMut(Boundary) -> Result<T>) -> Result<Self> {
        let values: Vec<T> = Boundary::ALL.into_iter().map(make).collect::<Result<_>>()?;
        let values = values.try_into().map_err(|values: Vec<T>| {
            HeatlabError::Internal(format!(
                "{} values for {} boundaries",
                values.len(),
                Boundary::ALL.len()
            ))
        })?;
        Ok(Self(values))
    }

    /// The entry of `boundary`.
    pub(super) fn get(&self, boundary: Boundary) -> &T {
        &self.0[boundary.kernel_index()]
    }
}

impl<T> Index<Boundary> for PerBoundary<T> {
    type Output = T;

    fn index(&self, boundary: Boundary) -> &T {
        self.get(boundary)
    }
}

/// A kernel compiled once per boundary: `<base>_<boundary>` for every boundary.
pub(super) type BoundaryKernels = PerBoundary<CudaFunction>;

impl BoundaryKernels {
    /// Looks up `<base>_<boundary>` in `module` for every boundary; an error names the first
    /// kernel missing.
    pub(super) fn load(device: &CudaDevice, module: &Arc<CudaModule>, base: &str) -> Result<Self> {
        Self::try_new(|boundary| device.function(module, &kernel_name(base, boundary)))
    }
}

/// The `extern "C"` name of the kernel of `base` for `boundary`.
pub(super) fn kernel_name(base: &str, boundary: Boundary) -> String {
    format!("{base}_{}", boundary.name())
}

/// The bases of the per-boundary kernels the backend loads: each kernel is
/// `<base>_<boundary>` ([`kernel_name`]). A test checks that the sources define every one.
pub(super) mod base {
    /// `shared_step`: the shared-memory tile (kernels/diffusion.cu).
    pub const SHARED_STEP: &str = "shared_step";
    /// `jacobi_step`: one Jacobi step, rows per thread.
    pub const JACOBI_STEP: &str = "jacobi_step";
    /// float4 loads, 8 rows per thread.
    pub const JACOBI_VEC4_ROWS8: &str = "jacobi_step_vec4r8";
    /// float4 loads, 16 rows per thread.
    pub const JACOBI_VEC4_ROWS16: &str = "jacobi_step_vec4r16";
    /// Temporal blocking, 4 steps a launch.
    pub const TEMPORAL_K4: &str = "jacobi_temporal_k4w4";
    /// Temporal blocking, 8 steps a launch.
    pub const TEMPORAL_K8: &str = "jacobi_temporal_k8w4";
    /// Temporal blocking, 8 steps, four blocks per SM, loads one row ahead.
    pub const TEMPORAL_PACKED1_K8: &str = "jacobi_temporal_packed1_k8w4";
    /// Temporal blocking, 8 steps, four blocks per SM, loads two rows ahead.
    pub const TEMPORAL_PACKED2_K8: &str = "jacobi_temporal_packed2_k8w4";
    /// The field resident on chip, exchanging every 4 steps (kernels/resident.cu).
    pub const RESIDENT_H4: &str = "jacobi_resident_h4";
    /// The field resident on chip, exchanging every 8 steps.
    pub const RESIDENT_H8: &str = "jacobi_resident_h8";
    /// The Laplacian of a field, one thread per cell.
    pub const LAPLACIAN: &str = "laplacian";
    /// The block means of the Laplacian (kernels/display.cu).
    pub const BLOCK_MEAN_LAPLACIAN: &str = "block_mean_laplacian";

    /// Every base loaded from `DIFFUSION_SOURCE` (stencil.cu, diffusion.cu, resident.cu).
    #[cfg(test)]
    pub const IN_DIFFUSION: [&str; 11] = [
        SHARED_STEP,
        JACOBI_STEP,
        JACOBI_VEC4_ROWS8,
        JACOBI_VEC4_ROWS16,
        TEMPORAL_K4,
        TEMPORAL_K8,
        TEMPORAL_PACKED1_K8,
        TEMPORAL_PACKED2_K8,
        RESIDENT_H4,
        RESIDENT_H8,
        LAPLACIAN,
    ];
    /// Every base loaded from `DISPLAY_SOURCE` (stencil.cu, display.cu).
    #[cfg(test)]
    pub const IN_DISPLAY: [&str; 1] = [BLOCK_MEAN_LAPLACIAN];
}

#[cfg(test)]
mod preprocess;
#[cfg(test)]
mod tests;
