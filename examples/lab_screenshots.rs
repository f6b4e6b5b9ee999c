//! Makes the two Kernel lab screenshots that need a GPU, on a GPU machine without a display:
//! `kernel-lab-compile-error.png` (NVRTC's error marked in the editor) and
//! `kernel-lab-validated.png` (the template compiled, validated bit-identical in a child
//! process, stepping the simulation and timed beside the built-in kernels).
//!
//! It drives the real app (`HeatlabApp`, the GUI's own type, through egui_kittest as the GUI
//! tests do) on CUDA with the buttons a user clicks, and paints its frames with heatlab's
//! software renderer (`tests/common/software_renderer.rs`): what egui_glow would show in a
//! 1440x900 window, as the other screenshots.
//!
//! ```text
//! lab_screenshots OUT_DIR
//! ```
//!
//! Validation runs `heatlab lab-check` in a child process: the heatlab binary is `HEATLAB_BIN`
//! when set, else `heatlab` beside this program or one folder up (`target/release/` when run
//! from `target/release/examples/`). Without CUDA it says so and exits with status 1: it is a
//! screenshot tool, not a test.

#[path = "../tests/common/bad_kernels.rs"]
#[expect(
    dead_code,
    reason = "the screenshots use one of the tests' bad kernels: the syntax error"
)]
mod bad_kernels;
#[path = "../tests/common/software_renderer.rs"]
mod software_renderer;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context as _, Result};
use eframe::egui::{self, Vec2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{AppOptions, Command, HeatlabApp, Settings};
use heatlab_engine::compute::cuda::user_kernel::USER_KERNEL_TEMPLATE;
use heatlab_engine::compute::{BackendChoice, BackendKind, KernelChoice};
use heatlab_engine::grid::GridSize;
use software_renderer::SoftwareRenderer;

/// The longest any one stage may take (a validation takes about a second on an H100).
const STAGE_LIMIT: Duration = Duration::from_secs(120);

fn main() -> Result<()> {
    let mut args = std::env::args_os().skip(1);
    let (Some(out_dir), None) = (args.next(), args.next()) else {
        bail!("usage: lab_screenshots OUT_DIR (writes kernel-lab-compile-error.png, kernel-lab-validated.png and diffusion-h100.png there)");
    };
    let out_dir = PathBuf::from(out_dir);
    // Before any thread starts: the app's lab finds its checker through HEATLAB_BIN.
    let checker = heatlab_binary()?;
    std::env::set_var("HEATLAB_BIN", &checker);
    std::fs::create_dir_all(&out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;

    let renderer = SoftwareRenderer::default();
    let mut harness = open_app(&renderer)?;
    show_compile_error(&mut harness)?;
    shot_with(
        &renderer,
        &mut harness,
        &out_dir,
        "kernel-lab-compile-error.png",
    )?;
    validate_template(&mut harness)?;
    shot_with(
        &renderer,
        &mut harness,
        &out_dir,
        "kernel-lab-validated.png",
    )?;
    drop(harness);
    diffusion_shot(&out_dir)
}

/// (a) A missing semicolon (the tests' syntax error), compiled, with NVRTC's error marked and
/// scrolled to.
fn show_compile_error(harness: &mut Harness<'_, HeatlabApp>) -> Result<()> {
    harness
        .state_mut()
        .lab()
        .set_source(bad_kernels::syntax_error());
    harness.step();
    click(harness, "Compile")?;
    wait_until(harness, "the compile ends", |app| !app.lab().is_busy())?;
    let status = harness.state_mut().lab().status();
    if status != "compile error" {
        bail!("the syntax error was expected to fail to compile; the lab says: {status}");
    }
    let marked = format!("▶{}", bad_kernels::syntax_error_line());
    let next = format!("▶{}", bad_kernels::syntax_error_line() + 1);
    harness.run_steps(2);
    // The editor scrolled down 300 points, as a user would to read the marked line with the
    // kernel's body below it (the line-number column is in the editor's scroll area).
    for _ in 0..3 {
        let Some(numbers) = harness
            .query_all_by_label_contains(&marked)
            .chain(harness.query_all_by_label_contains(&next))
            .next()
        else {
            bail!("NVRTC's error is not marked on line {marked} (nor the next)");
        };
        numbers.scroll_down();
        harness.run_steps(2);
    }
    Ok(())
}

/// (b) Back to the template (the edits discarded, as the lab asks), compiled, validated, used
/// in the simulation and timed beside the built-in kernels.
fn validate_template(harness: &mut Harness<'_, HeatlabApp>) -> Result<()> {
    click(harness, "Reset to built-in")?;
    click(harness, "Discard")?;
    if harness.state_mut().lab().source() != USER_KERNEL_TEMPLATE {
        bail!("Reset to built-in did not bring the template back");
    }
    click(harness, "Compile")?;
    wait_until(harness, "the compile ends", |app| !app.lab().is_busy())?;
    let status = harness.state_mut().lab().status();
    if !status.starts_with("compiled for") {
        bail!("the template did not compile: {status}");
    }
    click(harness, "Validate")?;
    wait_until(harness, "the validation ends", |app| !app.lab().is_busy())?;
    let status = harness.state_mut().lab().status();
    println!("{status}");
    if !status.contains("bit-identical") {
        bail!("the template was not found bit-identical: {status}");
    }
    click(harness, "Use in simulation")?;
    wait_until(harness, "the simulation takes the kernel", |app| {
        app.backend()
            .is_some_and(|b| b.user_kernel && b.kernel == Some(KernelChoice::User))
    })?;
    // "Measure kernels" of the diffusion view's GPU kernel section: the command its button
    // sends.
    let ctx = harness.ctx.clone();
    harness
        .state_mut()
        .apply(&ctx, Command::Diffusion(DiffusionCommand::MeasureKernels));
    wait_until(harness, "the kernels are measured", |app| {
        !app.diffusion().state().kernel_timings.measuring
    })?;
    if harness
        .state()
        .diffusion()
        .state()
        .kernel_timings
        .rows
        .is_empty()
    {
        bail!(
            "measuring the kernels failed: {:?}",
            harness.state().notices()
        );
    }
    Ok(())
}

/// (c) The diffusion view on the same GPU: the notebook's 2000x2000 field generated there with
/// cuFFT (the Field section says where and how long), playing with automatic steps.
fn diffusion_shot(out_dir: &Path) -> Result<()> {
    let renderer = SoftwareRenderer::default();
    let mut harness = open_diffusion(&renderer)?;
    let start = harness.state().frames_shown();
    wait_until(&mut harness, "100 frames are shown", |app| {
        app.frames_shown() >= start + 100
    })?;
    let generation = harness.state().diffusion().state().last_generation.clone();
    println!("field: {generation:?}");
    shot_with(&renderer, &mut harness, out_dir, "diffusion-h100.png")?;
    Ok(())
}

/// The app on CUDA, on the diffusion tab at the notebook's field size, playing.
fn open_diffusion(renderer: &SoftwareRenderer) -> Result<Harness<'static, HeatlabApp>> {
    let settings = Settings {
        backend: BackendChoice::Cuda,
        ..Settings::default()
    };
    let mut harness = build(renderer, settings, true);
    wait_until(&mut harness, "the field is shown and playing", |app| {
        app.is_ready() && app.is_playing()
    })?;
    Ok(harness)
}

/// The app with `settings` in a 1440x900 window painted by `renderer`, not remembered.
fn build(
    renderer: &SoftwareRenderer,
    settings: Settings,
    autoplay: bool,
) -> Harness<'static, HeatlabApp> {
    Harness::builder()
        .with_size(Vec2::new(1440.0, 900.0))
        .renderer(renderer.clone())
        .build_eframe(move |cc| {
            HeatlabApp::new(
                cc,
                AppOptions {
                    settings: Some(settings),
                    persist: false,
                    autoplay,
                    ..AppOptions::default()
                },
            )
        })
}

