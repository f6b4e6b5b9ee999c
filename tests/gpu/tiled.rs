//! The tiled material kernels against the CPU reference, bit for bit, on problems whose kinds
//! come in regions wider and taller than a tile, so that most tiles take the one-kind march:
//! every side condition, a heater, a held region (copied tiles), a kind whose source is +0 or -0
//! (where it is -0, the kernel that computes each face once must give way: it would change the
//! sign of a zero there), and fields with runs of equal values, zeros of both signs and
//! subnormals where faces round to zeros.

#![expect(
    clippy::unwrap_used,
    reason = "test helpers unwrap like the tests (clippy's allow-unwrap-in-tests covers #[test] \
              functions only): a failure there is the test's failure, with its message"
)]

use crate::common;
use crate::materials::{field, sides_cases};
use common::backend::cuda_or_skip;

use heatlab_engine::compute::cuda::MaterialKernel;
use heatlab_engine::compute::{Backend, CpuBackend, ProblemUpload, StepParams};
use heatlab_engine::problem::{HeatProblem, Sides, StepTables};
use heatlab_engine::verify::problems::{random_problem_with, tables_of, Layout};
use heatlab_engine::{Grid, GridSize};

/// Rows and columns: the tiles of strips 1 to 3 (columns 104..231, 216..343, 328..455) and of
/// most segments lie inside.
const SIZE: GridSize = GridSize {
    rows: 300,
    cols: 520,
};

/// Kinds: 0 the background, 1 a heater, 2 held, 3 a source of +0 or -0.
const HEATER: u8 = 1;
const HELD: u8 = 2;
const ZERO_SOURCE: u8 = 3;

fn inside(r: usize, c: usize, rows: (usize, usize), cols: (usize, usize)) -> bool {
    (rows.0..rows.1).contains(&r) && (cols.0..cols.1).contains(&c)
}

/// The problem with `sides` and its tables, with the heater's, the held kind's and the zero
/// source's entries set. Each kind fills whole tiles: strip 1 of segments 1 and 2 (of 32 rows)
/// is of kind 0, strip 1 of segments 5 to 8 of kind 3, strip 3 of segment 1 of the heater and
/// of segments 5 to 8 held.
fn problem(sides: Sides, source: f32) -> (HeatProblem, StepTables) {
    let mut problem = random_problem_with(77, SIZE, 4, Layout::Blocks).unwrap();
    problem.sides = sides;
    for kind in &mut problem.kinds {
        kind.held_temperature = None;
    }
    problem.map.fill(0);
    problem.paint(ZERO_SOURCE, |r, c| inside(r, c, (130, 300), (96, 240)));
    problem.paint(HEATER, |r, c| inside(r, c, (20, 120), (240, 520)));
    problem.paint(HELD, |r, c| inside(r, c, (150, 300), (320, 470)));
    let mut tables = tables_of(&mut problem).unwrap();
    tables.held = vec![false, false, true, false];
    tables.source = vec![0.0, 2.5e-3, 0.0, source];
    (problem, tables)
}

/// Every cell different, except: a block of 5.0 (equal neighbours, faces of +0), a block of
/// zeros of both signs and subnormals, and in kinds 3 and 0 one cell each (column % 4 == 1, so
/// that its left face is computed from its neighbour's) whose faces are all zeros: -0 itself,
/// -0 left and above, -1e-45 right and below. Where kind 3's source is -0, the one-kind march
/// with faces computed once would give -0 there where the reference gives +0.
fn initial() -> Grid {
    let mut values = field(SIZE, 12345).as_slice().to_vec();
    let cols = SIZE.cols;
    for r in 0..SIZE.rows {
        for c in 0..cols {
            if inside(r, c, (120, 200), (240, 330)) {
                values[r * cols + c] = 5.0;
            }
            if inside(r, c, (30, 140), (120, 230)) {
                values[r * cols + c] = [0.0, -0.0, 1e-45, -1e-45][(r + 2 * c) % 4];
            }
        }
    }
    for (r, c) in [(200, 161), (60, 161)] {
        for (at, value) in [
            ((r, c), -0.0),
            ((r, c - 1), -0.0),
            ((r - 1, c), -0.0),
            ((r, c + 1), -1e-45),
            ((r + 1, c), -1e-45),
        ] {
            values[at.0 * cols + at.1] = value;
        }
    }
    Grid::from_vec(SIZE, values).unwrap()
}

fn tiled_kernels() -> Vec<MaterialKernel> {
    MaterialKernel::blocked_candidates()
        .into_iter()
        .filter(|kernel| matches!(kernel, MaterialKernel::Tiled { .. }))
        .collect()
}

#[test]
fn tiled_kernels_match_cpu_where_tiles_are_of_one_kind() {
    let Some(mut cuda) = cuda_or_skip!() else {
        return;
    };
    let kernels = tiled_kernels();
    assert!(kernels.len() >= 2, "the candidates include tiled kernels");
    let initial = initial();
    let params = StepParams::default();
    for ((name, sides), source) in sides_cases()
        .into_iter()
        .flat_map(|case| [(case, 0.0), (case, -0.0)])
    {
        let (problem, tables) = problem(sides, source);
        let upload = ProblemUpload {
            tables: &tables,
            map: &problem.map,
            book_energy: false,
            booked_rows: None,
        };
        let mut cpu = CpuBackend::new();
        cpu.upload(&initial).unwrap();
        cpu.set_problem(Some(upload)).unwrap();
        let mut reference = Vec::new();
        for steps in [8, 8, 56] {
            cpu.advance(steps, &params).unwrap();
            reference.push(cpu.download().unwrap());
        }
        for &kernel in &kernels {
            cuda.set_material_kernel(Some(kernel)).unwrap();
            cuda.upload(&initial).unwrap();
            cuda.set_problem(Some(upload)).unwrap();
            for (index, steps) in [8, 8, 56].into_iter().enumerate() {
                cuda.advance(steps, &params).unwrap();
                // Segments of 128 rows (and more) reach beyond the regions.
                let counts = cuda.material_tiles().unwrap();
                let (tiles, mixed) = (counts.tiles, counts.mixed);
                let segments_inside = matches!(kernel, MaterialKernel::Tiled { segment_rows, .. } if segment_rows <= 64);
                assert!(
                    mixed > 0 && (mixed < tiles || !segments_inside),
                    "{name}, {kernel}: {mixed} of {tiles} tiles mixed"
                );
                let field = cuda.download().unwrap();
                let differing = field
                    .as_slice()
                    .iter()
                    .zip(reference[index].as_slice())
                    .filter(|(a, b)| a.to_bits() != b.to_bits())
                    .count();
                assert_eq!(
                    differing, 0,
                    "{name}, source {source:?}, {kernel}, chunk {index}: cells differing from \
                     the CPU's"
                );
            }
        }
    }
}
