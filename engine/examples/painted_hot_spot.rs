//! Makes `screenshots/painted_hot_spot.gif`: a stroke and a dab painted with heatlab's brush
//! (the app's `Simulation::paint_to`, the same dabs a drag lays down) onto a cold plate, then
//! left to spread under the insulated (Neumann) boundary, recorded with heatlab's video writer
//! and frame composer (the same as `heatlab run --video` and the app's Record video).
//!
//! `cargo run --release --example painted_hot_spot -- [OUT.gif]` (also writes OUT.png, a still).

use std::path::PathBuf;

use anyhow::Result;

use heatlab_engine::compute::{Boundary, BrushEdge, CpuBackend, Layer, StepParams};
use heatlab_engine::export::{compose_frame, write_png_rgb, LayerFrame, PngStyle, VideoWriter};
use heatlab_engine::grid::ValueRange;
use heatlab_engine::render::Colormap;
use heatlab_engine::sim::paint::Brush;
use heatlab_engine::sim::Simulation;
use heatlab_engine::{Grid, GridSize};

fn main() -> Result<()> {
    let out = std::env::args().nth(1).map_or_else(
        || PathBuf::from("screenshots/painted_hot_spot.gif"),
        PathBuf::from,
    );
    let size = GridSize::new(200, 320)?;
    let params = StepParams {
        coeff: 0.2,
        boundary: Boundary::Neumann,
    };
    let mut sim = Simulation::new(Box::new(CpuBackend::new()), Grid::zeros(size), params)?;
    let brush = Brush {
        radius: 12.0,
        amount: 0.5,
        edge: BrushEdge::Soft,
    };
    // A stroke across the plate, then a hot spot below it.
    for i in 0..=30 {
        let t = i as f32 / 30.0;
        sim.paint_to(70.0 + 35.0 * (t * 6.0).sin(), 40.0 + 240.0 * t, brush)?;
    }
    sim.end_stroke()?;
    for _ in 0..6 {
        sim.paint_to(150.0, 160.0, brush)?;
        sim.end_stroke()?;
    }
    let hottest = sim.statistics()?.max;
    let style = PngStyle {
        colormap: Colormap::Inferno,
        range: ValueRange {
            min: 0.0,
            max: hottest,
        },
        colorbar: true,
        unit: None,
        cell_pixels: None,
    };
    let mut video = VideoWriter::create(&out, 12)?;
    for frame in 0..48u64 {
        let field = sim.field()?;
        let layers = [LayerFrame {
            layer: Layer::Field,
            grid: &field,
            style,
        }];
        let caption = format!("step {}", sim.step_count());
        let (rgb, width, height) = compose_frame(&layers, Some(&caption))?;
        video.add_frame(&rgb, width, height)?;
        if frame == 6 {
            // A still of the spreading, for pages that do not play GIFs.
            write_png_rgb(&out.with_extension("png"), width, height, &rgb)?;
        }
        // Quick at first, where the edges are sharp, then in longer strides.
        sim.advance(5 + frame * 6)?;
    }
    let summary = video.finish()?;
    println!("wrote {summary:?}");
    Ok(())
}
