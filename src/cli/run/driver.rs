//! `heatlab run`'s driver of the engine's run loop ([`RunLoop::run`]): what the command line
//! adds to it is its own: the signals that stop it, the progress bar, the frames written into
//! the output folder, the video's frames and the timing rows.

use std::path::PathBuf;

use indicatif::ProgressBar;

use super::record::{Ending, LastChunkRecord, RunRecord};
use super::video::RunVideo;
use super::RunPlan;
use crate::cli::interrupt::{Interrupt, StopSignal};
use heatlab_engine::compute::Layer;
use heatlab_engine::export::{self, FrameFiles};
use heatlab_engine::grid::Grid;
use heatlab_engine::session::recording::FrameColours;
use heatlab_engine::session::run::{Chunk, Due, Halt, RunDriver, RunEnd, RunLoop};
use heatlab_engine::sim::Simulation;

/// Writes the field and Laplacian frames of one step of `simulation` (whose units the
/// colorbars carry): each `.npy` where the field is held when the backend can (each rank its
/// rows), the rest from the layer downloaded here. Returns the paths written and the field if
/// it was downloaded.
pub(super) fn save_frame(
    plan: &RunPlan,
    simulation: &mut Simulation,
) -> heatlab_engine::Result<(Vec<PathBuf>, Option<Grid>)> {
    let mut field = None;
    let step = simulation.step_count();
    let colours =
        FrameColours::per_frame(plan.colormap, plan.laplacian_colormap).in_units_of(simulation);
    let mut written = Vec::new();
    for &layer in plan.frame_layers.layers() {
        let npy_path = export::frame_path(&plan.out, layer.file_stem(), step, "npy");
        let npy_where_held = plan.npy && simulation.write_npy_where_held(layer, &npy_path)?;
        let npy_here = plan.npy && !npy_where_held;
        if plan.png || npy_here {
            let laplacian;
            let grid = match layer {
                Layer::Field => match &mut field {
                    Some(field) => &*field,
                    None => field.insert(simulation.field()?),
                },
                Layer::Laplacian => {
                    laplacian = simulation.laplacian()?;
                    &laplacian
                }
            };
            if plan.png {
                // The colours' range is the frame's own: picked only for a picture.
                let frame = colours.layer_frame(layer, grid, plan.colorbar);
                let files = FrameFiles {
                    png: true,
                    npy: false,
                };
                written.extend(export::write_frame(&plan.out, step, &[frame], files)?);
            }
            if npy_here {
                export::write_npy(&npy_path, grid)?;
            }
        }
        if plan.npy {
            written.push(npy_path);
        }
    }
    Ok((written, field))
}

/// The command line's side of a run.
pub(super) struct CliDriver<'a> {
    pub(super) plan: &'a RunPlan,
    pub(super) record: &'a mut RunRecord,
    pub(super) interrupt: &'a Interrupt,
    pub(super) bar: &'a ProgressBar,
    pub(super) video: &'a mut Option<RunVideo>,
    /// Where the record is kept after every chunk and frame (rank 0 of several).
    pub(super) last_chunk: Option<&'a LastChunkRecord>,
}

impl CliDriver<'_> {
    fn keep_record(&self) {
        if let Some(last_chunk) = self.last_chunk {
            last_chunk.keep(self.plan, self.record);
        }
    }
}

impl RunDriver for CliDriver<'_> {
    fn stop_requested(&self) -> bool {
        self.interrupt.requested().is_some()
    }

    fn chunk_done(&mut self, _: &mut Simulation, chunk: &Chunk) -> heatlab_engine::Result<()> {
        if let Some(timing) = &chunk.timing {
            self.record.add_timing(timing);
        }
        self.record.steps_completed = chunk.to;
        self.bar.set_position(chunk.to);
        self.keep_record();
        Ok(())
    }

    fn outputs_due(&mut self, simulation: &mut Simulation, due: Due) -> heatlab_engine::Result<()> {
        let step = simulation.step_count();
        let mut field = None;
        if due.frames {
            let (written, downloaded) = save_frame(self.plan, simulation)?;
            field = downloaded;
            self.record.add_files(written);
            self.keep_record();
        }
        if let Some(video) = self.video.as_mut().filter(|_| due.video) {
            let field = match field {
                Some(field) => field,
                None => simulation.field()?,
            };
            video.add(step, &field, simulation)?;
            self.bar.set_message(format!(
                "{}, {} video frames",
                self.record.backend,
                video.frames()
            ));
        }
        Ok(())
    }
}

/// Runs the loop to the plan's last step; its ending as the command line reports it (an
/// interruption with the signal that asked for it).
pub(super) fn run_to_end(
    run: &mut RunLoop,
    simulation: &mut Simulation,
    driver: &mut CliDriver<'_>,
) -> anyhow::Result<Ending> {
    let schedule = driver.plan.schedule();
    let end = run.run(simulation, &schedule, driver)?;
    Ok(match end {
        RunEnd::Completed => Ending::Completed,
        RunEnd::Halted(Halt::Interrupted) => Ending::Interrupted(
            driver
                .interrupt
                .requested()
                .unwrap_or(StopSignal::Interrupt),
        ),
        RunEnd::Halted(Halt::NonFinite { error, last_good }) => {
            Ending::NonFinite { error, last_good }
        }
        RunEnd::Halted(Halt::BelowAbsoluteZero(error)) => Ending::BelowAbsoluteZero(error),
    })
}
