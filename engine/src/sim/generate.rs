//! Generating the jagged field where the simulation runs: on the GPU (cuFFT) when the backend
//! can, otherwise on the CPU (the reference), saying why. Every caller (the app, `heatlab
//! run`, the benchmarks) goes through [`generate_on`].

use std::fmt;
use std::time::{Duration, Instant};

use crate::compute::{Backend, DeviceFieldUnavailable};
use crate::error::Result;
use crate::field::{generate_jagged, JaggedParams};
use crate::grid::Grid;

/// Where a field was generated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GenerationPlace {
    /// On the GPU, with cuFFT.
    Gpu,
    /// On the CPU; with the reason when the backend is a GPU that could not do it.
    Cpu {
        /// Why not on the GPU, when a GPU backend was asked (`None` on the CPU backend).
        gpu_fallback: Option<DeviceFieldUnavailable>,
    },
}

impl fmt::Display for GenerationPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Gpu => f.write_str("GPU (cuFFT)"),
            Self::Cpu { .. } => f.write_str("CPU"),
        }
    }
}

/// How one generation went.
#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    /// Where it ran.
    pub place: GenerationPlace,
    /// Wall time from the request until the field was held by the backend and on the host.
    pub wall: Duration,
    /// The GPU's own time for the generation (events), when it ran there.
    pub device: Option<Duration>,
}

impl Generation {
    /// The reason to show when the GPU could not generate, if any.
    pub fn fallback(&self) -> Option<&DeviceFieldUnavailable> {
        match &self.place {
            GenerationPlace::Cpu { gpu_fallback } => gpu_fallback.as_ref(),
            GenerationPlace::Gpu => None,
        }
    }
}

/// Generates the jagged field of `params` and leaves it held by `backend`; returns it (for the
/// host: Reset, saving, exports) and how the generation went. `progress` hears of the CPU's
/// stages (the GPU's take milliseconds).
pub fn generate_on(
    backend: &mut dyn Backend,
    params: &JaggedParams,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(Grid, Generation)> {
    let started = Instant::now();
    let (held, mut generation) = generate_held(backend, params, progress)?;
    let grid = match held {
        Some(grid) => grid,
        None => {
            let grid = backend.download()?;
            generation.wall = started.elapsed();
            grid
        }
    };
    Ok((grid, generation))
}

/// [`generate_on`] without the copy to the host of a field generated on the device: returns
/// the field only when it was generated on the host (`None`: only `backend` holds it, and
/// `wall` ends when it does).
pub fn generate_held(
    backend: &mut dyn Backend,
    params: &JaggedParams,
    progress: &(dyn Fn(f32) + Sync),
) -> Result<(Option<Grid>, Generation)> {
    params.validate()?;
    let started = Instant::now();
    let gpu_fallback = match backend.generate_jagged(params) {
        Ok(device) => {
            progress(1.0);
            let generation = Generation {
                place: GenerationPlace::Gpu,
                wall: started.elapsed(),
                device: Some(device),
            };
            return Ok((None, generation));
        }
        Err(DeviceFieldUnavailable::CpuBackend) => None,
        Err(why) => {
            log::info!("the field is generated on the CPU: {why}");
            Some(why)
        }
    };
    let grid = generate_jagged(params, progress)?;
    backend.upload(&grid)?;
    let generation = Generation {
        place: GenerationPlace::Cpu { gpu_fallback },
        wall: started.elapsed(),
        device: None,
    };
    Ok((Some(grid), generation))
}
