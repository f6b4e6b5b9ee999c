//! Makes the GPU basics tab's screenshots, on a machine with or without a GPU and without a
//! display: every lesson is run once (the notebooks' inputs; the launch geometry as an
//! unguarded 2-D launch, whose stray writes the picture shows), and each lesson's result is
//! saved as `OUT_DIR/gpu_basics_<lesson>_<SUFFIX>.png`.
//!
//! It drives the real app (`HeatlabApp`, through egui_kittest as the GUI tests do) with the
//! buttons a user clicks, and paints its frames with heatlab's software renderer
//! (`tests/common/software_renderer.rs`), as `lab_screenshots` does.
//!
//! ```text
//! basics_screenshots OUT_DIR SUFFIX        # e.g. screenshots h100, or screenshots no_gpu
//! ```

#[path = "../tests/common/software_renderer.rs"]
mod software_renderer;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use eframe::egui::{self, Vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;
use heatlab_engine::tutorial::basics::geometry::GeometryOptions;
use heatlab_engine::tutorial::basics::BasicsLesson;
use software_renderer::SoftwareRenderer;

/// The longest the lessons may take together (the ladder's naive loop at 256³ on a slow CPU).
const LIMIT: Duration = Duration::from_secs(600);

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out_dir), Some(suffix), None) = (args.next(), args.next(), args.next()) else {
        bail!("usage: basics_screenshots OUT_DIR SUFFIX (writes gpu_basics_<lesson>_<SUFFIX>.png)");
    };
    let out_dir = PathBuf::from(out_dir);
    let suffix = suffix.to_string_lossy().into_owned();
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let renderer = SoftwareRenderer::default();
    let mut field = Settings::default().field;
    field.size = GridSize::new(64, 64)?;
    let settings = Settings {
        backend: BackendChoice::Auto,
        field,
        tab: "gpu-basics".parse().map_err(anyhow::Error::msg)?,
        ..Settings::default()
    };
    let mut harness = Harness::builder()
        .with_size(Vec2::new(1440.0, 900.0))
        .renderer(renderer.clone())
        .build_eframe(move |cc| {
            HeatlabApp::new(
                cc,
                AppOptions {
                    settings: Some(settings),
                    persist: false,
                    ..AppOptions::default()
                },
            )
        });
    harness.run_steps(2);
    harness
        .state_mut()
        .basics_mut()
        .set_geometry(GeometryOptions {
            rows: 20,
            cols: 28,
            block: [8, 8],
            grid: [3, 4],
            guarded: false,
            ..GeometryOptions::notebook_2d()
        });
    click(&mut harness, "Run all")?;
    let start = Instant::now();
    while harness.state().basics().is_busy() {
        harness.step();
        if start.elapsed() > LIMIT {
            bail!(
                "gave up after {} s waiting for the lessons",
                LIMIT.as_secs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    println!("{}", harness.state().basics().summary());
    for lesson in BasicsLesson::ALL {
        click(&mut harness, lesson.title())?;
        let name = format!(
            "gpu_basics_{}_{suffix}.png",
            lesson.to_string().replace('-', "_")
        );
        shot(&renderer, &mut harness, &out_dir, &name)?;
    }
    Ok(())
}

/// Paints the last frame with `renderer` and saves it as `out_dir/name`, nothing hovered.
fn shot(
    renderer: &SoftwareRenderer,
    harness: &mut Harness<'_, HeatlabApp>,
    out_dir: &Path,
    name: &str,
) -> Result<()> {
    harness.input_mut().events.push(egui::Event::PointerGone);
    harness.run_steps(4);
    let clear = eframe::App::clear_color(harness.state(), &harness.ctx.global_style().visuals);
    let image = renderer
        .render(&harness.ctx, harness.output(), clear)
        .map_err(anyhow::Error::msg)
        .with_context(|| format!("cannot paint {name}"))?;
    let path = out_dir.join(name);
    software_renderer::save_png(&image, &path)?;
    println!(
        "saved {} ({}x{})",
        path.display(),
        image.width(),
        image.height()
    );
    Ok(())
}

/// Clicks the widget labelled `label` (the first, where a heading repeats it).
fn click(harness: &mut Harness<'_, HeatlabApp>, label: &str) -> Result<()> {
    let Some(node) = harness.query_all_by_label(label).next() else {
        bail!("no \"{label}\" to click");
    };
    node.click();
    harness.run_steps(2);
    Ok(())
}
