//! The sources section (heaters switched and their power typed, thermostats), the side editor
//! above the views and the simulated time in the status line, driven as a person would.

use eframe::egui::accesskit::Role;
use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::diffusion::DiffusionCommand;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::{
    material, CellKind, Heater, HeaterPower, Material, Shape, SideCondition,
};
use heatlab_engine::session::diffusion::ProblemCommand;

use super::common::app::{app_harness, has_notice, wait_until};
use super::common::pointer::type_into;

/// The heater these tests paint: 50 W/m of copper.
fn heater(copper: Material) -> CellKind {
    CellKind {
        name: "Heater 50 W/m".into(),
        heater: Some(Heater {
            power: HeaterPower::Total(50.0),
            on: true,
        }),
        ..CellKind::of(copper)
    }
}

fn settings(size: GridSize) -> Settings {
    let mut settings = Settings::default();
    settings.field.size = size;
    settings
}

/// The app on a field of `size`, tall enough for the whole side panel, with `heater` painted on
/// a rectangle of 4 x 6 cells.
fn app_with_heater(size: GridSize, heater: CellKind) -> (Harness<'static, HeatlabApp>, Settings) {
    let mut settings = settings(size);
    let mut harness = app_harness(settings.clone(), Vec2::new(1400.0, 3000.0));
    let paint = DiffusionCommand::Problem(ProblemCommand::Paint {
        shape: Shape::Rectangle {
            from: (10.0, 10.0),
            to: (14.0, 16.0),
        },
        kind: heater,
    });
    harness
        .state_mut()
        .diffusion_mut()
        .apply(paint, &mut settings);
    wait_until(&mut harness, "the heater is painted", |app| {
        problem_of(app).is_some_and(|p| p.kinds.len() == 2)
    });
    (harness, settings)
}

fn problem_of(app: &HeatlabApp) -> Option<std::sync::Arc<heatlab_engine::problem::HeatProblem>> {
    app.diffusion().state().problem.clone()
}

fn heater_of(app: &HeatlabApp) -> Option<Heater> {
    problem_of(app).and_then(|p| p.kinds.get(1).and_then(|k| k.heater))
}

fn click(harness: &mut Harness<'_, HeatlabApp>, role: Role, label: &str) {
    harness.get_by_role_and_label(role, label).scroll_to_me();
    harness.run_steps(2);
    harness.get_by_role_and_label(role, label).click();
    harness.run_steps(2);
}

#[test]
fn a_heater_is_switched_and_its_power_typed_in_the_sources_section() {
    let copper = material::find("copper").unwrap();
    let (mut harness, _settings) = app_with_heater(GridSize::new(32, 48).unwrap(), heater(copper));
    click(&mut harness, Role::CheckBox, "Heater 50 W/m");
    wait_until(&mut harness, "the heater is off", |app| {
        heater_of(app).is_some_and(|h| !h.on)
    });
    type_into(&mut harness, "power", "2e6");
    wait_until(&mut harness, "the heater gives 2e6 W/m", |app| {
        heater_of(app).is_some_and(|h| h.power == HeaterPower::Total(2e6) && !h.on)
    });
    // Text that is not a number is refused: a notice, and the heater keeps its power.
    type_into(&mut harness, "power", "lots");
    wait_until(&mut harness, "the refusal is told", |app| {
        has_notice(app, "\"lots\" is not a power")
    });
    harness.run_steps(5);
    assert_eq!(
        heater_of(harness.state()).unwrap().power,
        HeaterPower::Total(2e6)
    );
    // The status line tells the simulated time once the problem steps.
    click(&mut harness, Role::Button, "Step");
    wait_until(&mut harness, "a problem frame", |app| {
        app.diffusion()
            .state()
            .problem_frame
            .as_ref()
            .is_some_and(|f| f.simulated_seconds > 0.0)
    });
    harness.run_steps(2);
    assert!(
        harness.query_by_label_contains("simulated ").is_some(),
        "the status line shows the simulated time"
    );
}

#[test]
fn the_side_editor_sets_a_side_and_starts_a_problem_on_the_plate() {
    let settings = settings(GridSize::new(32, 48).unwrap());
    let mut harness = app_harness(settings, Vec2::new(1400.0, 1000.0));
    assert!(problem_of(harness.state()).is_none());
    harness
        .get_by_role_and_label(Role::ComboBox, "top side")
        .click();
    harness.run_steps(2);
    harness.get_by_label("fixed").click();
    wait_until(&mut harness, "the top side is fixed", |app| {
        problem_of(app).is_some_and(|p| matches!(p.sides.top, SideCondition::Fixed { .. }))
    });
    type_into(&mut harness, "top °C", "80");
    wait_until(&mut harness, "the top side is at 80 °C", |app| {
        problem_of(app).is_some_and(|p| p.sides.top == SideCondition::Fixed { temperature: 80.0 })
    });
    let problem = problem_of(harness.state()).unwrap();
    assert_eq!(problem.sides.bottom, SideCondition::Insulated);
    // Periodic sides come in pairs: choosing it for the left side makes the right one too.
    harness
        .get_by_role_and_label(Role::ComboBox, "left side")
        .click();
    harness.run_steps(2);
    harness.get_by_label("periodic").click();
    wait_until(&mut harness, "left and right wrap", |app| {
        problem_of(app).is_some_and(|p| {
            p.sides.left == SideCondition::Periodic && p.sides.right == SideCondition::Periodic
        })
    });
}

#[test]
fn a_thermostat_without_a_probe_is_refused_and_one_with_a_probe_is_carried() {
    let copper = material::find("copper").unwrap();
    let (mut harness, _settings) = app_with_heater(GridSize::new(32, 48).unwrap(), heater(copper));
    let before = harness.state().diffusion().field_value_at(3, 3);
    assert!(before.is_some());
    click(&mut harness, Role::Button, "Add thermostat");
    wait_until(&mut harness, "the missing probe is told", |app| {
        has_notice(app, "choose the probe the thermostat reads")
    });
    harness.run_steps(5);
    let app = harness.state();
    assert!(problem_of(app).unwrap().thermostats.is_empty());
    assert_eq!(
        app.diffusion().field_value_at(3, 3),
        before,
        "the field is intact"
    );
    assert_eq!(problem_of(app).unwrap().kinds.len(), 2);

    harness
        .state_mut()
        .diffusion_mut()
        .paint_tools_mut()
        .probes
        .add(12, 13);
    harness.run_steps(2);
    type_into(&mut harness, "setpoint °C", "45");
    click(&mut harness, Role::Button, "Add thermostat");
    wait_until(&mut harness, "the problem carries the thermostat", |app| {
        problem_of(app).is_some_and(|p| p.thermostats.len() == 1)
    });
    let thermostat = problem_of(harness.state()).unwrap().thermostats[0].clone();
    assert_eq!(thermostat.heater_kind, 1);
    assert_eq!(thermostat.probe, (12, 13));
    assert_eq!(thermostat.setpoint, 45.0);
    assert_eq!(thermostat.every_steps, 10);
}
