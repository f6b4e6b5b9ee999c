//! Recording a simulation, the one way the app and `heatlab run` both record: how each layer of
//! a recorded frame is coloured ([`FrameColours`]), and a video (GIF or MP4) taking a frame at
//! the first step and then at every multiple of its period ([`VideoRecorder`]). The files are
//! written by `crate::export` (`write_frame`, `video_frame`, `VideoWriter`).

use std::path::Path;

use crate::compute::Layer;
use crate::export::{video_frame, FrameLook, LayerFrame, PngStyle, VideoSummary, VideoWriter};
use crate::grid::{Grid, RangeMode, ValueRange};
use crate::render::Colormap;
use crate::sim::Simulation;

/// The unit of a heat problem's temperatures, on colorbars.
pub const FIELD_UNIT: &str = "°C";

/// The unit of a heat problem's Laplacian (`4T − neighbours` of temperatures in °C: a
/// difference of temperatures), on colorbars.
pub const LAPLACIAN_UNIT: &str = "K";

/// How a recorded layer's colour range is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RangeRule {
    /// These values (the app: the range on screen).
    Fixed(ValueRange),
    /// Chosen by the mode from each frame's own values.
    PerFrame(RangeMode),
    /// Chosen by the mode from the first frame and kept, so that heat visibly spreads and
    /// fades (`heatlab run`'s video of the field).
    HeldFromFirstFrame(RangeMode),
}

/// How one layer of a recorded frame is coloured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerColours {
    /// Colours.
    pub colormap: Colormap,
    /// The values of the first and last colour.
    pub range: RangeRule,
    /// The unit of the values, written on the colorbar ([`FrameColours::in_units_of`]).
    pub unit: Option<&'static str>,
}

impl LayerColours {
    /// The style of `grid`; `held` keeps the range of a [`RangeRule::HeldFromFirstFrame`].
    fn style(&self, grid: &Grid, colorbar: bool, held: &mut Option<ValueRange>) -> PngStyle {
        let range = match self.range {
            RangeRule::Fixed(range) => range,
            RangeRule::PerFrame(mode) => mode.resolve(grid),
            RangeRule::HeldFromFirstFrame(mode) => *held.get_or_insert_with(|| mode.resolve(grid)),
        };
        PngStyle {
            colormap: self.colormap,
            range,
            colorbar,
            unit: self.unit,
            cell_pixels: None,
        }
    }
}

/// How both layers of a recorded frame are coloured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameColours {
    /// The field's.
    pub field: LayerColours,
    /// The Laplacian's.
    pub laplacian: LayerColours,
}

impl FrameColours {
    /// `heatlab run`'s colours: the field over its minimum and maximum, the Laplacian over its
    /// 5th to 95th percentile, both on every frame.
    pub fn per_frame(field: Colormap, laplacian: Colormap) -> Self {
        Self {
            field: LayerColours {
                colormap: field,
                range: RangeRule::PerFrame(RangeMode::MinMax),
                unit: None,
            },
            laplacian: LayerColours {
                colormap: laplacian,
                range: RangeRule::PerFrame(RangeMode::LAPLACIAN_DEFAULT),
                unit: None,
            },
        }
    }

    /// These colours with the units of `simulation`'s values: a heat problem's field is in
    /// °C and its Laplacian (`4T − neighbours`, a difference of temperatures) in K; the
    /// tutorial's plate is dimensionless and keeps none.
    pub fn in_units_of(self, simulation: &Simulation) -> Self {
        let heat = simulation.problem().is_some();
        Self {
            field: LayerColours {
                unit: heat.then_some(FIELD_UNIT),
                ..self.field
            },
            laplacian: LayerColours {
                unit: heat.then_some(LAPLACIAN_UNIT),
                ..self.laplacian
            },
        }
    }

    /// The layer's colours.
    pub fn of(&self, layer: Layer) -> LayerColours {
        match layer {
            Layer::Field => self.field,
            Layer::Laplacian => self.laplacian,
        }
    }

    /// `grid` as `layer` of a frame, coloured as these colours say (with no held range).
    pub fn layer_frame<'a>(&self, layer: Layer, grid: &'a Grid, colorbar: bool) -> LayerFrame<'a> {
        LayerFrame {
            layer,
            grid,
            style: self.of(layer).style(grid, colorbar, &mut None),
        }
    }
}

