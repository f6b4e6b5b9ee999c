//! Random but reproducible sequences of what the app and the CLI do to a backend.
//!
//! A sequence is drawn from its own seed, so a divergence is reproduced by that seed alone.
//! Sizes are chosen around the GPU kernels' tile and strip edges (and 1xN, Nx1, primes, odd
//! widths), step counts span single steps to runs long enough to replay CUDA graphs, and
//! coefficients, boundaries, kernels and graph use change between calls as a user changes them.
//! Heat problems (materials, heaters, held cells, every side condition) are set, edited and
//! dropped between those operations, drawn from a generator of their own, so that the uniform
//! operations of a seed are those it always drew.

use std::fmt;

use rand_core::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::compute::cuda::MaterialKernel;
use crate::compute::{
    Boundary, BrushEdge, BrushStamp, CpuMethod, CudaKernel, StepParams, STABLE_COEFF_LIMIT,
};
use crate::grid::{GridSize, RowSpan};
use crate::render::{Colormap, Layer, RangeMode, ValueRange};
use crate::solve::{ImplicitScheme, SolveRequest};

/// Column counts around the edges of the kernels' tiles: 32-wide blocks, 4-wide vectors,
/// 128-column warp strips with 112 or 120 output columns, 512-column vec4 blocks; and primes.
const EDGE_COLS: [usize; 34] = [
    1, 2, 3, 4, 5, 7, 8, 12, 31, 32, 33, 63, 64, 65, 97, 111, 112, 113, 119, 120, 121, 127, 128,
    129, 131, 224, 236, 240, 241, 251, 256, 257, 508, 516,
];
/// Row counts around the segment heights (16, 32, 64, 128 rows per warp) and the 8x4-row blocks.
const EDGE_ROWS: [usize; 22] = [
    1, 2, 3, 5, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 97, 127, 128, 129, 131, 255, 257, 300,
];

/// Where an uploaded field comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldSource {
    /// The tutorial's jagged field with this seed.
    Jagged {
        /// Generator seed.
        seed: u64,
    },
    /// Uniform noise in [-1, 1): every cell different, negative values included.
    Noise {
        /// Generator seed.
        seed: u64,
    },
    /// Zero everywhere but one hot cell: a wrong neighbour shows at once.
    Spike {
        /// Row of the hot cell.
        row: usize,
        /// Column of the hot cell.
        col: usize,
    },
}

/// A stepping method of either backend; `Auto` is the backend's own choice for the size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MethodChoice {
    /// The backend chooses (on CUDA: the fastest exact kernel, timed at upload).
    Auto,
    /// A fixed CPU method.
    Cpu(CpuMethod),
    /// A fixed CUDA kernel.
    Cuda(CudaKernel),
}

impl fmt::Display for MethodChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Cpu(method) => write!(f, "cpu-{method}"),
            Self::Cuda(kernel) => write!(f, "cuda-{kernel}"),
        }
    }
}

