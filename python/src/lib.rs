//! heatlab from Python: the extension module `heatlab._heatlab`, built by maturin, behind the
//! package `heatlab` (`python/heatlab/`).
//!
//! A [`simulation::PySimulation`] owns an engine [`heatlab_engine::sim::Simulation`] and steps
//! it through the engine's one run loop, with the GIL released; its temperature is a NumPy
//! array on the CPU and a zero-copy [`device_array::DeviceArray`] (DLPack and the CUDA Array
//! Interface) on the GPU.

mod arrays;
mod device_array;
mod errors;
mod running;
mod simulation;
mod values;

use pyo3::prelude::*;

use heatlab_engine::field::{generate_jagged, DEFAULT_SEED};

/// The notebook's jagged field as a new float32 NumPy array of shape (rows, cols): white noise
/// from `numpy.random.default_rng(seed)`, filtered by `radius ** exponent` in Fourier space,
/// cut off beyond `cutoff * rows` from the centre and zero below the `percentile`-th
/// percentile, bit for bit the seed notebook's NumPy recipe with its FFT in float64 (as NumPy 1
/// ran it; NumPy 2 transforms float32 noise in float32, one rounding away). Computed on the
/// CPU (the reference) with the GIL released.
#[pyfunction]
#[pyo3(signature = (rows, cols, *, seed = DEFAULT_SEED, exponent = -1.7, cutoff = 0.45, percentile = 70.0))]
fn generate_field<'py>(
    py: Python<'py>,
    rows: i64,
    cols: i64,
    seed: u64,
    exponent: f64,
    cutoff: f64,
    percentile: f64,
) -> PyResult<Bound<'py, numpy::PyArray2<f32>>> {
    let params = simulation::jagged_params((rows, cols), seed, exponent, cutoff, percentile)?;
    let field = py
        .detach(|| generate_jagged(&params, &|_| {}))
        .map_err(errors::to_python)?;
    arrays::to_numpy(py, field)
}

/// The module: `Simulation`, `DeviceArray`, `generate_field` and `SimulationHalted`.
#[pymodule]
fn _heatlab(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<simulation::PySimulation>()?;
    module.add_class::<device_array::DeviceArray>()?;
    module.add_function(wrap_pyfunction!(generate_field, module)?)?;
    module.add(
        "SimulationHalted",
        module.py().get_type::<errors::SimulationHalted>(),
    )?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