/// Whether a recording with a frame every `every` steps records the frame at `step`, reached
/// by `advanced` steps just taken: the multiples of `every` that stepping reaches (the first
/// frame, where the recording starts, is recorded by whoever starts it).
pub fn frame_due(every: u64, step: u64, advanced: u64) -> bool {
    advanced > 0 && step % every.max(1) == 0
}

/// A video being recorded: a frame where it starts, then the frames its caller adds (at the
/// multiples of its period that stepping reaches: [`frame_due`]).
pub struct VideoRecorder {
    writer: VideoWriter,
    look: FrameLook,
    /// The ranges of [`RangeRule::HeldFromFirstFrame`], field and Laplacian.
    held: [Option<ValueRange>; 2],
}

impl VideoRecorder {
    /// Creates the video file `path` (`.gif` or `.mp4`; checks ffmpeg for MP4) at `fps` frames
    /// per second.
    pub fn start(path: &Path, fps: u32, look: FrameLook) -> crate::Result<Self> {
        Ok(Self {
            writer: VideoWriter::create(path, fps)?,
            look,
            held: [None, None],
        })
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.writer.frames()
    }

    /// Adds the frame of the simulation's state at `step`, coloured by `colours`; `field` is
    /// its field when the caller already holds it on the host.
    pub fn add(
        &mut self,
        simulation: &mut Simulation,
        step: u64,
        colours: &FrameColours,
        field: Option<&Grid>,
    ) -> crate::Result<()> {
        let (needs_field, needs_laplacian) = self.look.needs();
        let downloaded = match (needs_field, field) {
            (true, None) => Some(simulation.field()?),
            _ => None,
        };
        let field = field.or(downloaded.as_ref()).filter(|_| needs_field);
        let laplacian = if needs_laplacian {
            Some(simulation.laplacian()?)
        } else {
            None
        };
        let colours = colours.in_units_of(simulation);
        let colorbar = self.look.colorbar;
        let [held_field, held_laplacian] = &mut self.held;
        let mut layers = Vec::with_capacity(2);
        if let Some(grid) = field {
            layers.push(LayerFrame {
                layer: Layer::Field,
                grid,
                style: colours.field.style(grid, colorbar, held_field),
            });
        }
        if let Some(grid) = &laplacian {
            layers.push(LayerFrame {
                layer: Layer::Laplacian,
                grid,
                style: colours.laplacian.style(grid, colorbar, held_laplacian),
            });
        }
        let seconds = simulation.simulated_seconds();
        let (rgb, width, height) = video_frame(&layers, step, seconds, &self.look)?;
        self.writer.add_frame(&rgb, width, height)
    }

    /// Finishes the file (renamed into place) and says what it holds.
    pub fn finish(self) -> crate::Result<VideoSummary> {
        self.writer.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::{CpuBackend, StepParams};
    use crate::grid::GridSize;
    use crate::problem::{material, HeatProblem, PLATE_SPACING};

    #[test]
    fn a_heat_problems_layers_are_in_its_units_and_the_plates_in_none() {
        let size = GridSize { rows: 4, cols: 6 };
        let initial = Grid::from_fn(size, |r, c| 20.0 + (r * 6 + c) as f32);
        let mut simulation =
            Simulation::new(Box::new(CpuBackend::new()), initial, StepParams::default()).unwrap();
        let colours = FrameColours::per_frame(Colormap::Viridis, Colormap::Inferno);
        let plate = colours.in_units_of(&simulation);
        assert_eq!((plate.field.unit, plate.laplacian.unit), (None, None));
        let aluminium = material::find("aluminium").unwrap();
        let problem = HeatProblem::uniform(size, PLATE_SPACING, aluminium);
        simulation.set_problem(Some(problem), true).unwrap();
        let heat = colours.in_units_of(&simulation);
        assert_eq!(heat.field.unit, Some("°C"));
        assert_eq!(heat.laplacian.unit, Some("K"));
        // The style of a frame's layer carries it to the colorbar.
        let grid = simulation.field().unwrap();
        assert_eq!(
            heat.layer_frame(Layer::Field, &grid, true).style.unit,
            Some("°C")
        );
        // Back to the plate: no unit.
        simulation.set_problem(None, true).unwrap();
        assert_eq!(colours.in_units_of(&simulation).field.unit, None);
    }
}