/// One thing a user does.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    /// Replace the field (a new size, a new field).
    Upload {
        /// The new size.
        size: GridSize,
        /// Its values.
        source: FieldSource,
    },
    /// Step in several calls, as the app does frame by frame and the CLI chunk by chunk.
    Advance {
        /// Steps of each call.
        chunks: Vec<u64>,
    },
    /// Change the coefficient and the boundary for the following steps.
    SetParams(StepParams),
    /// Step with another method from now on.
    SetMethod(MethodChoice),
    /// Turn CUDA graphs on or off (no effect on the CPU).
    SetGraphs(bool),
    /// Take the Laplacian under the current boundary.
    Laplacian,
    /// Take a colormapped preview.
    Preview {
        /// Field or Laplacian.
        layer: Layer,
        /// Colours.
        colormap: Colormap,
        /// How the colour range is chosen.
        range_mode: RangeMode,
        /// Largest width and height in pixels.
        max_size: (usize, usize),
    },
    /// Copy the field to the host.
    Download,
    /// A new jagged field of the same size (a parameter changed in the app).
    Regenerate {
        /// The new seed.
        seed: u64,
    },
    /// Move the field to a fresh CPU backend, step it there, and move it back.
    SwitchBackend {
        /// Steps taken on the other backend.
        steps_elsewhere: u64,
    },
    /// Dabs of the brush, as a stroke lays them between steps.
    Brush {
        /// The dabs, in order.
        stamps: Vec<BrushStamp>,
    },
    /// Set distinct cells to values (undo and redo of a stroke).
    SetCells {
        /// Row-major indices, distinct.
        cells: Vec<u32>,
        /// A value per cell.
        values: Vec<f32>,
    },
    /// Read a few cells (probes, a line profile) and compare them.
    Gather {
        /// Row-major indices (repeats allowed).
        cells: Vec<u32>,
    },
    /// Step a random heat problem on the current size from now on (see
    /// [`super::problems::random_problem`]).
    SetProblem {
        /// The problem's seed.
        seed: u64,
        /// Whether the energy is booked (compared after every advance).
        book_energy: bool,
        /// The CUDA kernel that steps it (`None`: the backend's choice).
        kernel: Option<MaterialKernel>,
    },
    /// Paint a region of the held problem's map (see [`super::problems::edit_map`]).
    EditMap {
        /// The edit's seed.
        seed: u64,
    },
    /// Switch a heater of the held problem (see [`super::problems::switch_heater`]).
    SwitchHeater {
        /// The switch's seed.
        seed: u64,
    },
    /// Solve the held problem (its thermostats left out) on both sides: its steady state or
    /// one implicit step, the answer becoming the field (see [`crate::solve`]).
    Solve(SolveRequest),
    /// Back to the uniform stencil.
    ClearProblem,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Upload { size, source } => write!(f, "upload {size} ({source:?})"),
            Self::Advance { chunks } => {
                let parts: Vec<String> = chunks.iter().map(u64::to_string).collect();
                write!(
                    f,
                    "advance {} steps in calls of {}",
                    chunks.iter().sum::<u64>(),
                    parts.join("+")
                )
            }
            Self::SetParams(params) => {
                write!(
                    f,
                    "set coeff {} and boundary {}",
                    params.coeff, params.boundary
                )
            }
            Self::SetMethod(method) => write!(f, "set method {method}"),
            Self::SetGraphs(on) => write!(f, "CUDA graphs {}", if *on { "on" } else { "off" }),
            Self::Laplacian => f.write_str("Laplacian"),
            Self::Preview {
                layer,
                colormap,
                range_mode,
                max_size,
            } => write!(
                f,
                "preview of the {layer:?} ({colormap}, {range_mode:?}, at most {}x{})",
                max_size.0, max_size.1
            ),
            Self::Download => f.write_str("download"),
            Self::Regenerate { seed } => write!(f, "regenerate with seed {seed}"),
            Self::SwitchBackend { steps_elsewhere } => write!(
                f,
                "switch to a CPU backend, step {steps_elsewhere} there, switch back"
            ),
            Self::Brush { stamps } => {
                let parts: Vec<String> = stamps
                    .iter()
                    .map(|s| {
                        format!(
                            "({}, {}) r {} amount {} {}",
                            s.row, s.col, s.radius, s.amount, s.edge
                        )
                    })
                    .collect();
                write!(f, "brush dabs {}", parts.join(", "))
            }
            Self::SetCells { cells, .. } => write!(f, "set {} cells", cells.len()),
            Self::Gather { cells } => write!(f, "gather {} cells", cells.len()),
            Self::SetProblem {
                seed,
                book_energy,
                kernel,
            } => {
                let kernel = kernel.map_or("auto".to_string(), |k| k.to_string());
                let energy = if *book_energy { ", energy booked" } else { "" };
                write!(f, "set heat problem {seed} ({kernel}{energy})")
            }
            Self::EditMap { seed } => write!(f, "edit the material map ({seed})"),
            Self::SwitchHeater { seed } => write!(f, "switch a heater ({seed})"),
            Self::Solve(SolveRequest::Steady) => f.write_str("solve the steady state"),
            Self::Solve(SolveRequest::Implicit { scheme, dt }) => {
                write!(f, "one implicit step ({scheme}) of {dt} s")
            }
            Self::ClearProblem => f.write_str("back to the uniform problem"),
        }
    }
}

