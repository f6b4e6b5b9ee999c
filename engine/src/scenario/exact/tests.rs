//! Every gallery problem with an exact answer, run on the CPU reference at its shipped
//! resolution for its shipped duration, ends within 1% of the answer's span.

use super::*;
use crate::problem::step::step_field;
use crate::scenario::gallery::GALLERY;

/// The error allowed at the end of a shipped run.
const TOLERANCE: f64 = 0.01;

/// Runs `scenario` as `heatlab run --scenario` does (whole steps covering its duration);
/// returns the field and the simulated seconds.
fn run(scenario: &crate::scenario::Scenario) -> (Grid, f64) {
    let problem = &scenario.problem;
    let tables = problem.tables().unwrap();
    let duration = scenario.duration().unwrap();
    let steps = (duration / tables.dt).ceil() as u64;
    let mut field = scenario.initial.clone();
    problem.apply_held(&mut field).unwrap();
    let mut next = field.clone();
    for _ in 0..steps {
        step_field(
            &tables,
            &problem.map,
            field.as_slice(),
            next.as_mut_slice(),
            problem.size.cols,
        );
        std::mem::swap(&mut field, &mut next);
    }
    (field, steps as f64 * tables.dt)
}

#[test]
fn every_gallery_answer_holds_to_one_percent_at_the_shipped_resolution() {
    let mut checked = 0;
    for entry in GALLERY.iter().filter(|e| e.exact.is_some()) {
        let scenario = entry.scenario().unwrap();
        let exact = ExactAnswer::new(entry.exact.unwrap(), &scenario.problem, &scenario.initial)
            .unwrap_or_else(|e| panic!("{}: {e}", entry.name));
        let (field, seconds) = run(&scenario);
        let error = exact.error(&field, seconds);
        // The run must have moved: the start is far from the answer at the end.
        let start_error = exact.error(&scenario.initial, seconds);
        println!(
            "{}: error {error:.2e} (the start's {start_error:.2e})",
            entry.name
        );
        assert!(error < TOLERANCE, "{}: error {error:.3e}", entry.name);
        assert!(
            start_error > 10.0 * TOLERANCE,
            "{}: {start_error:.3e}",
            entry.name
        );
        checked += 1;
    }
    assert!(
        checked >= 7,
        "{checked} gallery problems have exact answers"
    );
}

#[test]
fn answers_refuse_problems_they_do_not_describe() {
    let fin = crate::scenario::gallery::find("fin")
        .unwrap()
        .scenario()
        .unwrap();
    let error = ExactAnswer::new(ExactKind::BlockCooling, &fin.problem, &fin.initial).unwrap_err();
    assert!(error.to_string().contains("convective alike"), "{error}");
    let mut cooled = fin.problem.clone();
    cooled.sides.left = SideCondition::Insulated;
    assert!(ExactAnswer::new(ExactKind::Fin, &cooled, &fin.initial).is_err());
}

#[test]
fn known_values() {
    let find = |name| {
        crate::scenario::gallery::find(name)
            .unwrap()
            .scenario()
            .unwrap()
    };
    // The square's centre settles at a quarter of the way from cold to hot.
    let square = find("square-one-hot-side");
    let exact = ExactAnswer::new(
        ExactKind::SquareOneHotSide,
        &square.problem,
        &square.initial,
    )
    .unwrap();
    let centre =
        (exact.temperature(19, 19, 1.0).unwrap() + exact.temperature(20, 19, 1.0).unwrap()) / 2.0;
    assert!((centre - 25.0).abs() < 0.05, "{centre}");
    assert_eq!(
        exact.temperature(0, 0, 1.0),
        None,
        "a hot corner is not measured"
    );
    // Iron at 100 °C against steel at 0 °C meet at 69 °C from the start.
    let bars = find("two-blocks-contact");
    let exact = ExactAnswer::new(ExactKind::Contact, &bars.problem, &bars.initial).unwrap();
    let near = exact.temperature(0, 160, 1e6).unwrap();
    assert!((near - 69.15).abs() < 0.1, "{near}");
    // The linear profile falls in a straight line from 100 °C to 0 °C.
    let bar = find("linear-profile");
    let exact = ExactAnswer::new(ExactKind::Layers, &bar.problem, &bar.initial).unwrap();
    assert!((exact.temperature(0, 0, 0.0).unwrap() - 99.0).abs() < 1e-9);
    assert!((exact.temperature(0, 49, 0.0).unwrap() - 1.0).abs() < 1e-9);
}

#[test]
fn every_gallery_answer_is_compared_where_it_holds() {
    for entry in GALLERY.iter().filter(|e| e.exact.is_some()) {
        let scenario = entry.scenario().unwrap();
        let exact =
            ExactAnswer::new(entry.exact.unwrap(), &scenario.problem, &scenario.initial).unwrap();
        let duration = scenario.duration().unwrap();
        println!(
            "{}: {:?}, duration {duration} s",
            entry.name,
            exact.window()
        );
        assert!(
            exact.window().contains(duration),
            "{}: the scenario ends at {duration} s, outside {:?}",
            entry.name,
            exact.window()
        );
    }
}

#[test]
fn an_unbounded_answer_stops_holding_once_the_far_side_feels_the_change() {
    // The semi-infinite solid: within its window the march follows the erf; well past it the
    // insulated far face has warmed and the answer is off by far more.
    let entry = crate::scenario::gallery::find("semi-infinite").unwrap();
    let scenario = entry.scenario().unwrap();
    let exact =
        ExactAnswer::new(entry.exact.unwrap(), &scenario.problem, &scenario.initial).unwrap();
    let ExactWindow::Until(end) = exact.window() else {
        panic!("{:?}", exact.window());
    };
    let mut inside = scenario.clone();
    inside.file.time.duration = Some(end);
    let (field, seconds) = run(&inside);
    let within = exact.error(&field, seconds);
    let mut past = scenario;
    past.file.time.duration = Some(6.0 * end);
    let (field, seconds) = run(&past);
    let beyond = exact.error(&field, seconds);
    println!("error at the window's end {within:.2e}, at 6x {beyond:.2e}");
    assert!(within < TOLERANCE, "{within:.3e}");
    assert!(beyond > 5.0 * within, "{beyond:.3e} against {within:.3e}");
}
