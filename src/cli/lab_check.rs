//! `heatlab lab-check` (hidden): the child process of the Kernel lab's validation. It runs a
//! user's kernel against the CPU reference and prints one JSON [`ChildLine`] per line; the app
//! reads them with time limits and kills it if the kernel never returns. Whatever the kernel
//! does to this process's CUDA context stays here.

use std::io::Write;
use std::path::PathBuf;

use heatlab_engine::compute::Boundary;
use heatlab_engine::import::{import_field, read_to_end_bounded, BoundedReadError, LuminanceRange};
use heatlab_engine::lab::check::{run_checks, CheckRequest};
use heatlab_engine::lab::{ChildEnding, ChildLine};

/// Arguments of `heatlab lab-check`.
#[derive(Debug, Clone, clap::Args)]
pub struct LabCheckArgs {
    /// The kernel's source (`.cu`), written to the contract of `kernels/user_step.cu`.
    #[arg(long)]
    pub source: PathBuf,
    /// The current field (`.npy`, float32, 2-D) to step besides the small test fields.
    #[arg(long)]
    pub field: Option<PathBuf>,
    /// Steps on the current field.
    #[arg(long, default_value_t = 8)]
    pub steps: u64,
    /// Diffusion coefficient.
    #[arg(long, default_value_t = 0.25)]
    pub coeff: f32,
    /// The boundary in use (the current field's case runs under it if the kernel declares it).
    #[arg(long, default_value = "dirichlet")]
    pub boundary: Boundary,
}

/// Prints one line of the protocol; a parent that went away needs nothing more.
fn emit(line: &ChildLine) {
    if let Ok(text) = serde_json::to_string(line) {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}").and_then(|()| out.flush()).ok();
    }
}

/// Runs the checks and ends the process: status 0 when every case ran, 1 otherwise. It exits
/// at once, without dropping the CUDA objects of a context the kernel may have broken.
pub fn run(args: &LabCheckArgs) -> ! {
    let ending = match read_request(args) {
        Ok(request) => run_checks(&request, &mut |line| emit(&line)),
        Err(message) => ChildEnding::Failed { message },
    };
    let status = i32::from(ending != ChildEnding::Completed);
    emit(&ChildLine::End(ending));
    std::process::exit(status)
}

/// The longest kernel source read (a real one is a few KB; `/dev/zero` never ends).
const MAX_SOURCE_BYTES: u64 = 1 << 20;

fn read_request(args: &LabCheckArgs) -> Result<CheckRequest, String> {
    let path = &args.source;
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let bytes = read_to_end_bounded(file, MAX_SOURCE_BYTES).map_err(|e| match e {
        BoundedReadError::Io(e) => format!("cannot read {}: {e}", path.display()),
        BoundedReadError::Longer(limit) => format!(
            "{} is longer than {} KiB; a kernel source is a few KB of CUDA C",
            path.display(),
            limit >> 10
        ),
    })?;
    let source =
        String::from_utf8(bytes).map_err(|_| format!("{} is not UTF-8 text", path.display()))?;
    // The field's header is checked (size, memory) before its data is read.
    let current = match &args.field {
        Some(path) => Some(
            import_field(path, LuminanceRange::default())
                .map_err(|e| e.to_string())?
                .0,
        ),
        None => None,
    };
    Ok(CheckRequest {
        source,
        current,
        coeff: args.coeff,
        boundary: args.boundary,
        current_steps: args.steps,
    })
}
