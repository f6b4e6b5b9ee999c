//! A problem built without a scenario file: the Gallery menu's "New problem…" window takes a
//! title, the grid's size and cell, a starting temperature, a duration and a material of the
//! user's own; a bad value is refused with its reason and changes nothing; Create opens it.

use eframe::egui::accesskit::Role;
use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::{HeatlabApp, Settings};
use heatlab_engine::grid::GridSize;

use super::common::app::{app_harness, wait_until};
use super::common::pointer::type_into;

fn click(harness: &mut Harness<'_, HeatlabApp>, role: Role, label: &str) {
    harness.get_by_role_and_label(role, label).click();
    harness.run_steps(2);
}

#[test]
fn a_problem_is_built_in_the_new_problem_window_and_opens() {
    let mut settings = Settings::default();
    settings.field.size = GridSize::new(32, 48).unwrap();
    let mut harness = app_harness(settings, Vec2::new(1440.0, 900.0));
    wait_until(&mut harness, "the first field", |app| {
        app.diffusion().state().field_size.is_some()
    });
    click(&mut harness, Role::Button, "Gallery");
    click(&mut harness, Role::Button, "New problem…");
    type_into(&mut harness, "title", "A foam strip");

    type_into(&mut harness, "rows", "twenty");
    assert!(harness
        .query_by_label_contains("\"twenty\" is not a number of rows")
        .is_some());
    type_into(&mut harness, "rows", "20");
    type_into(&mut harness, "columns", "120");
    type_into(&mut harness, "cell side (mm)", "0.5");
    type_into(&mut harness, "initial temperature (°C)", "60");
    type_into(&mut harness, "run for", "30 s");
    type_into(&mut harness, "name", "My foam");

    type_into(&mut harness, "k (W/(m·K))", "0.03");

    type_into(&mut harness, "ρ (kg/m³)", "30");
    type_into(&mut harness, "c_p (J/(kg·K))", "1400");
    click(&mut harness, Role::Button, "Add material");

    click(&mut harness, Role::Button, "Create");
    wait_until(&mut harness, "the new problem opened", |app| {
        app.diffusion()
            .state()
            .problem
            .as_ref()
            .is_some_and(|p| p.size == GridSize::new(20, 120).unwrap())
    });
    let state = harness.state().diffusion().state();
    let problem = state.problem.as_ref().unwrap();
    assert_eq!(problem.spacing, 5e-4);
    assert_eq!(problem.kinds[0].material.name, "my-foam");
    assert_eq!(problem.kinds[0].material.conductivity, 0.03);
    wait_until(&mut harness, "its duration and title", |app| {
        app.diffusion()
            .state()
            .problem_frame
            .as_ref()
            .is_some_and(|f| f.duration_seconds == Some(30.0))
            && app
                .diffusion()
                .opened_scenario()
                .is_some_and(|s| s.title == "A foam strip")
    });
    assert_eq!(
        harness
            .state()
            .diffusion()
            .field_value_at(10, 60)
            .unwrap()
            .0,
        60.0,
        "it starts at 60 °C"
    );
    assert!(
        harness.query_by_label("Create").is_none(),
        "the window closed"
    );
}
