//! The tutorial tabs' thread: the jobs it takes and the events it sends back ([`jobs`]), the
//! thread itself ([`runner`]) and what one tab shows and remembers ([`state`]).

pub mod jobs;
pub mod runner;
pub mod state;

pub use jobs::{Job, JobProgress, Outcome, TutorialEvent, Visual};
pub use runner::TutorialWorker;
pub use state::PanelState;

/// A count for people: `1k`, `31.6k`, `1M`, `100M`, `1e9`.
pub fn format_count(n: u64) -> String {
    let trim = |value: f64, unit: &str| {
        let text = format!("{value:.1}");
        format!("{}{unit}", text.trim_end_matches(".0"))
    };
    let x = n as f64;
    if n < 1_000 {
        n.to_string()
    } else if n < 1_000_000 {
        trim(x / 1e3, "k")
    } else if n < 1_000_000_000 {
        trim(x / 1e6, "M")
    } else {
        let exponent = x.log10().floor();
        let mantissa = x / 10f64.powf(exponent);
        if (mantissa - 1.0).abs() < 1e-9 {
            format!("1e{exponent:.0}")
        } else {
            format!("{mantissa:.2}e{exponent:.0}")
        }
    }
}