/// Paints the last frame of `harness` with `renderer` and saves it as `out_dir/name`, with no
/// pointer over the window (nothing hovered), as in a screenshot.
fn shot_with(
    renderer: &SoftwareRenderer,
    harness: &mut Harness<'_, HeatlabApp>,
    out_dir: &std::path::Path,
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

/// The heatlab binary whose hidden `lab-check` validates: `HEATLAB_BIN`, else beside this
/// program, else one folder up.
fn heatlab_binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("HEATLAB_BIN") {
        return Ok(PathBuf::from(path));
    }
    let me = std::env::current_exe().context("cannot find this program's path")?;
    let beside = me.parent().map(|dir| dir.join("heatlab"));
    let above = me
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("heatlab"));
    [beside, above]
        .into_iter()
        .flatten()
        .find(|path| path.is_file())
        .context("no heatlab binary beside this program or one folder up; set HEATLAB_BIN")
}

/// The app on CUDA, on the Kernel lab tab, in a 1440x900 window, once its field is shown.
fn open_app(renderer: &SoftwareRenderer) -> Result<Harness<'static, HeatlabApp>> {
    let mut field = Settings::default().field;
    field.size = GridSize::new(512, 512)?;
    let settings = Settings {
        backend: BackendChoice::Cuda,
        field,
        tab: "kernel-lab".parse().map_err(anyhow::Error::msg)?,
        ..Settings::default()
    };
    let mut harness = build(renderer, settings, false);
    wait_until(
        &mut harness,
        "the backend is known and the field shown",
        |app| app.backend().is_some() && app.is_ready(),
    )?;
    let state = harness.state_mut();
    if let Some(backend) = state.backend() {
        if backend.kind != BackendKind::Cuda {
            let reason = backend
                .cuda_unavailable
                .as_ref()
                .map_or_else(|| "it runs on the CPU".to_string(), ToString::to_string);
            bail!("these screenshots need CUDA, which cannot be used here: {reason}");
        }
        println!("on {}", backend.device);
    }
    Ok(harness)
}

/// Clicks the widget labelled `label`, as a user would, and lets the app take it.
fn click(harness: &mut Harness<'_, HeatlabApp>, label: &str) -> Result<()> {
    let Some(node) = harness.query_by_label(label) else {
        bail!("no \"{label}\" to click");
    };
    node.click();
    harness.run_steps(2);
    Ok(())
}

/// Runs frames until `done` holds, or fails after [`STAGE_LIMIT`] naming `what` and the
/// app's notices.
fn wait_until(
    harness: &mut Harness<'_, HeatlabApp>,
    what: &str,
    done: impl Fn(&mut HeatlabApp) -> bool,
) -> Result<()> {
    let start = Instant::now();
    loop {
        harness.step();
        if done(harness.state_mut()) {
            return Ok(());
        }
        if start.elapsed() > STAGE_LIMIT {
            bail!(
                "gave up after {} s waiting until {what}; notices: {:?}",
                STAGE_LIMIT.as_secs(),
                harness.state().notices()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
