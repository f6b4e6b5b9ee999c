//! heatlab, the app: the desktop window (`ui`), what it remembers (`settings`) and the command
//! line (`cli`), the front ends of the engine crate (`heatlab_engine`, in `engine/`), which
//! holds everything that computes, runs and writes files.
//!
//! `main.rs` only parses arguments and starts the GUI or a headless command.

pub mod cli;
pub mod settings;
pub mod ui;
