//! The Kernel lab's validation of user kernels (issue 9): a kernel a user wrote is run in a
//! child process (`heatlab lab-check`, [`check`]) on small fields and on the current field
//! against the CPU reference, and the parent ([`child`]) reads its verdict line by line with
//! time limits, killing a child that faults the GPU or never returns. The app's own CUDA
//! context never runs a kernel before this verdict says it is bit-identical.
//!
//! Sits beside `verify`: it uses `compute` (the CPU reference, the CUDA device), `field` (the
//! small fields' values) and `export` (the field handed to the child).

pub mod check;
pub mod child;
pub mod verdict;

pub use child::{validate_in_child, ChildLimits, ValidationJob};
pub use verdict::{CaseOutcome, CaseResult, ChildEnding, ChildLine, Verdict};