/// Which methods a sequence switches between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodFamily {
    /// The CPU methods (rows, blocked), checked against the plain loop.
    Cpu,
    /// The exact CUDA kernels, checked against the CPU.
    Cuda,
}

/// The CPU methods a sequence may switch to.
pub fn cpu_methods() -> Vec<CpuMethod> {
    let mut methods = vec![CpuMethod::Rows];
    for steps_per_pass in [2, 3, 8] {
        for band_rows in [1, 5, 64] {
            methods.push(CpuMethod::Blocked {
                steps_per_pass,
                band_rows,
            });
        }
    }
    methods
}

/// Every exact CUDA kernel, whatever the size.
pub fn cuda_kernels() -> Vec<CudaKernel> {
    CudaKernel::all_exact()
}

/// The kernels a heat problem may be stepped with on CUDA (`None`: the backend's choice).
fn material_kernels() -> Vec<Option<MaterialKernel>> {
    let mut kernels = vec![
        None,
        Some(MaterialKernel::Scalar),
        Some(MaterialKernel::Vec4),
    ];
    kernels.extend(MaterialKernel::blocked_candidates().into_iter().map(Some));
    kernels
}

/// Draws sequences.
pub struct SequenceGenerator {
    rng: Pcg64,
    /// Draws the heat-problem operations, apart from `rng` so that those stay as they were.
    problem_rng: Pcg64,
    /// Whether a heat problem is held at this point of the sequence.
    problem_held: bool,
    family: MethodFamily,
    max_cells: usize,
    min_rows: usize,
    size: GridSize,
}

impl SequenceGenerator {
    /// A generator for the sequence with `seed`; fields have at most `max_cells` cells.
    pub fn new(seed: u64, family: MethodFamily, max_cells: usize) -> Self {
        Self {
            rng: Pcg64::seed_from_u64(seed),
            problem_rng: Pcg64::seed_from_u64(seed ^ 0x6a09_e667_f3bc_c908),
            problem_held: false,
            family,
            max_cells: max_cells.max(1),
            min_rows: 1,
            size: GridSize { rows: 1, cols: 1 },
        }
    }

    /// Fields of at least `rows` rows (a field split over that many ranks), as the cell
    /// budget allows.
    pub fn with_min_rows(mut self, rows: usize) -> Self {
        self.min_rows = rows.clamp(1, self.max_cells);
        self
    }

    /// A number in `0..n`.
    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A size at a tile edge, a random one, or a thin strip, within the cell budget.
    fn size(&mut self) -> GridSize {
        loop {
            let (rows, cols) = match self.below(10) {
                0 => (1, 1 + self.below(600)),
                1 => (1 + self.below(600), 1),
                2..=5 => (self.pick(&EDGE_ROWS), self.pick(&EDGE_COLS)),
                6 | 7 => (1 + self.below(160), 1 + self.below(160)),
                _ => (1 + self.below(400), 4 * (1 + self.below(130))),
            };
            if rows * cols <= self.max_cells && rows >= self.min_rows {
                return GridSize { rows, cols };
            }
            if rows < self.min_rows && self.min_rows * cols <= self.max_cells {
                return GridSize {
                    rows: self.min_rows,
                    cols,
                };
            }
        }
    }

    /// Steps of one call: single steps, a frame's worth, or a run long enough for graphs
    /// (32 launches; 256 steps of the 8-step temporal kernel).
    fn chunk(&mut self) -> u64 {
        match self.below(20) {
            0..=7 => 1 + self.below(9) as u64,
            8..=14 => 10 + self.below(90) as u64,
            15..=18 => 100 + self.below(300) as u64,
            _ => 256 + self.below(400) as u64,
        }
    }

