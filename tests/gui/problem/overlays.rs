//! Isotherms, heat-flux arrows, the hover readout with units and the line tool's heat flow, on
//! problems whose answer is known: a copper plate between a hot and a cold side, stepped to its
//! steady state, is linear across.

use crate::common::software_renderer;

use std::sync::Arc;

use eframe::egui::{self, Vec2};
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::{material, CellKind, HeatProblem, SideCondition};
use heatlab_engine::session::diffusion::{FramePart, ProblemCommand};
use software_renderer::SoftwareRenderer;

use crate::common::app::{app_harness, apply, wait_until};

/// Copper's conductivity, W/(m·K).
const K_COPPER: f64 = 401.0;
/// The cells' side, m.
const SPACING: f64 = 0.001;
/// Steps that bring the plates below to their steady state (the slowest mode of 40 cells
/// decays by e every ~900 steps at 0.9 of the stability limit).
const STEADY_STEPS: u64 = 30_000;

/// A `size` plate of copper with 1 mm cells, 100 °C on the left side and 0 °C on the right.
fn hot_and_cold_plate(size: GridSize) -> HeatProblem {
    let Some(copper) = material::find("copper") else {
        panic!("the library has no copper");
    };
    let mut problem = HeatProblem::uniform(size, SPACING, copper);
    problem.sides.left = SideCondition::Fixed { temperature: 100.0 };
    problem.sides.right = SideCondition::Fixed { temperature: 0.0 };
    problem
}

/// The steady temperature of column `col` of `cols`: linear from the left side's 100 °C at
/// x = 0 to the right's 0 °C at x = cols, through the cells' centres.
fn steady(col: usize, cols: usize) -> f64 {
    100.0 - 100.0 * (col as f64 + 0.5) / cols as f64
}

/// Sets `problem` and steps it `steps` steps.
fn set_and_step(
    harness: &mut Harness<'static, HeatlabApp>,
    settings: &mut Settings,
    problem: HeatProblem,
    steps: u64,
) {
    let set = ProblemCommand::Set(Some(Box::new(problem)));
    apply(harness, settings, DiffusionCommand::Problem(set));
    wait_until(harness, "the problem is reported", |app| {
        app.diffusion().state().problem.is_some()
    });
    apply(harness, settings, DiffusionCommand::Step(steps));
    wait_until(harness, "the steps are taken", |app| {
        app.step_count() == steps
    });
}

#[test]
fn zoomed_in_the_isotherms_and_arrows_match_the_cells_of_a_linear_plate() {
    let size = GridSize::new(24, 40).unwrap();
    let mut settings = Settings::default();
    settings.field.size = size;
    let mut harness = app_harness(settings.clone(), Vec2::new(1600.0, 1000.0));
    set_and_step(
        &mut harness,
        &mut settings,
        hot_and_cold_plate(size),
        STEADY_STEPS,
    );
    {
        let overlays = harness.state_mut().diffusion_mut().overlays_mut();
        overlays.isotherms = true;
        overlays.arrows = true;
        overlays.levels_text = "25, 50, 75".into();
    }
    harness.run_steps(3);
    // The whole plate: straight vertical isotherms where the steady line crosses each level.
    let overlays = harness.state().diffusion().overlays();
    assert_eq!(overlays.levels_drawn(), &[25.0, 50.0, 75.0]);
    // Each isotherm is labelled with its temperature.
    assert_eq!(overlays.labels_drawn(), ["25 °C", "50 °C", "75 °C"]);
    for (level, x) in [(0, 30.0), (1, 20.0), (2, 10.0)] {
        let on: Vec<_> = overlays
            .segments()
            .iter()
            .filter(|s| s.level == level)
            .collect();
        assert_eq!(on.len(), size.rows - 1, "level {level}");
        for s in on {
            assert!(
                (s.from[0] - x).abs() < 1e-3 && (s.to[0] - x).abs() < 1e-3,
                "{s:?}"
            );
        }
    }
    // Zoomed in four times: a cell is wider than the arrows' spacing, so each cell on screen
    // has its arrow, and only the middle isotherm is in view.
    apply(&mut harness, &mut settings, DiffusionCommand::ZoomIn);
    apply(&mut harness, &mut settings, DiffusionCommand::ZoomIn);
    harness.run_steps(4);
    assert_eq!(harness.state().zoom(), 4.0);
    let panel = harness.state().diffusion();
    let overlays = panel.overlays();
    assert!(overlays.segments().iter().all(|s| s.level == 1));
    assert!(!overlays.segments().is_empty());
    let arrows = overlays.drawn_arrows();
    let mut columns: Vec<f32> = arrows.iter().map(|a| a.at[0]).collect();
    columns.sort_by(f32::total_cmp);
    columns.dedup();
    assert!(columns.len() >= 8, "{columns:?}");
    assert!(
        columns.windows(2).all(|w| w[1] - w[0] == 1.0),
        "one arrow per cell: {columns:?}"
    );
    let value = |row: usize, col: usize| {
        let (value, factor) = panel.field_value_at(row, col).unwrap();
        assert_eq!(factor, 1, "single cells");
        f64::from(value)
    };
    for arrow in arrows {
        let (row, col) = (arrow.at[1] as usize, arrow.at[0] as usize);
        assert_eq!([col as f32 + 0.5, row as f32 + 0.5], arrow.at);
        // -k dT/dx from the cells either side, as the model's faces conduct; heat flows to the
        // cold side, at k times the slope.
        let expected = -K_COPPER * (value(row, col + 1) - value(row, col - 1)) / (2.0 * SPACING);
        assert!(
            (arrow.flux[0] - expected).abs() < 1e-6 * expected.abs(),
            "{arrow:?}"
        );
        let slope = 100.0 / size.cols as f64 / SPACING;
        assert!((arrow.flux[0] - K_COPPER * slope).abs() < 1e-3 * K_COPPER * slope);
        assert!(arrow.flux[1].abs() < 1e-3 * K_COPPER * slope, "{arrow:?}");
    }
    // Their cost is part of the frame's timings.
    let split = harness.state().timings().mean_split();
    assert!(
        split.iter().any(|(part, _)| *part == FramePart::Overlays),
        "{split:?}"
    );
}

