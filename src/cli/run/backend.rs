//! How a run opens its backend: this process's, or a field split over ranks (see
//! `ranks`), and before reading a large array, to check the GPU's room for it first.

use heatlab_engine::compute::{create_backend, Backend, BackendChoice, KernelChoice};
use heatlab_engine::grid::GridSize;

use super::{start, RunPlan};

/// A backend opened for a run, with the note of a fallback to the CPU, if there was one.
pub type Opened = (Box<dyn Backend>, Option<String>);

/// Opens a run's backend: `choice` with `kernel`, for a field of `size`.
pub type OpenBackend<'a> =
    dyn FnMut(BackendChoice, KernelChoice, GridSize) -> anyhow::Result<Opened> + 'a;

/// A backend of this process.
pub(super) fn open_here(
    choice: BackendChoice,
    kernel: KernelChoice,
    _: GridSize,
) -> anyhow::Result<Opened> {
    let (mut backend, fallback) = create_backend(choice)?;
    if let Some(cuda) = backend.cuda_mut() {
        cuda.set_kernel_choice(kernel)?;
    }
    Ok((backend, fallback.map(|fallback| fallback.to_string())))
}

/// Opens the run's backend for a `size` field. A fixed kernel needs the GPU: it is not
/// silently replaced by the CPU (checked with the arguments, `checked_kernel`: a refusal cannot
/// come here).
pub(super) fn open_backend(
    open: &mut OpenBackend<'_>,
    plan: &RunPlan,
    size: GridSize,
) -> anyhow::Result<Opened> {
    let choice = plan
        .kernel
        .backend_for(plan.backend_choice)
        .unwrap_or(plan.backend_choice);
    open(choice, plan.kernel, size).map_err(|error| {
        if choice == plan.backend_choice {
            error
        } else {
            anyhow::anyhow!("--kernel {} steps on the GPU: {error:#}", plan.kernel)
        }
    })
}

/// Opens the backend before the start is read where this process reads an array whole: an
/// array one GPU would not hold is refused from its header (a 64 GiB array is not read for
/// minutes to be refused then).
pub(super) fn open_before_reading(
    open: &mut OpenBackend<'_>,
    plan: &RunPlan,
    over_ranks: bool,
) -> anyhow::Result<Option<Opened>> {
    let Some(size) = start::array_size_before_reading(&plan.start, over_ranks)? else {
        return Ok(None);
    };
    let (mut backend, fallback_note) = open_backend(open, plan, size)?;
    if let Some(cuda) = backend.cuda_mut() {
        cuda.ensure_room_for(size)?;
    }
    Ok(Some((backend, fallback_note)))
}
