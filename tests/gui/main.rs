//! The desktop app driven headlessly by egui_kittest, as a person would (widgets found by their
//! labels, pointer and keys on the field): no display or renderer is needed, and the tests that
//! need CUDA skip and say so without it. `measure` holds the frame-loop measurements, ignored
//! unless asked for with `--ignored` on the machine to measure.

#[path = "../common/mod.rs"]
mod common;

mod app;
mod basics;
mod field;
mod layout;
mod measure;
mod paint;
mod problem;
mod render;
mod robust;
mod state;
mod tutorial;
