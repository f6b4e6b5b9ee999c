//! The tools of the views: paint heat with a brush (undo and redo of strokes), place probes, draw
//! a line profile. [`PaintTools`] holds their state, handles the pointer on the pictures, draws
//! their marks over the pictures, the side-panel section and the plots under the views, and
//! queues what the simulation thread must do ([`SimCommand::Paint`], [`SimCommand::SetSampling`]).

use std::fmt;
use std::path::Path;

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers, Pos2};

use heatlab_engine::compute::BrushEdge;
use heatlab_engine::grid::GridSize;
use heatlab_engine::render::label::readout_value;
use heatlab_engine::sim::paint::Brush;
use heatlab_engine::sim::undoable::ProbePlace;

mod pointer;

use super::probes::{probe_color, Probes};
use super::profile::LineProfile;
use heatlab_engine::session::diffusion::{PaintCommand, Samples, SimCommand};

/// Screen distance within which a click picks a probe, in points.
const PICK_DISTANCE: f32 = 10.0;

/// What the primary button does on the pictures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Tool {
    /// Pan and zoom.
    #[default]
    Navigate,
    /// Drag to add heat; right-drag or Shift-drag to remove it.
    Paint,
    /// Click to place a probe, drag one to move it, right-click one to remove it.
    Probe,
    /// Drag to draw the segment of a line profile.
    Line,
    /// Paint the chosen material with the brush or a shape (the Problem section).
    Material,
}

impl Tool {
    /// Every tool, in the order the selector lists them.
    pub const ALL: [Self; 5] = [
        Self::Navigate,
        Self::Paint,
        Self::Probe,
        Self::Line,
        Self::Material,
    ];

    /// The key that switches to the tool (pressed again: back to navigating).
    pub fn key(self) -> Key {
        match self {
            Self::Navigate => Key::Escape,
            Self::Paint => Key::B,
            Self::Probe => Key::P,
            Self::Line => Key::L,
            Self::Material => Key::M,
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Self::Navigate => "drag to pan, scroll to zoom, double-click to fit (Esc)",
            Self::Paint => {
                "drag to add heat; right-drag or Shift-drag to remove it; \
                 middle-drag pans (B)"
            }
            Self::Probe => {
                "click to place a probe (8 at most), drag one to move it, \
                 right-click one to remove it (P)"
            }
            Self::Line => {
                "drag to draw a line; its profile is plotted live; right-click clears (L)"
            }
            Self::Material => {
                "paint the material chosen in the Problem section with the brush or a shape (M)"
            }
        }
    }
}

impl fmt::Display for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Navigate => "Navigate",
            Self::Paint => "Paint",
            Self::Probe => "Probe",
            Self::Line => "Line",
            Self::Material => "Material",
        })
    }
}

/// The brush as set in the side panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrushSettings {
    /// Radius in cells.
    pub radius: f32,
    /// Heat added (or removed) per dab at full weight.
    pub amount: f32,
    /// Soft or hard edge.
    pub edge: BrushEdge,
}

impl Default for BrushSettings {
    fn default() -> Self {
        Self {
            radius: 12.0,
            amount: 0.05,
            edge: BrushEdge::Soft,
        }
    }
}

impl BrushSettings {
    /// The brush of a stroke that adds heat, or removes it.
    pub fn brush(&self, removing: bool) -> Brush {
        Brush {
            radius: self.radius,
            amount: if removing {
                -self.amount.abs()
            } else {
                self.amount.abs()
            },
            edge: self.edge,
        }
    }
}

/// A stroke under way: on which picture, and whether it removes heat.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ActiveStroke {
    picture: usize,
    removing: bool,
}

/// The tools' state.
#[derive(Debug, Default)]
pub struct PaintTools {
    /// The tool in use.
    pub tool: Tool,
    /// The brush.
    pub brush: BrushSettings,
    /// The probes and their series.
    pub probes: Probes,
    /// The line profile.
    pub profile: LineProfile,
    /// The simulated time of the steps the plots are kept by.
    pub clock: super::step_clock::StepClock,
    /// The Material tool: the kind and shape it paints, and the material outlines.
    pub materials: super::problem::MaterialTools,
    /// Strokes undo and redo can take back or repeat, as the simulation last said.
    history: (usize, usize),
    stroke: Option<ActiveStroke>,
    /// The probe being dragged.
    held_probe: Option<usize>,
    /// Where the line being drawn started.
    line_start: Option<(f32, f32)>,
    /// The pointer over a picture in paint mode (for the brush outline).
    brush_hover: Option<(usize, Pos2)>,
    outgoing: Vec<SimCommand>,
    sent_sampling: Option<Vec<u32>>,
    /// The probes as the simulation last knew them (`None`: to be told again).
    sent_probes: Option<Vec<ProbePlace>>,
    /// Whether the user placed, moved or removed a probe since they were last sent (then undo
    /// can take the change back).
    probes_edited: bool,
    /// Messages for the notice area.
    messages: Vec<String>,
}