    fn params(&mut self) -> StepParams {
        let coeff = match self.below(4) {
            0 => STABLE_COEFF_LIMIT,
            1 => 0.2,
            2 => 0.1,
            _ => (1 + self.below(1000)) as f32 * STABLE_COEFF_LIMIT / 1000.0,
        };
        let boundary = self.pick(&Boundary::ALL);
        StepParams { coeff, boundary }
    }

    fn method(&mut self) -> MethodChoice {
        if self.chance(15) {
            return MethodChoice::Auto;
        }
        match self.family {
            MethodFamily::Cpu => MethodChoice::Cpu(self.pick(&cpu_methods())),
            MethodFamily::Cuda => {
                let size = self.size;
                let kernels: Vec<CudaKernel> = cuda_kernels()
                    .into_iter()
                    .filter(|k| k.supports(size))
                    .collect();
                MethodChoice::Cuda(self.pick(&kernels))
            }
        }
    }

    fn source(&mut self) -> FieldSource {
        let seed = self.rng.next_u64() % 1_000_000;
        match self.below(4) {
            0 => FieldSource::Noise { seed },
            1 => FieldSource::Spike {
                row: self.below(self.size.rows),
                col: self.below(self.size.cols),
            },
            _ => FieldSource::Jagged { seed },
        }
    }

    fn upload(&mut self) -> Operation {
        self.size = self.size();
        let source = self.source();
        Operation::Upload {
            size: self.size,
            source,
        }
    }

    fn preview(&mut self) -> Operation {
        let range_mode = match self.below(3) {
            0 => RangeMode::MinMax,
            1 => RangeMode::LAPLACIAN_DEFAULT,
            _ => RangeMode::Fixed(ValueRange {
                min: -0.05,
                max: 0.5,
            }),
        };
        Operation::Preview {
            layer: self.pick(&[Layer::Field, Layer::Laplacian]),
            colormap: self.pick(&Colormap::ALL),
            range_mode,
            max_size: (1 + self.below(300), 1 + self.below(300)),
        }
    }

    /// A cell of the current field.
    fn cell(&mut self) -> u32 {
        // A field split over ranks (`min_rows` of them): half the cells beside a band's edge,
        // where a rank's own rows meet its neighbour's halo.
        if self.min_rows > 1 && self.chance(50) {
            let (rows, cols) = (self.size.rows, self.size.cols);
            let ranks = self.min_rows.min(rows).max(1);
            let band = RowSpan::part_of(rows, ranks, self.below(ranks));
            let row = (band.first + rows + self.below(3) - 1) % rows;
            return (row * cols + self.below(cols)) as u32;
        }
        self.below(self.size.cells()) as u32
    }

    /// A value of either sign, tiny to large, or zero of either sign.
    fn value(&mut self) -> f32 {
        match self.below(8) {
            0 => 0.0,
            1 => -0.0,
            2 => (self.below(1000) as f32 - 500.0) * 1e-7,
            _ => (self.below(20_000) as f32 - 10_000.0) / 977.0,
        }
    }

    /// A stroke's dabs: centres in and around the field (the disc clipped at its edges),
    /// radii from half a cell to wider than small fields, adding or removing, either edge.
    fn brush(&mut self) -> Operation {
        let (rows, cols) = (self.size.rows as f32, self.size.cols as f32);
        let radius = match self.below(4) {
            0 => 0.5,
            1 => 0.5 + self.below(40) as f32 / 8.0,
            2 => 1.0 + self.below(30) as f32,
            _ => 0.25 + self.below(4000) as f32 / 100.0,
        };
        let amount = self.value();
        let edge = self.pick(&BrushEdge::ALL);
        let stamps = (0..1 + self.below(6))
            .map(|_| BrushStamp {
                row: (self.below(1000) as f32 / 1000.0) * (rows + 8.0) - 4.0,
                col: (self.below(1000) as f32 / 1000.0) * (cols + 8.0) - 4.0,
                radius,
                amount,
                edge,
            })
            .collect();
        Operation::Brush { stamps }
    }

