//! Bands stepped on threads against the whole field stepped at once: equal bit for bit.

use super::*;
use crate::compute::{Backend, Boundary, CpuBackend, CpuMethod, StepParams};
use crate::grid::{Grid, GridSize};

/// A field with structure everywhere (no symmetry hides a wrong neighbour).
fn field(rows: usize, cols: usize) -> Grid {
    let size = GridSize::new(rows, cols).unwrap();
    Grid::from_fn(size, |r, c| {
        let x = (r * 7919 + c * 104_729) % 1009;
        x as f32 / 1009.0 + if (r + c) % 3 == 0 { 1.5 } else { 0.0 }
    })
}

fn whole_run(start: &Grid, steps: u64, params: &StepParams) -> Grid {
    let mut backend = CpuBackend::with_threads(2).with_method(CpuMethod::Plain);
    backend.upload(start).unwrap();
    backend.advance(steps, params).unwrap();
    backend.download().unwrap()
}

/// Steps `start` split over `ranks` threads, `pieces` advances of the given step counts, and
/// joins the bands' own rows.
fn banded_run(
    start: &Grid,
    ranks: usize,
    depth: usize,
    pieces: &[u64],
    params: StepParams,
) -> Grid {
    let bands = Bands::new(start.size(), ranks, depth, params.boundary).unwrap();
    let links = thread_links(ranks);
    let rows: Vec<Grid> = std::thread::scope(|scope| {
        let handles: Vec<_> = links
            .into_iter()
            .map(|link| {
                let pieces = pieces.to_vec();
                scope.spawn(move || {
                    // Each band on a backend of its own method: bands need not agree on one.
                    let method = if link.rank() % 2 == 0 {
                        CpuMethod::Rows
                    } else {
                        CpuMethod::Blocked {
                            steps_per_pass: 2,
                            band_rows: 3,
                        }
                    };
                    let backend = Box::new(CpuBackend::with_threads(1).with_method(method));
                    let mut band = BandField::new(bands, Box::new(link), backend, start).unwrap();
                    for steps in pieces {
                        band.advance(steps, &params).unwrap();
                    }
                    band.own_rows().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let values: Vec<f32> = rows.into_iter().flat_map(Grid::into_vec).collect();
    Grid::from_vec(start.size(), values).unwrap()
}

#[test]
fn bands_on_2_3_and_4_ranks_equal_the_whole_field_for_every_boundary() {
    for boundary in Boundary::ALL {
        for (rows, cols) in [(17, 9), (24, 31), (13, 1)] {
            let start = field(rows, cols);
            let params = StepParams {
                coeff: 0.23,
                boundary,
            };
            let pieces = [1, 5, 3, 7];
            let expected = whole_run(&start, pieces.iter().sum(), &params);
            for ranks in 2..=4 {
                for depth in [1, 2, 3] {
                    let got = banded_run(&start, ranks, depth, &pieces, params);
                    let same = got
                        .as_slice()
                        .iter()
                        .zip(expected.as_slice())
                        .all(|(a, b)| a.to_bits() == b.to_bits());
                    assert!(
                        same,
                        "{boundary} {rows}x{cols} on {ranks} ranks, halo {depth}: not bit-identical"
                    );
                }
            }
        }
    }
}

#[test]
fn a_band_exchanges_once_per_depth_steps() {
    let start = field(12, 4);
    let params = StepParams::default();
    let bands = Bands::new(start.size(), 1, 3, params.boundary).unwrap();
    let link = thread_links(1).pop().unwrap();
    let mut band = BandField::new(
        bands,
        Box::new(link),
        Box::new(CpuBackend::with_threads(1)),
        &start,
    )
    .unwrap();
    band.advance(10, &params).unwrap();
    // Steps 1-3 on the halos it started with, then an exchange before 4, 7 and 10.
    assert_eq!(band.times().exchanges, 3);
    assert_eq!(band.own_rows().unwrap(), whole_run(&start, 10, &params));
}
