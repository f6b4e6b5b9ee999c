//! `heatlab bench --basics SIDES`: the GPU basics' maximum ladder beside the notebook's own
//! Python rungs (NumPy, and Numba where it is installed), measured in one run.

use super::super::bench::BenchArgs;
use super::super::interrupt::Interrupt;
use super::super::output::{note, print};
use super::table;
use heatlab_engine::bench::basics::{time_notebook_maximum, NotebookMaximum};
use heatlab_engine::export::atomic::check_output;
use heatlab_engine::export::write_json;
use heatlab_engine::tutorial::basics::maximum::{self, MaximumLadder, MaximumOptions};
use heatlab_engine::tutorial::basics::{open_basics_gpu, BasicsOutcome};
use heatlab_engine::tutorial::RunControl;

/// What `--json` writes.
#[derive(Debug, serde::Serialize)]
struct BasicsBenchReport {
    heatlab_version: &'static str,
    date_utc: String,
    /// heatlab's ladder.
    heatlab: MaximumLadder,
    /// The notebook's rungs in Python, when Python with NumPy ran.
    notebook: Option<NotebookMaximum>,
    /// Why the notebook's rungs are missing.
    notebook_note: Option<String>,
}

/// Runs the ladder at `sides` and the notebook's rungs beside it.
pub fn bench_basics(
    args: &BenchArgs,
    sides: &[usize],
    interrupt: &Interrupt,
) -> anyhow::Result<()> {
    if let Some(path) = &args.json {
        check_output(path)?;
    }
    let (gpu, reason) = open_basics_gpu(args.backend)?;
    let gpu_note = reason.map(|reason| format!("the GPU rungs are missing: {reason}"));
    if let Some(text) = &gpu_note {
        note(text);
    }
    let options = MaximumOptions {
        sides: sides.to_vec(),
        seed: 42,
        repeats: u32::try_from(args.repeats).unwrap_or(u32::MAX).max(1),
    };
    let control = RunControl {
        cancel: interrupt.flag(),
        progress: &|_| {},
    };
    let ladder = maximum::run(&options, gpu.as_ref(), control)?;
    // The Python rungs run after heatlab's, so that neither slows the other.
    let notebook = if args.no_numpy {
        Err("--no-numpy".to_string())
    } else {
        time_notebook_maximum(sides, args.repeats)
    };
    let outcome = BasicsOutcome::Maximum(ladder);
    let mut text = table::format(&outcome, gpu_note.as_deref());
    match &notebook {
        Ok(notebook) => text.push_str(&notebook_table(notebook, sides)),
        Err(reason) => text.push_str(&format!(
            "the notebook's Python rungs did not run: {reason}\n"
        )),
    }
    print(&text)?;
    if let Some(path) = &args.json {
        let BasicsOutcome::Maximum(heatlab) = outcome else {
            return Ok(());
        };
        let (notebook, notebook_note) = match notebook {
            Ok(notebook) => (Some(notebook), None),
            Err(reason) => (None, Some(reason)),
        };
        let report = BasicsBenchReport {
            heatlab_version: env!("CARGO_PKG_VERSION"),
            date_utc: heatlab_engine::measure::utc_now(),
            heatlab,
            notebook,
            notebook_note,
        };
        write_json(path, &report)?;
        note(&format!("wrote {}", path.display()));
    }
    Ok(())
}

/// The notebook's rungs, side by side, as the table's second half.
fn notebook_table(notebook: &NotebookMaximum, sides: &[usize]) -> String {
    let mut text = format!(
        "the notebook's rungs in Python: NumPy {}, Numba {}, CUDA {}\n",
        notebook.numpy,
        notebook.numba.as_deref().unwrap_or("not installed"),
        notebook
            .cuda_device
            .as_deref()
            .unwrap_or("not found by Numba")
    );
    for &side in sides {
        text.push_str(&format!("{side}^3\n"));
        for (name, stats) in notebook.rungs(side) {
            text.push_str(&format!("  {name:<50} {:>26}\n", stats.seconds_text()));
        }
    }
    for line in &notebook.notes {
        text.push_str(&format!("note: {line}\n"));
    }
    text
}
