//! The `heatlab` binary as a user runs it (`HEATLAB_BIN` when set, else Cargo's), each test in
//! a temporary folder: runs and their files, saved states, scenarios, videos, bad input, and
//! the outside world failing around it (signals, full disks, pipes, hung encoders).

#[path = "../common/mod.rs"]
mod common;

mod exports;
mod hostile;
mod input;
mod live_folder;
mod messages;
mod one_loop;
mod outside;
#[cfg(feature = "distributed")]
mod ranks;
#[cfg(feature = "distributed")]
mod ranks_files;
mod robust;
mod run;
mod run_options;
mod scenario;
mod scenario_files;
mod state;
mod state_files;
mod streams;
mod unphysical;
mod video;