    /// Distinct cells and values for them.
    fn set_cells(&mut self) -> Operation {
        let mut cells: Vec<u32> = (0..1 + self.below(64)).map(|_| self.cell()).collect();
        cells.sort_unstable();
        cells.dedup();
        let values = cells.iter().map(|_| self.value()).collect();
        Operation::SetCells { cells, values }
    }

    /// One operation after the first (which is always an upload).
    fn operation(&mut self) -> Operation {
        match self.below(100) {
            0..=34 => {
                let calls = 1 + self.below(4);
                Operation::Advance {
                    chunks: (0..calls).map(|_| self.chunk()).collect(),
                }
            }
            35..=46 => Operation::SetParams(self.params()),
            47..=58 => Operation::SetMethod(self.method()),
            59..=63 => Operation::SetGraphs(self.chance(60)),
            64..=70 => Operation::Laplacian,
            71..=78 => self.preview(),
            79..=83 => Operation::Download,
            84..=87 => Operation::Regenerate {
                seed: self.rng.next_u64() % 1_000_000,
            },
            88..=91 => Operation::SwitchBackend {
                steps_elsewhere: self.below(40) as u64,
            },
            92..=94 => self.brush(),
            95 => self.set_cells(),
            96 => Operation::Gather {
                cells: (0..1 + self.below(20)).map(|_| self.cell()).collect(),
            },
            _ => self.upload(),
        }
    }

    /// A heat-problem operation, or none, after `previous` (drawn from `problem_rng`).
    fn problem_operation(&mut self, previous: &Operation) -> Option<Operation> {
        if let Operation::Upload { .. } = previous {
            // A new field may have a new size: a held problem's map no longer fits.
            self.problem_held = false;
        }
        let draw = (self.problem_rng.next_u64() % 100) as usize;
        let seed = self.problem_rng.next_u64() % 1_000_000;
        let op = match draw {
            0..=9 => {
                let kernels = material_kernels();
                let kernel = kernels[(self.problem_rng.next_u64() % kernels.len() as u64) as usize];
                Operation::SetProblem {
                    seed,
                    book_energy: self.problem_rng.next_u64() % 3 == 0,
                    kernel,
                }
            }
            10..=14 if self.problem_held => Operation::EditMap { seed },
            15..=18 if self.problem_held => Operation::SwitchHeater { seed },
            19 if self.problem_held => Operation::ClearProblem,
            20..=25 if self.problem_held => Operation::Solve(match draw % 3 {
                0 => SolveRequest::Steady,
                1 => SolveRequest::Implicit {
                    scheme: ImplicitScheme::BackwardEuler,
                    dt: 10f64.powi((seed % 9) as i32 - 6),
                },
                _ => SolveRequest::Implicit {
                    scheme: ImplicitScheme::CrankNicolson,
                    dt: 10f64.powi((seed % 9) as i32 - 6),
                },
            }),
            _ => return None,
        };
        self.problem_held = !matches!(op, Operation::ClearProblem);
        Some(op)
    }

    /// A whole sequence of `operations` uniform operations, starting with an upload, with
    /// heat-problem operations between them (not counted).
    pub fn sequence(&mut self, operations: usize) -> Vec<Operation> {
        let mut uniform = vec![self.upload(), Operation::SetParams(self.params())];
        while uniform.len() < operations.max(2) {
            let op = self.operation();
            uniform.push(op);
        }
        let mut ops = Vec::with_capacity(uniform.len() * 2);
        for op in uniform {
            let problem = self.problem_operation(&op);
            ops.push(op);
            ops.extend(problem);
        }
        ops
    }
}

#[cfg(test)]
mod tests;
