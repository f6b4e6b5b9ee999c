//! What a run keeps however it ends: the video, the saved state and the agreement checks'
//! outcomes. A failure here fails a completed run; after another ending it is noted and that
//! ending kept.

use super::record::{AgreementRecord, Ending, RunRecord};
use super::start;
use super::video::RunVideo;
use crate::cli::output::note;
use heatlab_engine::session::run::RunLoop;
use heatlab_engine::sim::Simulation;
use heatlab_engine::state::FieldOrigin;

/// Finishes the video, however the run ended (a stopped run leaves a shorter video). A failure
/// fails a completed run; after another ending it is noted and the ending kept.
pub(super) fn keep_video(
    video: RunVideo,
    record: &mut RunRecord,
    ending: anyhow::Result<Ending>,
) -> anyhow::Result<Ending> {
    match video.finish() {
        Ok((path, line)) => {
            note(&line);
            record.files.push(path);
            ending
        }
        Err(error) => match ending {
            Ok(Ending::Completed) => Err(anyhow::Error::new(error).context("finishing the video")),
            other => {
                note(&format!("the video could not be finished: {error}"));
                other
            }
        },
    }
}

/// Saves the state the run ended in, however it ended. A failure fails a completed run; after
/// another ending it is noted and the ending kept.
pub(super) fn keep_state(
    path: &std::path::Path,
    simulation: &mut Simulation,
    origin: &FieldOrigin,
    record: &mut RunRecord,
    ending: anyhow::Result<Ending>,
) -> anyhow::Result<Ending> {
    match start::save_state(path, simulation, origin) {
        Ok(()) => {
            record.files.push(path.to_path_buf());
            ending
        }
        Err(error) => match ending {
            Ok(Ending::Completed) => Err(anyhow::Error::new(error).context("saving the state")),
            other => {
                note(&format!("the state could not be saved: {error}"));
                other
            }
        },
    }
}

/// Waits for the agreement checks (checking the last, partial window of a completed run) and
/// keeps their outcomes in the record.
pub(super) fn settle_agreement(
    simulation: &mut Simulation,
    record: &mut RunRecord,
    ending: anyhow::Result<Ending>,
) -> anyhow::Result<Ending> {
    if simulation.agreement().is_none() {
        return ending;
    }
    let settled = RunLoop::finish(simulation, matches!(ending, Ok(Ending::Completed)));
    if let Some(watch) = simulation.agreement() {
        record.agreement = Some(AgreementRecord::of(watch));
    }
    settled?;
    ending
}
