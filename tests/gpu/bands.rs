//! A field split into bands, each stepped by a CUDA backend of its own (threads of one process
//! standing for ranks, halos through the host), against the whole field stepped once on the
//! CPU: equal bit for bit for 2, 3 and 4 bands, every boundary, halos of several depths, with
//! the kernel the GPU picks for each band's size, the exchange overlapped with the interior
//! (edge strips stepped aside) and not. Reading and writing whole rows of a CUDA
//! field equals the CPU's. Without CUDA these tests skip and say so; with
//! HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

use crate::common;
use common::backend::{cuda_or_skip, on_each_backend};

use heatlab_engine::compute::{Backend, Boundary, CpuBackend, CudaBackend, StepParams};
use heatlab_engine::distributed::{thread_links, BandField, Bands};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::{Grid, GridSize};

#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure"
)]
fn jagged(rows: usize, cols: usize) -> Grid {
    let params = JaggedParams {
        size: GridSize::new(rows, cols).unwrap(),
        seed: 11,
        ..JaggedParams::default()
    };
    generate_jagged(&params, &|_| {}).unwrap()
}

on_each_backend! {
    /// Rows read back equal the field's; rows written replace exactly those rows.
    fn rows_read_and_written_are_the_fields_rows(backend, label) {
        let field = jagged(9, 37);
        backend.upload(&field).unwrap();
        let mut rows = vec![0.0; 3 * 37];
        backend.read_rows(4, &mut rows).unwrap();
        assert_eq!(rows, field.as_slice()[4 * 37..7 * 37], "{label}: read");
        let new_rows: Vec<f32> = (0..2 * 37).map(|i| i as f32 * 0.5).collect();
        backend.write_rows(7, &new_rows).unwrap();
        let mut expected = field.into_vec();
        expected[7 * 37..9 * 37].copy_from_slice(&new_rows);
        assert_eq!(backend.download().unwrap().into_vec(), expected, "{label}: written");
        assert!(backend.read_rows(8, &mut rows).is_err(), "{label}: past the end");
        assert!(backend.write_rows(0, &new_rows[..5]).is_err(), "{label}: not whole rows");
    }
}

#[test]
fn bands_on_cuda_equal_the_whole_field_on_the_cpu() {
    if cuda_or_skip!().is_none() {
        return;
    }
    for boundary in Boundary::ALL {
        for (rows, cols) in [(301, 257), (64, 1000)] {
            let start = jagged(rows, cols);
            let params = StepParams {
                coeff: 0.24,
                boundary,
            };
            let pieces = [3_u64, 40, 1, 77];
            let mut cpu = CpuBackend::new();
            cpu.upload(&start).unwrap();
            cpu.advance(pieces.iter().sum(), &params).unwrap();
            let expected = cpu.download().unwrap();
            for (ranks, depth, overlap) in [
                (2, 16, true),
                (2, 16, false),
                (3, 5, true),
                (4, 8, true),
                (4, 8, false),
                (3, 21, true),
            ] {
                let bands = Bands::new(start.size(), ranks, depth, boundary).unwrap();
                let own: Vec<Grid> = std::thread::scope(|scope| {
                    let handles: Vec<_> = thread_links(ranks)
                        .into_iter()
                        .map(|link| {
                            let start = &start;
                            scope.spawn(move || {
                                let cuda = Box::new(CudaBackend::new().unwrap());
                                let mut band =
                                    BandField::new(bands, Box::new(link), cuda, start).unwrap();
                                band.set_overlap(overlap);
                                for steps in pieces {
                                    band.advance(steps, &params).unwrap();
                                }
                                assert_eq!(band.overlaps_exchange(), overlap);
                                band.link().barrier().unwrap();
                                band.own_rows().unwrap()
                            })
                        })
                        .collect();
                    handles.into_iter().map(|h| h.join().unwrap()).collect()
                });
                let joined: Vec<f32> = own.into_iter().flat_map(Grid::into_vec).collect();
                let differing = joined
                    .iter()
                    .zip(expected.as_slice())
                    .position(|(a, b)| a.to_bits() != b.to_bits());
                assert_eq!(
                    differing, None,
                    "{boundary} {rows}x{cols} over {ranks} CUDA bands, halo {depth}, \
                     overlapped: {overlap}"
                );
            }
        }
    }
}
