//! The heat-problem scheme against exact answers (convective sides, flux sides, composite
//! walls, heaters and the energy ledger) on the CPU, and on CUDA when it is there: without a
//! GPU those tests skip and say so; with HEATLAB_REQUIRE_CUDA=1 a missing GPU is a failure.

use crate::common;
use common::backend::on_each_backend;

use std::process::Command;
use std::time::Duration;

use heatlab_engine::compute::{
    Backend, BackendKind, Boundary, CpuBackend, ProblemUpload, StepParams,
};
use heatlab_engine::problem::{EnergyExchange, StepTables};
use heatlab_engine::verify::physics::{self, Case, CaseReport};
use heatlab_engine::Grid;

/// The fast cases: convective sides, a flux side, a composite wall, heaters and the ledger.
const FAST: [(&str, Case); 4] = [
    ("slab", physics::convective_slab),
    ("flux", physics::flux_wall),
    ("composite", physics::composite_wall),
    ("heater", physics::insulated_heater),
];

fn assert_passes(report: &CaseReport, backend: &str) {
    assert!(
        report.passed(),
        "{} on {backend}:\n{}",
        report.name,
        report.text()
    );
}

on_each_backend! {
    /// The fast cases meet their exact answers, at each of their four resolutions.
    fn meets_the_exact_answers(backend, label) {
        for (name, case) in FAST {
            let report = case(backend).unwrap();
            assert_eq!(report.name, name);
            assert_eq!(report.resolutions.len(), 4);
            assert_passes(&report, label);
        }
    }
}

/// The CPU backend with a fault planted in the tables it is given.
struct Faulty {
    cpu: CpuBackend,
    fault: fn(&mut StepTables),
}

impl Backend for Faulty {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn device_name(&self) -> String {
        "faulty CPU".into()
    }
    fn step_method(&self) -> String {
        self.cpu.step_method()
    }
    fn upload(&mut self, field: &Grid) -> heatlab_engine::Result<()> {
        self.cpu.upload(field)
    }
    fn advance(&mut self, steps: u64, params: &StepParams) -> heatlab_engine::Result<Duration> {
        self.cpu.advance(steps, params)
    }
    fn download(&mut self) -> heatlab_engine::Result<Grid> {
        self.cpu.download()
    }
    fn laplacian(&mut self, boundary: Boundary) -> heatlab_engine::Result<Grid> {
        self.cpu.laplacian(boundary)
    }
    fn set_problem(&mut self, problem: Option<ProblemUpload<'_>>) -> heatlab_engine::Result<()> {
        let Some(upload) = problem else {
            return self.cpu.set_problem(None);
        };
        let mut tables = upload.tables.clone();
        (self.fault)(&mut tables);
        self.cpu.set_problem(Some(ProblemUpload {
            tables: &tables,
            ..upload
        }))
    }
    fn take_energy_exchange(&mut self) -> heatlab_engine::Result<EnergyExchange> {
        self.cpu.take_energy_exchange()
    }
    fn stored_energy(&mut self) -> heatlab_engine::Result<f64> {
        self.cpu.stored_energy()
    }
}

#[test]
fn planted_faults_fail_the_cases_they_touch() {
    // The arithmetic mean of two conductivities instead of the harmonic one at the interface.
    let arithmetic_interface: fn(&mut StepTables) = |t| {
        let n = t.kinds;
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let (gi, gj) = (t.pair[i * n + i], t.pair[j * n + j]);
                    let capacity_ratio = t.capacity[j] / t.capacity[i];
                    let mean_gain = 0.5 * (f64::from(gi) + f64::from(gj) * capacity_ratio);
                    t.pair[i * n + j] = mean_gain as f32;
                }
            }
        }
    };
    // A convective side 2 % too strong.
    let strong_sides: fn(&mut StepTables) = |t| t.side_gain.iter_mut().for_each(|g| *g *= 1.02);
    // Heaters 0.1 % too strong.
    let strong_heaters: fn(&mut StepTables) = |t| t.source.iter_mut().for_each(|s| *s *= 1.001);
    for (fault, case, name) in [
        (arithmetic_interface, FAST[2].1, "composite"),
        (strong_sides, FAST[0].1, "slab"),
        (strong_heaters, FAST[3].1, "heater"),
    ] {
        let mut faulty = Faulty {
            cpu: CpuBackend::new(),
            fault,
        };
        let report = case(&mut faulty).unwrap();
        assert!(
            !report.passed(),
            "{name} passed with a fault:\n{}",
            report.text()
        );
    }
}

#[test]
fn the_command_validates_every_case_and_writes_its_report() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("physics.json");
    let output = Command::new(common::heatlab_binary())
        .args(["verify", "--physics", "--backend", "cpu", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("11 of 11 cases passed"), "{stdout}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cases = report["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "linear",
            "flux",
            "composite",
            "slab",
            "gaussian",
            "heater",
            "rectangle",
            "solved-rectangle",
            "held-flux",
            "implicit-be",
            "implicit-cn"
        ]
    );
    for case in cases {
        for resolution in case["resolutions"].as_array().unwrap() {
            assert!(resolution["error"].as_f64().unwrap().is_finite(), "{case}");
        }
    }
}

#[test]
fn the_physics_page_lists_the_material_library() {
    let page = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/physics.md"));
    let table = physics::markdown::material_table();
    assert!(
        page.contains(&table),
        "docs/physics.md's material table differs from the library; it should read:\n{table}"
    );
}
