//! The library and its commands against references that need no window: the CPU's methods,
//! the NumPy golden files, the physics and its exact answers, the differential harness, the GPU
//! basics and tutorial kernels, the Kernel lab, and a field split over thread ranks. Tests that need CUDA skip and say so
//! without it; under `HEATLAB_REQUIRE_CUDA=1` a missing GPU is a failure.

#[path = "../common/mod.rs"]
mod common;

mod basics;
mod cpu_methods;
mod golden;
mod lab;
mod physics;
mod physics_validation;
mod split_ranks;
mod tutorial;
mod verify;
