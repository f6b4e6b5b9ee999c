//! Properties of the scheme that hold exactly (or to rounding): conservation and mode decay.

use std::f64::consts::PI;

use heatlab_engine::compute::{Backend, Boundary, CpuBackend, StepParams};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::sim::FieldStats;
use heatlab_engine::{Grid, GridSize};

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
fn jagged(rows: usize, cols: usize) -> Grid {
    let params = JaggedParams {
        size: GridSize::new(rows, cols).unwrap(),
        ..JaggedParams::default()
    };
    generate_jagged(&params, &|_| {}).unwrap()
}

#[test]
fn neumann_and_periodic_conserve_total_heat() {
    let initial = jagged(48, 64);
    let before = FieldStats::of(&initial).total;
    assert!(before > 1.0);
    for boundary in [Boundary::Neumann, Boundary::Periodic] {
        let mut cpu = CpuBackend::new();
        cpu.upload(&initial).unwrap();
        cpu.advance(
            5000,
            &StepParams {
                coeff: 0.25,
                boundary,
            },
        )
        .unwrap();
        let after = cpu.download().unwrap();
        let stats = FieldStats::of(&after);
        let drift = (stats.total - before).abs() / before;
        assert!(
            drift < 1e-4,
            "{boundary}: total went from {before} to {} (drift {drift})",
            stats.total
        );
        // Heat spreads: the maximum falls and the minimum rises.
        let initial_stats = FieldStats::of(&initial);
        assert!(stats.max < initial_stats.max);
    }
}

#[test]
fn dirichlet_loses_heat_at_the_edges() {
    let initial = jagged(48, 64);
    let mut cpu = CpuBackend::new();
    cpu.upload(&initial).unwrap();
    cpu.advance(5000, &StepParams::default()).unwrap();
    let after = FieldStats::of(&cpu.download().unwrap()).total;
    assert!(after < 0.9 * FieldStats::of(&initial).total);
}

/// A discrete sine mode of the Dirichlet problem decays by exactly
/// `1 - coeff*(4 sin^2(pi kx/(2(R+1))) + 4 sin^2(pi ky/(2(C+1))))` per step.
#[test]
fn dirichlet_sine_mode_decays_at_the_exact_rate() {
    let (rows, cols) = (37usize, 52usize);
    for (kx, ky, coeff) in [(1usize, 1usize, 0.25f32), (3, 2, 0.2), (5, 7, 0.1)] {
        let mode = |r: usize, c: usize| {
            (PI * (kx * (r + 1)) as f64 / (rows + 1) as f64).sin()
                * (PI * (ky * (c + 1)) as f64 / (cols + 1) as f64).sin()
        };
        let data: Vec<f32> = (0..rows * cols)
            .map(|i| mode(i / cols, i % cols) as f32)
            .collect();
        let initial = Grid::from_vec(GridSize::new(rows, cols).unwrap(), data).unwrap();
        let factor = 1.0
            - f64::from(coeff)
                * (4.0 * (PI * kx as f64 / (2.0 * (rows + 1) as f64)).sin().powi(2)
                    + 4.0 * (PI * ky as f64 / (2.0 * (cols + 1) as f64)).sin().powi(2));
        let steps = 200;
        let mut cpu = CpuBackend::new();
        cpu.upload(&initial).unwrap();
        cpu.advance(
            steps,
            &StepParams {
                coeff,
                boundary: Boundary::Dirichlet,
            },
        )
        .unwrap();
        let after = cpu.download().unwrap();
        let expected_scale = factor.powi(steps as i32);
        let mut worst = 0.0f64;
        for r in 0..rows {
            for c in 0..cols {
                let expected = expected_scale * mode(r, c);
                worst = worst.max((f64::from(after.get(r, c)) - expected).abs());
            }
        }
        // float32 rounding over 200 steps; the mode's amplitude is 1 and the rates differ by
        // far more than this between neighbouring modes.
        assert!(
            worst < 2e-5 * (1.0 + expected_scale.abs()),
            "mode ({kx},{ky}): error {worst}"
        );
        assert!(expected_scale < 0.99, "the test must actually see decay");
    }
}

#[test]
fn above_the_limit_the_checkerboard_grows() {
    let (rows, cols) = (16, 16);
    let data: Vec<f32> = (0..rows * cols)
        .map(|i| {
            if (i / cols + i % cols) % 2 == 0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let initial = Grid::from_vec(GridSize::new(rows, cols).unwrap(), data).unwrap();
    let mut cpu = CpuBackend::new();
    cpu.upload(&initial).unwrap();
    cpu.advance(
        50,
        &StepParams {
            coeff: 0.3,
            boundary: Boundary::Periodic,
        },
    )
    .unwrap();
    let stats = FieldStats::of(&cpu.download().unwrap());
    assert!(
        stats.max > 1e3,
        "the unstable scheme must amplify the checkerboard, max {}",
        stats.max
    );
}