impl PaintTools {
    /// Whether the primary button pans (no tool active).
    pub fn primary_pans(&self) -> bool {
        self.tool == Tool::Navigate
    }

    /// Strokes that undo and redo can take back or repeat.
    pub fn history(&self) -> (usize, usize) {
        self.history
    }

    /// The simulation's new undo and redo counts.
    pub fn set_history(&mut self, undo: usize, redo: usize) {
        self.history = (undo, redo);
    }

    /// Switches to `tool`, ending what the previous one was doing.
    pub fn set_tool(&mut self, tool: Tool) {
        if self.stroke.take().is_some() {
            self.outgoing
                .push(SimCommand::Paint(PaintCommand::EndStroke));
        }
        self.materials.cancel();
        self.held_probe = None;
        self.line_start = None;
        self.tool = tool;
    }

    /// Takes back the latest stroke.
    pub fn undo(&mut self) {
        self.outgoing.push(SimCommand::Paint(PaintCommand::Undo));
    }

    /// Paints the latest undone stroke again.
    pub fn redo(&mut self) {
        self.outgoing.push(SimCommand::Paint(PaintCommand::Redo));
    }

    /// The keys: B, P, L switch tools (again: back to navigating), Esc navigates, Ctrl+Z undoes,
    /// Ctrl+Shift+Z (or Ctrl+Y) redoes.
    pub fn shortcuts(&mut self, ctx: &egui::Context) {
        if ctx.egui_wants_keyboard_input() {
            return;
        }
        let redo = ctx.input_mut(|i| {
            i.consume_shortcut(&KeyboardShortcut::new(
                Modifiers::COMMAND | Modifiers::SHIFT,
                Key::Z,
            )) || i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Y))
        });
        let undo = ctx
            .input_mut(|i| i.consume_shortcut(&KeyboardShortcut::new(Modifiers::COMMAND, Key::Z)));
        if redo {
            self.redo();
        } else if undo {
            self.undo();
        }
        let plain = ctx.input(|i| i.modifiers.is_none());
        for tool in Tool::ALL {
            if plain && ctx.input(|i| i.key_pressed(tool.key())) {
                let next = if self.tool == tool {
                    Tool::Navigate
                } else {
                    tool
                };
                self.set_tool(next);
            }
        }
    }

    /// The tool buttons and undo and redo, in the row under the pictures.
    pub fn toolbar_ui(&mut self, ui: &mut egui::Ui) {
        for tool in Tool::ALL {
            let selected = self.tool == tool;
            if ui
                .selectable_label(selected, tool.to_string())
                .on_hover_text(tool.hint())
                .clicked()
                && !selected
            {
                self.set_tool(tool);
            }
        }
        let (undo, redo) = self.history;
        if ui
            .add_enabled(undo > 0, egui::Button::new("Undo").small())
            .on_hover_text(format!(
                "take back the latest change (Ctrl+Z): a stroke of heat or of materials, a side, a \
                 heater, a thermostat or the probes; {undo} kept. {}",
                heatlab_engine::sim::paint::UNDO_AFTER_STEPPING
            ))
            .clicked()
        {
            self.undo();
        }
        if ui
            .add_enabled(redo > 0, egui::Button::new("Redo").small())
            .on_hover_text(format!(
                "make the undone change again (Ctrl+Shift+Z); {redo} kept"
            ))
            .clicked()
        {
            self.redo();
        }
        ui.separator();
    }

    /// The side-panel section: the brush.
    pub fn controls_ui(&mut self, ui: &mut egui::Ui) {
        ui.heading("Brush");
        ui.weak(self.tool.hint());
        let label = ui.label("brush radius (cells)");
        ui.add(
            egui::Slider::new(&mut self.brush.radius, 0.5..=256.0)
                .logarithmic(true)
                .max_decimals(1),
        )
        .labelled_by(label.id);
        let label = ui.label("heat per dab");
        ui.add(
            egui::Slider::new(&mut self.brush.amount, 0.0001..=100.0)
                .logarithmic(true)
                .max_decimals(4),
        )
        .labelled_by(label.id)
        .on_hover_text(
            "added at the brush's centre by each dab; dabs are a quarter of the radius apart \
             along a stroke",
        );
        ui.horizontal(|ui| {
            ui.label("edge");
            for edge in BrushEdge::ALL {
                ui.radio_value(&mut self.brush.edge, edge, edge.to_string());
            }
        });
    }

    /// Whether the probe and profile plots have something to show.
    pub fn has_plots(&self) -> bool {
        !self.probes.is_empty() || self.profile.is_set()
    }

    /// The plots under the views: probes over steps and the line profile, with their values and
    /// buttons. Returns whether the CSV export was asked for.
    pub fn plots_ui(&mut self, ui: &mut egui::Ui) -> bool {
        let mut export = false;
        ui.horizontal_wrapped(|ui| {
            ui.strong("Probes");
            let mut remove = None;
            for (i, probe) in self.probes.all().iter().enumerate() {
                let value = probe
                    .latest()
                    .map_or_else(|| "…".to_string(), |(_, v)| readout_value(v));
                ui.colored_label(
                    probe_color(probe.number),
                    format!("{} ({}, {}) = {value}", probe.name(), probe.row, probe.col),
                );
                if ui
                    .small_button("×")
                    .on_hover_text(format!("remove {}", probe.name()))
                    .clicked()
                {
                    remove = Some(i);
                }
            }
            if let Some(i) = remove {
                self.probes.remove(i);
                self.probes_edited = true;
            }
            if !self.probes.is_empty() {
                if ui.button("Clear probes").clicked() {
                    self.probes.clear();
                    self.probes_edited = true;
                }
                export = ui
                    .button("Export probes CSV")
                    .on_hover_text(
                        "probe,row,col,step,value (with time_s, the simulated time, for a heat \
                         problem): one row per sample",
                    )
                    .clicked();
            }
            if self.profile.is_set() && ui.button("Clear line").clicked() {
                self.profile.clear();
            }
        });
        if self.probes.is_empty() {
            ui.weak("no probe: click a cell with the Probe tool (P) to follow it over time");
        }
        let height = (ui.available_height() - 20.0).max(super::profile::MIN_PLOT_HEIGHT);
        // Without probes a line's profile takes the whole width (an empty plot would not).
        let profile_only = self.probes.is_empty() && self.profile.is_set();
        ui.columns(if profile_only { 1 } else { 2 }, |columns| {
            if !profile_only {
                columns[0].label(self.probes.caption());
                self.probes.plot_ui(&mut columns[0], height, &self.clock);
            }
            let profile = &mut columns[columns.len() - 1];
            let caption = match self.profile.segment() {
                Some(((r0, c0), (r1, c1))) => {
                    let mut caption =
                        format!("line profile from ({r0:.0}, {c0:.0}) to ({r1:.0}, {c1:.0})");
                    if self.profile.exact().is_some() {
                        caption.push_str(" · solid: now, dashed: exact");
                    }
                    caption
                }
                None => "line profile: draw a line with the Line tool (L)".to_string(),
            };
            profile.label(caption);
            self.profile.plot_ui(profile, height, &self.clock);
        });
        export
    }

    /// Writes the probe series to `dir/probes_step<step>.csv`; returns the path.
    pub fn export_csv(&self, dir: &Path, step: u64) -> heatlab_engine::Result<std::path::PathBuf> {
        heatlab_engine::export::ensure_writable_dir(dir)?;
        let path = dir.join(format!("probes_step{step:06}.csv"));
        heatlab_engine::export::write_probe_csv(&path, &self.probes.export_series(&self.clock))?;
        Ok(path)
    }

    /// Takes a frame's samples, and its simulated time (`None` on the tutorial's plate).
    pub fn record(
        &mut self,
        step: u64,
        seconds: Option<f64>,
        size: GridSize,
        samples: Option<&Samples>,
    ) {
        self.clock.record(step, seconds);
        let Some(samples) = samples else {
            return;
        };
        let probes = self.probes.all().len().min(samples.cells.len());
        self.probes
            .record(step, size, &samples.cells, &samples.values);
        self.profile.record(
            step,
            &samples.cells[probes..],
            samples.values.get(probes..).unwrap_or(&[]),
        );
    }

    /// Forgets the series (reset or a new field of `size`); the simulation is told the probes
    /// again.
    pub fn restart(&mut self, size: Option<GridSize>) {
        self.probes.restart(size);
        self.profile.restart(size);
        self.sent_probes = None;
    }

    /// Undo or redo moved the probes: they stand where the simulation says.
    pub fn probes_placed(&mut self, places: &[ProbePlace]) {
        self.probes.place(places);
        self.held_probe = None;
        self.sent_probes = Some(places.to_vec());
        self.probes_edited = false;
    }

    /// The commands for the simulation thread: paint commands, and the sampled cells when they
    /// changed.
    pub fn take_commands(&mut self, size: Option<GridSize>) -> Vec<SimCommand> {
        let mut commands = std::mem::take(&mut self.outgoing);
        commands.extend(
            self.materials
                .take_commands()
                .into_iter()
                .map(SimCommand::Problem),
        );
        let places = self.probes.places();
        if self.held_probe.is_none() && self.sent_probes.as_ref() != Some(&places) {
            self.sent_probes = Some(places.clone());
            commands.push(SimCommand::SetProbes {
                probes: places,
                undoable: std::mem::take(&mut self.probes_edited),
            });
        }
        if let Some(size) = size {
            let mut cells = self.probes.cells(size);
            cells.extend_from_slice(self.profile.cells());
            cells.extend_from_slice(self.profile.flow().cells());
            if self.sent_sampling.as_ref() != Some(&cells) {
                self.sent_sampling = Some(cells.clone());
                commands.push(SimCommand::SetSampling(cells));
            }
        }
        commands
    }

    /// The screenshot mode's `--paint-demo`: the commands that dragging the pointer would send
    /// for two strokes (a soft wave and a hard ring), three probes and a vertical line, on a field
    /// of `size`. Nothing here is drawn differently from what a person's pointer does.
    pub fn paint_demo(&mut self, size: GridSize) {
        let (rows, cols) = (size.rows as f32, size.cols as f32);
        self.brush = BrushSettings {
            radius: (rows.max(cols) / 25.0).max(1.0),
            amount: 0.15,
            edge: BrushEdge::Soft,
        };
        let mut stroke = |points: Vec<(f32, f32)>, brush: Brush| {
            for (row, col) in points {
                self.outgoing
                    .push(SimCommand::Paint(PaintCommand::StrokeTo {
                        row,
                        col,
                        brush,
                    }));
            }
            self.outgoing
                .push(SimCommand::Paint(PaintCommand::EndStroke));
        };
        let wave: Vec<(f32, f32)> = (0..=60)
            .map(|i| {
                let t = i as f32 / 60.0;
                let row = rows * (0.3 + 0.08 * (t * std::f32::consts::TAU).sin());
                (row, cols * (0.15 + 0.7 * t))
            })
            .collect();
        stroke(wave, self.brush.brush(false));
        let ring: Vec<(f32, f32)> = (0..=48)
            .map(|i| {
                let angle = i as f32 / 48.0 * std::f32::consts::TAU;
                (
                    rows * (0.7 + 0.1 * angle.sin()),
                    cols * (0.3 + 0.1 * angle.cos()),
                )
            })
            .collect();
        let hard = Brush {
            radius: self.brush.radius * 0.5,
            amount: 0.3,
            edge: BrushEdge::Hard,
        };
        stroke(ring, hard);
        let cell = |fr: f32, fc: f32| {
            (
                ((rows * fr) as usize).min(size.rows - 1),
                ((cols * fc) as usize).min(size.cols - 1),
            )
        };
        self.probes.clear();
        for (fr, fc) in [(0.3, 0.5), (0.7, 0.3), (0.7, 0.4), (0.8, 0.8)] {
            let (row, col) = cell(fr, fc);
            self.probes.add(row, col);
        }
        self.profile
            .set((rows * 0.05, cols * 0.5), (rows * 0.95, cols * 0.5), size);
        self.tool = Tool::Paint;
    }

    /// Messages for the notice area.
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.messages)
    }
}
