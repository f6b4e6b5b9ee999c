//! CUDA against the CPU reference, bit for bit where the kernels promise it: stepping, the
//! generated field, the display's block means, the brush and heat problems. Without CUDA every
//! test skips and says so; under `HEATLAB_REQUIRE_CUDA=1` a missing GPU is a failure. Run with
//! `--test-threads 1` on the GPU machine (see `benches/gpu.sh tests`).

#[path = "../common/mod.rs"]
mod common;

mod bands;
mod brush;
mod display;
mod field;
mod large;
mod materials;
mod solver;
mod tiled;
mod vs_cpu;
