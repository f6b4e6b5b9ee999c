//! `heatlab bench --display`'s regeneration rows: a new jagged field per change of a field
//! parameter, as while dragging its slider, through the simulation the app runs, beside the
//! path before the initial field was kept on the GPU (the field downloaded for the host, then
//! downloaded again and uploaded back as the held field) in the same run.

use std::time::Instant;

use crate::compute::{Backend, CudaBackend, StepParams};
use crate::error::Result;
use crate::field::JaggedParams;
use crate::grid::GridSize;
use crate::measure::MeanStd;
use crate::render::frame::{colour_frame, reduce_frame, SpareBuffers, ViewRequests};
use crate::sim::generate::generate_on;
use crate::sim::Simulation;

use super::LARGEST_JAGGED_CELLS;

/// One way of regenerating, timed over several fields.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RegenerationRow {
    /// "8192x8192".
    pub size: String,
    /// What each field costs.
    pub path: String,
    /// Milliseconds per field, from the request until the simulation stands at it.
    pub ms_per_field: MeanStd,
    /// Fields per second at that pace.
    pub fields_per_second: f64,
}

/// The paths timed, in the order they are shown.
const PATHS: [&str; 3] = [
    "baseline: via the host",
    "kept on the GPU",
    "kept on the GPU + a frame",
];

/// The field's parameters at the `index`-th position of a drag of the exponent.
fn dragged(size: GridSize, index: usize) -> JaggedParams {
    let base = JaggedParams {
        size,
        ..JaggedParams::default()
    };
    JaggedParams {
        exponent: base.exponent - 0.005 * (index % 40) as f64,
        ..base
    }
}

/// Regeneration at each of `sizes` (up to the largest jagged field) on the GPU: `repeats`
/// fields by each path after a warm-up of each (which plans the transforms).
pub fn bench_regeneration(sizes: &[GridSize], repeats: usize) -> Result<Vec<RegenerationRow>> {
    let mut rows = Vec::new();
    for &size in sizes.iter().filter(|s| s.cells() <= LARGEST_JAGGED_CELLS) {
        let (mut sim, _) = Simulation::generated(
            Box::new(CudaBackend::new()?),
            &dragged(size, 0),
            StepParams::default(),
            &|_| {},
        )?;
        let mut spares = SpareBuffers::default();
        for (path_index, path) in PATHS.into_iter().enumerate() {
            let mut samples = Vec::with_capacity(repeats);
            for index in 0..=repeats {
                let params = dragged(size, index + 1);
                let started = Instant::now();
                match path_index {
                    0 => regenerate_via_host(sim.backend_mut(), &params)?,
                    _ => {
                        sim.regenerate(&params, &|_| {})?;
                    }
                }
                if path_index == 2 {
                    let mut split = Vec::new();
                    let views = ViewRequests::default();
                    let reduced = reduce_frame(&mut sim, views, false, &mut spares, &mut split)?;
                    let pictures = colour_frame(reduced, &mut spares, &mut split);
                    spares.take_back(vec![pictures.field, pictures.laplacian]);
                }
                // The first of each path warms it up.
                if index > 0 {
                    samples.push(started.elapsed().as_secs_f64() * 1e3);
                }
            }
            let ms_per_field = MeanStd::of(&samples);
            rows.push(RegenerationRow {
                size: size.to_string(),
                path: path.to_string(),
                fields_per_second: 1e3 / ms_per_field.mean,
                ms_per_field,
            });
        }
    }
    Ok(rows)
}

/// What a regeneration did before the initial field was kept on the GPU: the new field
/// downloaded for the host (Reset, saving), then downloaded and uploaded back as the held one.
fn regenerate_via_host(backend: &mut dyn Backend, params: &JaggedParams) -> Result<()> {
    let (initial, _) = generate_on(backend, params, &|_| {})?;
    std::hint::black_box(&initial);
    let held = backend.download()?;
    backend.upload(&held)
}

/// The rows as a fixed-width table.
pub fn format_regeneration(rows: &[RegenerationRow]) -> String {
    let mut out = format!(
        "{:<12} {:<28} {:>18} {:>10}\n",
        "size", "regeneration", "ms per field", "fields/s"
    );
    for row in rows {
        out.push_str(&format!(
            "{:<12} {:<28} {:>18} {:>10.1}\n",
            row.size,
            row.path,
            row.ms_per_field.to_string(),
            row.fields_per_second
        ));
    }
    out
}
