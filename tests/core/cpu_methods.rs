//! The CPU's stepping methods give identical fields: temporal blocking is exact.

use heatlab_engine::compute::{Backend, Boundary, CpuBackend, CpuMethod, StepParams};
use heatlab_engine::field::{generate_jagged, JaggedParams};
use heatlab_engine::GridSize;

#[test]
fn blocked_passes_equal_single_steps_bit_for_bit() {
    for (rows, cols) in [
        (1, 1),
        (1, 9),
        (7, 1),
        (5, 6),
        (70, 33),
        (129, 64),
        (300, 257),
    ] {
        let params = JaggedParams {
            size: GridSize::new(rows, cols).unwrap(),
            ..JaggedParams::default()
        };
        let initial = generate_jagged(&params, &|_| {}).unwrap();
        for boundary in Boundary::ALL {
            let step = StepParams {
                coeff: 0.19,
                boundary,
            };
            let mut rows_method = CpuBackend::with_threads(2).with_method(CpuMethod::Rows);
            rows_method.upload(&initial).unwrap();
            rows_method.advance(23, &step).unwrap();
            let expected = rows_method.download().unwrap();
            for (steps_per_pass, band_rows) in [(2, 3), (4, 32), (8, 16)] {
                let method = CpuMethod::Blocked {
                    steps_per_pass,
                    band_rows,
                };
                let mut blocked = CpuBackend::with_threads(2).with_method(method);
                blocked.upload(&initial).unwrap();
                blocked.advance(23, &step).unwrap();
                assert_eq!(
                    blocked.download().unwrap(),
                    expected,
                    "{method} on {rows}x{cols} {boundary}"
                );
            }
        }
    }
}
