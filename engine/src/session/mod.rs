//! The engine the front ends drive, with no window in it: the diffusion session (a simulation
//! on its own thread, its schedule and pacing, the frame pipeline, recording, exports, opening
//! and saving files, kernel measurement), the tutorial kernels' thread, the Kernel lab's worker,
//! and the one worker abstraction they all run on. The app (`ui`) sends commands and draws what
//! comes back; nothing here knows about windows or widgets.

pub mod basics;
pub mod diffusion;
pub mod lab;
pub mod notice;
pub mod pacing;
pub mod recording;
pub mod run;
pub mod start;
pub mod tutorial;
pub mod worker;

pub use notice::{Level, Notice};
