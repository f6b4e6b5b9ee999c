//! The GPU basics tab driven headlessly by egui_kittest: the tab is opened and its lessons run
//! as a person would, with the CPU backend chosen, so the tab must show the CPU rungs and say
//! why the GPU's are missing. The runs go to the tab's thread, so every check waits (with a
//! deadline) for the state it expects.

use crate::common;
use common::app::wait_until;

use eframe::egui::Vec2;
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;
use heatlab::ui::basics::GpuState;
use heatlab::ui::tutorial::Tab;
use heatlab::ui::{AppOptions, HeatlabApp, Settings};
use heatlab_engine::compute::BackendChoice;
use heatlab_engine::grid::GridSize;
use heatlab_engine::tutorial::basics::geometry::GeometryOptions;
use heatlab_engine::tutorial::basics::maximum::MaximumOptions;
use heatlab_engine::tutorial::basics::{BasicsLesson, BasicsOutcome, BasicsRequest};

fn harness() -> Harness<'static, HeatlabApp> {
    harness_on(Tab::Diffusion)
}

/// The app on `tab`, on the CPU backend with a small field (egui_kittest checks, as it builds
/// the harness, that every widget shown has a name a screen reader can say).
#[expect(
    clippy::unwrap_used,
    reason = "a test helper: its failure is the test's failure, with this message"
)]
fn harness_on(tab: Tab) -> Harness<'static, HeatlabApp> {
    let mut field = Settings::default().field;
    field.size = GridSize::new(32, 32).unwrap();
    let settings = Settings {
        backend: BackendChoice::Cpu,
        field,
        tab,
        ..Settings::default()
    };
    crate::common::app::build_app(
        AppOptions {
            settings: Some(settings),
            persist: false,
            ..AppOptions::default()
        },
        Vec2::new(1440.0, 900.0),
    )
}

/// Runs frames until the tab is idle again (and two more), or fails after the deadline.
fn wait_until_idle(harness: &mut Harness<'_, HeatlabApp>, what: &str) {
    wait_until(harness, what, |app| !app.basics().is_busy());
    harness.run_steps(2);
}

fn open_basics(harness: &mut Harness<'_, HeatlabApp>) {
    harness.get_by_label("GPU basics").click();
    harness.run_steps(2);
    assert_eq!(harness.state().settings().tab, Tab::GpuBasics);
}

#[test]
fn the_tab_opens_on_its_own_with_every_control_named() {
    let mut harness = harness_on(Tab::GpuBasics);
    for lesson in BasicsLesson::ALL {
        // The side panel's entry comes first; the heading of the lesson shown repeats it.
        harness
            .query_all_by_label(lesson.title())
            .next()
            .unwrap()
            .click();
        harness.run_steps(2);
        assert_eq!(harness.state().basics().lesson, lesson);
    }
    harness.get_by_label_contains("the GPU is opened on the first run");
}

#[test]
fn the_maximum_ladder_runs_its_cpu_rungs_and_says_why_the_gpu_is_missing() {
    let mut harness = harness();
    open_basics(&mut harness);
    if let Some(BasicsRequest::Maximum(options)) = harness
        .state_mut()
        .basics_mut()
        .request_mut(BasicsLesson::Maximum)
    {
        *options = MaximumOptions {
            sides: vec![8, 16],
            seed: 1,
            repeats: 2,
        };
    }
    harness.get_by_label("Run").click();
    wait_until_idle(&mut harness, "the ladder is done");
    let basics = harness.state().basics();
    let Some(BasicsOutcome::Maximum(ladder)) = basics.outcome(BasicsLesson::Maximum) else {
        panic!("no ladder: {:?}", basics.notice());
    };
    assert_eq!(
        ladder.steps.iter().map(|s| s.n).collect::<Vec<_>>(),
        vec![512, 4096]
    );
    assert!(ladder
        .steps
        .iter()
        .all(|s| s.gpu.is_none() && s.naive_loop.runs_s.len() == 2));
    assert_eq!(ladder.crossover_host_arrays, None);
    let GpuState::Missing(reason) = basics.gpu() else {
        panic!(
            "the CPU backend was chosen, yet the GPU state is {:?}",
            basics.gpu()
        );
    };
    assert!(reason.contains("CPU backend"), "{reason}");
    harness.get_by_label_contains("No GPU rungs");
    assert!(harness.query_all_by_label("naive loop").count() >= 1);
    assert!(harness.query_all_by_label_contains(" ± ").count() >= 6);
}

#[test]
fn an_unguarded_launch_is_caught_and_explained() {
    let mut harness = harness();
    open_basics(&mut harness);
    harness.get_by_label("Launch geometry").click();
    harness.run_steps(2);
    // 1000 elements and 4 blocks of 256: 24 threads past the end, and no guard.
    harness
        .state_mut()
        .basics_mut()
        .set_geometry(GeometryOptions {
            n: 1000,
            grid: [4, 1],
            guarded: false,
            repeats: 1,
            ..GeometryOptions::notebook_1d()
        });
    harness.run_steps(2);
    harness.get_by_label("Run").click();
    wait_until_idle(&mut harness, "the launch is done");
    let Some(BasicsOutcome::Geometry(run)) =
        harness.state().basics().outcome(BasicsLesson::Geometry)
    else {
        panic!(
            "no geometry outcome: {:?}",
            harness.state().basics().notice()
        );
    };
    assert_eq!(run.idle_threads, 24);
    assert_eq!(run.tally.writes_past_end, 24);
    harness.get_by_label_contains("writes landed past the end");
    harness.get_by_label_contains("launches so far");
    // The history's row says those threads wrote, not that they idled.
    harness.get_by_label("24, writing");
    assert!(harness.query_by_label("24, idle").is_none());
}

#[test]
fn every_lesson_runs_and_the_device_lesson_says_it_needs_a_gpu() {
    let mut harness = harness();
    open_basics(&mut harness);
    // Every lesson at a small size: the device lesson has nothing to read without a GPU.
    let small: [(BasicsLesson, BasicsRequest); 3] = [
        (
            BasicsLesson::SinExp,
            BasicsRequest::SinExp {
                n: 10_001,
                repeats: 1,
            },
        ),
        (
            BasicsLesson::RowSums,
            BasicsRequest::RowSums {
                rows: 33,
                cols: 65,
                seed: 2,
                repeats: 1,
            },
        ),
        (
            BasicsLesson::Reduce,
            BasicsRequest::Reduce {
                n: 10_007,
                seed: 2,
                repeats: 1,
            },
        ),
    ];
    for (lesson, request) in small {
        if let Some(slot) = harness.state_mut().basics_mut().request_mut(lesson) {
            *slot = request;
        }
    }
    if let Some(BasicsRequest::Maximum(options)) = harness
        .state_mut()
        .basics_mut()
        .request_mut(BasicsLesson::Maximum)
    {
        options.sides = vec![8];
        options.repeats = 1;
    }
    harness.get_by_label("Run all").click();
    wait_until_idle(&mut harness, "every lesson is done");
    let basics = harness.state().basics();
    for lesson in [
        BasicsLesson::Maximum,
        BasicsLesson::Geometry,
        BasicsLesson::SinExp,
        BasicsLesson::RowSums,
        BasicsLesson::Reduce,
    ] {
        assert!(
            basics.outcome(lesson).is_some(),
            "{lesson} did not run: {:?}",
            basics.notice()
        );
    }
    assert!(basics.outcome(BasicsLesson::Device).is_none());
    harness.get_by_label("The device").click();
    harness.run_steps(2);
    harness.get_by_label_contains("reads the GPU's own figures");
}