#[test]
fn the_hover_readout_names_the_material_its_temperature_and_heat_flux() {
    let size = GridSize::new(24, 40).unwrap();
    let mut settings = Settings::default();
    settings.field.size = size;
    // 1280x720: the readout once ran off the right edge of the window there.
    let mut harness = app_harness(settings.clone(), Vec2::new(1280.0, 720.0));
    set_and_step(
        &mut harness,
        &mut settings,
        hot_and_cold_plate(size),
        STEADY_STEPS,
    );
    let picture = harness.get_by_label("field picture").rect();
    // Near the right edge of the picture, where a readout to the right would not fit.
    let at = egui::pos2(picture.max.x - 3.0, picture.center().y);
    harness.hover_at(at);
    harness.run_steps(3);
    let readout = harness.get_by_label_contains("W/m²");
    let text = readout.accesskit_node().value().unwrap_or_default();
    assert!(text.contains("copper"), "{text}");
    assert!(text.contains("°C"), "{text}");
    let rect = readout.rect();
    // Never past the picture's right edge (where it once left the window); inside it
    // vertically too where the picture is taller than the readout.
    assert!(
        rect.min.x >= picture.min.x && rect.max.x <= picture.max.x,
        "{rect:?} in {picture:?}"
    );
    if picture.height() >= rect.height() {
        assert!(
            rect.min.y >= picture.min.y && rect.max.y <= picture.max.y,
            "{rect:?} in {picture:?}"
        );
    }
    // The temperature and flux of the hovered cell: the last column.
    let col = size.cols - 1;
    let celsius: f64 = text
        .split("   ")
        .find(|part| part.ends_with("°C"))
        .and_then(|part| part.trim_end_matches("°C").trim().parse().ok())
        .unwrap();
    assert!((celsius - steady(col, size.cols)).abs() < 1e-3, "{text}");
    let flux: f64 = text
        .split("heat flux ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|number| number.parse().ok())
        .unwrap();
    let expected = K_COPPER * 100.0 / size.cols as f64 / SPACING;
    assert!((flux - expected).abs() < 1e-3 * expected, "{text}");
}

#[test]
fn the_line_tool_reports_the_heat_flow_through_the_line() {
    let size = GridSize::new(24, 40).unwrap();
    let mut settings = Settings::default();
    settings.field.size = size;
    let mut harness = app_harness(settings.clone(), Vec2::new(1280.0, 800.0));
    set_and_step(
        &mut harness,
        &mut settings,
        hot_and_cold_plate(size),
        STEADY_STEPS,
    );
    // Down column 20, 18 cells long: the heat crossing it flows from its right-hand side (the
    // hot left, looking down the line) to its left.
    harness
        .state_mut()
        .diffusion_mut()
        .paint_tools_mut()
        .profile
        .set((2.0, 20.0), (20.0, 20.0), size);
    harness.run_steps(2);
    apply(&mut harness, &mut settings, DiffusionCommand::Step(10));
    wait_until(&mut harness, "the line's flow is sampled", |app| {
        app.diffusion()
            .paint_tools()
            .profile
            .flow()
            .latest()
            .is_some_and(|(step, _)| step == STEADY_STEPS + 10)
    });
    let (_, flow) = harness
        .state()
        .diffusion()
        .paint_tools()
        .profile
        .flow()
        .latest()
        .unwrap();
    // k · slope · length, W per metre of depth.
    let expected = K_COPPER * (100.0 / size.cols as f64 / SPACING) * (18.0 * SPACING);
    assert!(
        (flow + expected).abs() < 1e-3 * expected,
        "{flow} W/m vs -{expected}"
    );
    harness.get_by_label_contains("heat flow through the line");
}

/// The app with a copper plate around a stainless-steel disc between a hot and a cold side, the
/// isotherms and the heat-flux arrows on, painted by the software renderer (written to
/// `$HEATLAB_RENDER_OUT/isotherms_and_flux.png` when that is set): the overlays change the
/// picture, and the arrows inside the poorly conducting disc are short.
#[test]
fn isotherms_and_arrows_are_drawn_over_the_field() {
    let size = GridSize::new(60, 90).unwrap();
    let mut settings = Settings::default();
    settings.field.size = size;
    let renderer = SoftwareRenderer::default();
    let app_settings = settings.clone();
    let mut harness = crate::common::app::build_app_with(
        Harness::builder().renderer(renderer.clone()),
        AppOptions {
            settings: Some(app_settings),
            persist: false,
            autoplay: false,
            ..AppOptions::default()
        },
        Vec2::new(1440.0, 900.0),
    );
    wait_until(&mut harness, "the field is shown", HeatlabApp::is_ready);
    let mut problem = hot_and_cold_plate(size);
    let steel = problem
        .kind_index(CellKind::of(material::find("stainless-steel").unwrap()))
        .unwrap();
    problem.paint(steel, |row, col| {
        let (dr, dc) = (row as f64 - 30.0, col as f64 - 45.0);
        dr * dr + dc * dc < 15.0 * 15.0
    });
    set_and_step(&mut harness, &mut settings, problem, 60_000);
    let problem: Arc<HeatProblem> = harness.state().diffusion().state().problem.clone().unwrap();
    let picture = harness.get_by_label("field picture").rect();
    let render = |harness: &mut Harness<'static, HeatlabApp>| {
        harness.input_mut().events.push(egui::Event::PointerGone);
        harness.run_steps(3);
        let clear = eframe::App::clear_color(harness.state(), &harness.ctx.global_style().visuals);
        renderer
            .render(&harness.ctx, harness.output(), clear)
            .unwrap()
    };
    let plain = render(&mut harness);
    {
        let overlays = harness.state_mut().diffusion_mut().overlays_mut();
        overlays.isotherms = true;
        overlays.arrows = true;
    }
    let drawn = render(&mut harness);
    let changed = plain
        .enumerate_pixels()
        .filter(|(x, y, pixel)| {
            picture.contains(egui::pos2(*x as f32 + 0.5, *y as f32 + 0.5))
                && drawn.get_pixel(*x, *y) != *pixel
        })
        .count();
    let area = (picture.width() * picture.height()) as usize;
    assert!(changed > area / 50, "{changed} of {area} pixels changed");
    // Inside the disc the arrows are short: steel conducts 27 times less than copper, and the
    // disc's flux is about 7% of the plate's far from it.
    let overlays = harness.state().diffusion().overlays();
    let in_steel = |a: &&heatlab_engine::render::flux::Arrow| {
        let cell = a.at[1] as usize * size.cols + a.at[0] as usize;
        problem.map[cell] == steel
    };
    let magnitude = |a: &heatlab_engine::render::flux::Arrow| a.flux[0].hypot(a.flux[1]);
    let arrows = overlays.drawn_arrows();
    let steel_most = arrows
        .iter()
        .filter(in_steel)
        .map(magnitude)
        .fold(0.0, f64::max);
    let copper_most = arrows.iter().map(magnitude).fold(0.0, f64::max);
    assert!(
        steel_most > 0.0 && steel_most < copper_most / 5.0,
        "{steel_most} vs {copper_most}"
    );
    if let Some(dir) = std::env::var_os("HEATLAB_RENDER_OUT") {
        let path = std::path::Path::new(&dir).join("isotherms_and_flux.png");
        software_renderer::save_png(&drawn, &path).unwrap();
    }
}
