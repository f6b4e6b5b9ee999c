//! `heatlab scenario`: check a scenario file (naming every error) and list the materials a
//! scenario can name.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::output::print;
use heatlab_engine::problem::{material, HeatProblem, HeaterPower};
use heatlab_engine::scenario::{self, Scenario};

/// Arguments of `heatlab scenario`.
#[derive(Debug, Clone, clap::Args)]
pub struct ScenarioArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ScenarioAction,
}

/// `heatlab scenario check` and `heatlab scenario materials`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ScenarioAction {
    /// Reads a scenario file (or a gallery problem by name), builds its problem and says what
    /// it holds, or names every error in it (exit status 1).
    Check {
        /// The scenario file (TOML), or a gallery problem's name.
        file: PathBuf,
    },
    /// Lists the gallery: classic problems shipped with heatlab, by topic, with their names
    /// for `heatlab run --scenario NAME` and whether an exact answer measures them.
    List,
    /// Lists the material library: conductivity, density, specific heat, diffusivity, source.
    Materials,
}

/// Runs `heatlab scenario`.
pub fn run(args: &ScenarioArgs) -> anyhow::Result<()> {
    match &args.action {
        ScenarioAction::Check { file } => {
            let scenario =
                scenario::gallery::load_file_or_named(file).map_err(|e| e.into_error())?;
            print(&describe(&scenario)?)?;
            Ok(())
        }
        ScenarioAction::List => Ok(print(&gallery_list())?),
        ScenarioAction::Materials => Ok(print(&materials_table())?),
    }
}

/// What a built scenario holds, for people.
pub fn describe(scenario: &Scenario) -> heatlab_engine::Result<String> {
    let problem = &scenario.problem;
    let tables = problem.tables()?;
    let dx = problem.spacing;
    let mut text = String::new();
    let _ = writeln!(text, "{}: ok", scenario.title());
    let _ = writeln!(
        text,
        "grid: {} cells of {} m ({:.4} m wide, {:.4} m high)",
        problem.size,
        dx,
        problem.size.cols as f64 * dx,
        problem.size.rows as f64 * dx
    );
    let counts = problem.kind_counts();
    for (kind, count) in problem.kinds.iter().zip(counts) {
        let _ = writeln!(text, "  {}", kind_line(problem, kind, count));
    }
    for side in heatlab_engine::problem::Side::ALL {
        let _ = writeln!(text, "{side} side: {}", problem.sides.get(side));
    }
    let _ = write!(
        text,
        "time step: {} ({} of the stability limit {})",
        seconds(tables.dt),
        match problem.time_step {
            heatlab_engine::problem::TimeStep::Fraction(f) => format!("{f}"),
            heatlab_engine::problem::TimeStep::Seconds(_) =>
                format!("{:.3}", tables.dt / tables.stability_limit),
        },
        seconds(tables.stability_limit)
    );
    if let Some(duration) = scenario.duration() {
        let _ = write!(
            text,
            "\nduration: {duration} s = {} steps",
            tables.steps_for(duration)?
        );
    }
    text.push('\n');
    Ok(text)
}

/// Seconds with four significant digits.
fn seconds(value: f64) -> String {
    if (1e-3..1e5).contains(&value) {
        format!("{value:.4} s")
    } else {
        format!("{value:.4e} s")
    }
}

fn kind_line(
    problem: &HeatProblem,
    kind: &heatlab_engine::problem::CellKind,
    count: usize,
) -> String {
    let m = &kind.material;
    let mut line = format!("{}: {} cells", kind.name, count);
    if kind.name != m.name {
        let _ = write!(line, " of {}", m.name);
    }
    let _ = write!(
        line,
        " (k {} W/m/K, rho {} kg/m³, c_p {} J/kg/K)",
        m.conductivity, m.density, m.specific_heat
    );
    if let Some(t) = kind.held_temperature {
        let _ = write!(line, ", held at {t} °C");
    }
    if let Some(heater) = kind.heater {
        let watts = match heater.power {
            HeaterPower::Total(p) => p,
            HeaterPower::PerVolume(d) => d * problem.spacing * problem.spacing * count as f64,
        };
        let state = if heater.on { "on" } else { "off" };
        let _ = write!(line, ", heater {watts} W per metre of depth ({state})");
    }
    line
}

fn gallery_list() -> String {
    use scenario::gallery::{of_topic, Topic};
    let mut text = String::new();
    for topic in Topic::ALL {
        let _ = writeln!(text, "{}:", topic.title());
        for entry in of_topic(topic) {
            let exact = entry
                .exact
                .map_or_else(String::new, |kind| format!(" [exact: {}]", kind.name()));
            let _ = writeln!(text, "  {:<22} {}{exact}", entry.name, entry.title());
        }
    }
    text.push_str(
        "run one with: heatlab run --scenario NAME (or open it from the app's Gallery menu)\n",
    );
    text
}

fn materials_table() -> String {
    let mut text = format!(
        "{:<18} {:>10} {:>10} {:>10} {:>12}  source\n",
        "material", "k W/m/K", "rho kg/m3", "c_p J/kgK", "alpha m2/s"
    );
    for m in material::library() {
        let _ = writeln!(
            text,
            "{:<18} {:>10} {:>10} {:>10} {:>12.3e}  {}",
            m.name,
            m.conductivity,
            m.density,
            m.specific_heat,
            m.diffusivity(),
            m.source
        );
    }
    text
}
