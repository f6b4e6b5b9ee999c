//! The run's steps: chunk by chunk to the last step, in advance calls paced by the session's
//! [`Pacer`], with the frames written at the save points and the video's frames added.

use std::path::PathBuf;
use std::time::Instant;

use indicatif::ProgressBar;

use super::record::{Ending, RunRecord};
use super::video::RunVideo;
use super::RunPlan;
use crate::cli::interrupt::Interrupt;
use heatlab_engine::compute::Layer;
use heatlab_engine::error::HeatlabError;
use heatlab_engine::export::{self, FrameFiles, TimingRecord};
use heatlab_engine::grid::Grid;
use heatlab_engine::problem::temperature::ZERO_CELSIUS_IN_KELVIN;
use heatlab_engine::session::pacing::Pacer;
use heatlab_engine::session::recording::FrameColours;
use heatlab_engine::sim::Simulation;

/// Seconds one advance call aims at, so that a stop asked for in the middle of a long chunk
/// comes within about this long.
const PIECE_SECONDS: f64 = 0.25;

/// Writes the field and Laplacian frames of one step; returns the paths written.
pub(super) fn save_frame(
    plan: &RunPlan,
    step: u64,
    field: &Grid,
    laplacian: &Grid,
) -> heatlab_engine::Result<Vec<PathBuf>> {
    let colours = FrameColours::per_frame(plan.colormap, plan.laplacian_colormap);
    let layers = [
        colours.layer_frame(Layer::Field, field, plan.colorbar),
        colours.layer_frame(Layer::Laplacian, laplacian, plan.colorbar),
    ];
    let files = FrameFiles {
        png: true,
        npy: plan.npy,
    };
    export::write_frame(&plan.out, step, &layers, files)
}

/// Steps chunk by chunk to the last step, saving frames at the save points; stops early on a
/// signal, a non-finite field or a heat problem below absolute zero. Errors (a failed export)
/// come back as they are.
pub(super) fn step_loop(
    plan: &RunPlan,
    simulation: &mut Simulation,
    record: &mut RunRecord,
    interrupt: &Interrupt,
    bar: &ProgressBar,
    video: &mut Option<RunVideo>,
) -> anyhow::Result<Ending> {
    let mut pacer = Pacer::new(PIECE_SECONDS);
    loop {
        let step = simulation.step_count();
        if step >= plan.end_step() {
            return Ok(Ending::Completed);
        }
        if let Some(signal) = interrupt.requested() {
            return Ok(Ending::Interrupted(signal));
        }
        let stop = plan.next_stop(step);
        let chunk = advance_chunk(plan, simulation, stop, &mut pacer, interrupt, record);
        bar.set_position(simulation.step_count());
        match chunk {
            Ok(Some(field)) => {
                if plan.is_save_point(stop) {
                    let laplacian = simulation.laplacian()?;
                    record
                        .files
                        .extend(save_frame(plan, stop, &field, &laplacian)?);
                }
                if let Some(video) = video.as_mut().filter(|v| v.is_due(stop, stop - step)) {
                    video.add(stop, &field, simulation)?;
                    bar.set_message(format!(
                        "{}, {} video frames",
                        record.backend,
                        video.frames()
                    ));
                }
            }
            Ok(None) => {}
            Err(error @ HeatlabError::NonFinite { .. }) => {
                let good_step = simulation.step_count();
                let field = simulation.field()?;
                // A field non-finite from the start has no good frame to keep.
                let last_good = field.first_non_finite().is_none().then_some(good_step);
                if last_good.is_some() {
                    let laplacian = simulation.laplacian()?;
                    record
                        .files
                        .extend(save_frame(plan, good_step, &field, &laplacian)?);
                }
                return Ok(Ending::NonFinite { error, last_good });
            }
            Err(error @ HeatlabError::BelowAbsoluteZero { .. }) => {
                return Ok(Ending::BelowAbsoluteZero(error));
            }
            Err(other) => return Err(other.into()),
        }
    }
}

/// [`HeatlabError::BelowAbsoluteZero`] when a heat problem's field has a cell below absolute
/// zero now, from the minimum of the field's statistics (taken on the device where it can).
/// A run without a heat problem steps no temperatures and is not checked.
fn below_absolute_zero(simulation: &mut Simulation) -> Result<Option<HeatlabError>, HeatlabError> {
    if simulation.problem().is_none() {
        return Ok(None);
    }
    let step = simulation.step_count();
    let coldest = simulation.statistics()?.min;
    let physical = f64::from(coldest) >= -ZERO_CELSIUS_IN_KELVIN;
    Ok((!physical).then_some(HeatlabError::BelowAbsoluteZero { step, coldest }))
}

/// Advances to `stop` in pieces of about [`PIECE_SECONDS`], checking for a signal between
/// them and, with a heat problem, for a cell below absolute zero after each (the chunk ends
/// there with [`HeatlabError::BelowAbsoluteZero`]), and records the chunk as one timing row.
/// Returns the field at `stop`, or `None` when a signal stopped the chunk early.
pub(super) fn advance_chunk(
    plan: &RunPlan,
    simulation: &mut Simulation,
    stop: u64,
    pacer: &mut Pacer,
    interrupt: &Interrupt,
    record: &mut RunRecord,
) -> Result<Option<Grid>, HeatlabError> {
    let start = simulation.step_count();
    let mut energy = super::scenario::EnergyBook::start(simulation)?;
    let mut outcome = Ok(None);
    while simulation.step_count() < stop && interrupt.requested().is_none() {
        let piece = pacer.next_piece(stop - simulation.step_count());
        let began = Instant::now();
        match simulation.advance_checked(piece) {
            Ok((_, field)) => {
                pacer.learn(piece, began.elapsed());
                if let Some(book) = energy.as_mut() {
                    book.piece(simulation, &field)?;
                }
                if let Some(cold) = below_absolute_zero(simulation)? {
                    outcome = Err(cold);
                    break;
                }
                if simulation.step_count() == stop {
                    outcome = Ok(Some(field));
                }
            }
            Err(error) => {
                outcome = Err(error);
                break;
            }
        }
    }
    if let Some(book) = energy {
        book.finish(simulation, record);
    }
    // Taken out of the simulation: the record writes them as they come.
    let pieces = simulation.take_timings();
    if let Some(timing) = merge_timings(plan, start, &pieces) {
        record.add_timing(&timing);
    }
    record.steps_completed = simulation.step_count();
    outcome
}

/// One timing row for the pieces of one chunk (none when no piece ran).
pub(super) fn merge_timings(
    plan: &RunPlan,
    start: u64,
    pieces: &[TimingRecord],
) -> Option<TimingRecord> {
    let first = pieces.first()?;
    let steps = pieces.iter().map(|t| t.steps).sum();
    let seconds = pieces.iter().fold(0.0, |sum, t| sum + t.seconds);
    Some(TimingRecord::diffusion(
        start,
        steps,
        &first.backend,
        &first.method,
        plan.field.size,
        seconds,
    ))
}
