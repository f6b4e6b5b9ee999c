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
                    // Asked for by default; CPU ranks decide together not to.
                    assert!(!band.overlaps_exchange());
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

#[test]
fn the_npy_header_is_numpys_for_every_shape() {
    let dir = tempfile::tempdir().unwrap();
    for (rows, cols) in [(1, 1), (37, 23), (1000, 777), (16384, 16384), (3, 65_536)] {
        let size = GridSize::new(rows, cols).unwrap();
        let path = dir.path().join("a.npy");
        // write_npy needs the values; a header is the same for any values.
        if size.cells() <= 1 << 20 {
            crate::export::write_npy(&path, &Grid::zeros(size)).unwrap();
            let written = std::fs::read(&path).unwrap();
            let header = npy::npy_header(size);
            assert_eq!(&written[..header.len()], &header[..], "{rows}x{cols}");
        }
        assert_eq!(npy::npy_header(size).len() % 64, 0);
    }
}

#[test]
fn an_npy_written_by_ranks_at_their_offsets_equals_one_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let whole = field(29, 17);
    let expected_path = dir.path().join("whole.npy");
    crate::export::write_npy(&expected_path, &whole).unwrap();
    let expected = std::fs::read(&expected_path).unwrap();
    for ranks in [1, 2, 3, 4] {
        let bands = Bands::new(whole.size(), ranks, 1, Boundary::Neumann).unwrap();
        let path = dir.path().join(format!("ranks{ranks}.npy"));
        std::thread::scope(|scope| {
            for mut link in thread_links(ranks) {
                let (path, whole) = (&path, &whole);
                scope.spawn(move || {
                    let band = bands.band(link.rank());
                    let own = npy::own_rows_of(whole, &band);
                    npy::write_npy_by_ranks(path, whole.size(), &band, &own, &mut link).unwrap();
                });
            }
        });
        assert_eq!(std::fs::read(&path).unwrap(), expected, "{ranks} ranks");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().all(|n| !n.starts_with(".heatlab-")),
            "temporary files left: {names:?}"
        );
    }
}

#[test]
fn a_bands_laplacian_with_fresh_halos_is_the_whole_fields() {
    let start = field(23, 11);
    for boundary in Boundary::ALL {
        let params = StepParams {
            coeff: 0.2,
            boundary,
        };
        let mut whole = CpuBackend::with_threads(1);
        whole.upload(&start).unwrap();
        whole.advance(5, &params).unwrap();
        let expected = whole.laplacian(boundary).unwrap();
        let bands = Bands::new(start.size(), 3, 4, boundary).unwrap();
        let rows: Vec<Vec<f32>> = std::thread::scope(|scope| {
            let handles: Vec<_> = thread_links(3)
                .into_iter()
                .map(|link| {
                    let start = &start;
                    scope.spawn(move || {
                        let backend = Box::new(CpuBackend::with_threads(1));
                        let mut band =
                            BandField::new(bands, Box::new(link), backend, start).unwrap();
                        band.advance(5, &params).unwrap();
                        band.own_laplacian(boundary).unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let joined: Vec<f32> = rows.into_iter().flatten().collect();
        assert_eq!(joined, expected.into_vec(), "{boundary}");
    }
}
