//! What the stencil sees outside the grid.

use std::fmt;

use crate::error::HeatlabError;

/// The boundary condition: the value of the ghost cells just outside the grid.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Boundary {
    /// Cells outside are 0 (the tutorial's kernel): heat leaks out at the edges.
    #[default]
    Dirichlet,
    /// Insulated: a cell outside equals the edge cell beside it, so total heat is conserved.
    Neumann,
    /// The grid wraps around (a torus); total heat is conserved.
    Periodic,
}

impl Boundary {
    /// Every boundary, in the order a selector lists them, which is also the order of their
    /// kernel indices (checked when compiling, below).
    pub const ALL: [Self; 3] = [Self::Dirichlet, Self::Neumann, Self::Periodic];

    /// The index the CUDA kernels use for this boundary (their `BC_*` constants, in
    /// `kernels/stencil.cu`; a user kernel's `boundary` argument); its place in [`Self::ALL`].
    pub const fn kernel_index(self) -> usize {
        match self {
            Self::Dirichlet => 0,
            Self::Neumann => 1,
            Self::Periodic => 2,
        }
    }

    /// Its name: what users type and files store (serde's lowercase variant name), and the
    /// suffix of its CUDA kernels (`jacobi_step_<name>`, from `HEATLAB_FOR_EACH_BOUNDARY` in
    /// `kernels/stencil.cu`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Dirichlet => "dirichlet",
            Self::Neumann => "neumann",
            Self::Periodic => "periodic",
        }
    }

    /// A short explanation for people.
    pub fn description(self) -> &'static str {
        match self {
            Self::Dirichlet => "cells outside the grid are 0 (heat leaks out)",
            Self::Neumann => "insulated edges (total heat conserved)",
            Self::Periodic => "the grid wraps around (total heat conserved)",
        }
    }
}

impl fmt::Display for Boundary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Boundary {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        crate::choice::parse_choice(&Self::ALL, text, "boundary")
    }
}

// `ALL[b.kernel_index()] == b` for every boundary listed: tables indexed by the kernel index
// (`compute::cuda::PerBoundary`) hold the boundaries in the order of `ALL`.
const _: () = {
    let mut index = 0;
    while index < Boundary::ALL.len() {
        assert!(
            Boundary::ALL[index].kernel_index() == index,
            "Boundary::ALL is not in the order of kernel_index"
        );
        index += 1;
    }
};

#[cfg(test)]
mod tests;
