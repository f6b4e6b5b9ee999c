//! `heatlab verify --physics`: the heat-problem scheme against exact answers, on the chosen
//! backend (see [`heatlab_engine::verify::physics`]). Exits non-zero when a case fails.

use std::path::Path;

use anyhow::Context;

use super::output;
use heatlab_engine::compute::{create_backend, BackendChoice};
use heatlab_engine::verify::physics::validate;

/// Runs every validation case on the backend `choice` names, prints the table and writes the
/// report as JSON to `json` if given.
pub fn run(choice: BackendChoice, json: Option<&Path>) -> anyhow::Result<()> {
    let (mut backend, fallback) = create_backend(choice)?;
    if let Some(fallback) = fallback {
        output::note(&fallback.to_string());
    }
    let report = validate(backend.as_mut())?;
    if let Some(path) = json {
        heatlab_engine::export::write_json(path, &report)
            .with_context(|| "writing the physics validation report")?;
    }
    output::print(&report.text())?;
    if !report.passed() {
        anyhow::bail!("physics validation failed: {}", report.failed().join(", "));
    }
    Ok(())
}
