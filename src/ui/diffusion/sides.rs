//! The four sides of a heat problem: a strip above the views to choose each side's condition
//! (insulated, fixed temperature, heat flux, convection, periodic in pairs) and type its
//! values, and a coloured line with a label along each edge of the pictures showing it.
//!
//! Edits go to the simulation thread as [`ProblemCommand::SetSide`]; on the tutorial's plate
//! the first edit starts a problem, as painting does. Periodic sides come in pairs, which one
//! `SetSide` cannot make, so a side becoming (or ceasing to be) periodic sends the whole
//! problem with both sides changed.

use eframe::egui::{self, Color32, Pos2, Stroke, Vec2};

use heatlab_engine::problem::{HeatProblem, Side, SideCondition, SideKind, Sides};
use heatlab_engine::session::diffusion::ProblemCommand;

use super::command::DiffusionCommand;
use super::sources::typed::{Typed, TypedNumbers};
use super::view::{from_field, Picture, Viewport};
use super::SimState;

/// Width of a value field, in points.
const VALUE_WIDTH: f32 = 56.0;

/// Height of the strip of the four sides above the views, in points.
pub const STRIP_HEIGHT: f32 = 48.0;

/// The colour of a side's condition on the pictures.
pub fn condition_color(condition: SideCondition) -> Color32 {
    match condition {
        SideCondition::Insulated => Color32::from_gray(150),
        SideCondition::Fixed { .. } => Color32::from_rgb(255, 80, 80),
        SideCondition::Flux { .. } => Color32::from_rgb(255, 170, 0),
        SideCondition::Convective { .. } => Color32::from_rgb(60, 200, 255),
        SideCondition::Periodic => Color32::from_rgb(190, 120, 255),
    }
}

/// A colour per side (in plots of what crosses each).
pub fn side_color(side: Side) -> Color32 {
    match side {
        Side::Left => Color32::from_rgb(60, 200, 255),
        Side::Right => Color32::from_rgb(50, 205, 50),
        Side::Top => Color32::from_rgb(255, 215, 0),
        Side::Bottom => Color32::from_rgb(238, 130, 238),
    }
}

/// A condition's label on the picture: short, with units.
pub fn short_label(condition: SideCondition) -> String {
    match condition {
        SideCondition::Insulated => "insulated".into(),
        SideCondition::Fixed { temperature } => format!("{temperature} °C"),
        SideCondition::Flux { flux } => format!("{flux} W/m² in"),
        SideCondition::Convective { h, ambient } => format!("h {h} W/m²K, {ambient} °C"),
        SideCondition::Periodic => "periodic".into(),
    }
}

/// The side editor's state: the values being typed, and a periodic pair waiting for the
/// problem that its first edit starts.
#[derive(Debug, Default)]
pub struct SideEditor {
    typed: TypedNumbers,
    pending_pair: Option<Side>,
    messages: Vec<String>,
}

impl SideEditor {
    /// The strip of the four sides (top and bottom, then left and right).
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        state: &SimState,
        commands: &mut Vec<DiffusionCommand>,
    ) {
        if state.field_size.is_none() {
            return;
        }
        let problem = state.problem.as_deref();
        if let (Some(side), Some(problem)) = (self.pending_pair, problem) {
            self.pending_pair = None;
            commands.push(pair_command(problem, side, SideCondition::Periodic));
        }
        let sides = problem.map_or_else(Sides::default, |p| p.sides);
        // Each row wraps in a narrow window: a row wider than the panel would widen the views'
        // columns under it and push the Laplacian off-screen.
        for pair in [[Side::Top, Side::Bottom], [Side::Left, Side::Right]] {
            ui.horizontal_wrapped(|ui| {
                for side in pair {
                    if let Some(command) = self.side_ui(ui, side, sides.get(side), problem) {
                        commands.push(command);
                    }
                    ui.add_space(12.0);
                }
                if problem.is_none() && pair[0] == Side::Top {
                    ui.weak("(the plate: setting a side makes it an aluminium problem)");
                }
                if problem.is_some() && pair[0] == Side::Left {
                    let solve = ui.button("Solve steady state").on_hover_text(
                        "Replace the field by this problem's steady state, solved directly \
                         (multigrid conjugate gradients) instead of marched: what the plate \
                         settles to after a long time. The step and time stay.",
                    );
                    if solve.clicked() {
                        commands.push(DiffusionCommand::Problem(ProblemCommand::SolveSteady));
                    }
                }
            });
        }
    }

    /// Messages for the notice area (refused values).
    pub fn take_messages(&mut self) -> Vec<String> {
        std::mem::take(&mut self.messages)
    }

    fn side_ui(
        &mut self,
        ui: &mut egui::Ui,
        side: Side,
        condition: SideCondition,
        problem: Option<&HeatProblem>,
    ) -> Option<DiffusionCommand> {
        let name = ui.colored_label(condition_color(condition), format!("{side} side"));
        let current = condition.kind();
        let mut chosen = current;
        egui::ComboBox::from_id_salt(("side type", side))
            .selected_text(current.name())
            .width(92.0)
            .show_ui(ui, |ui| {
                for kind in SideKind::ALL {
                    ui.selectable_value(&mut chosen, kind, kind.name());
                }
            })
            .response
            .labelled_by(name.id);
        if chosen != current {
            return self.change_type(side, condition, chosen, problem);
        }
        let typed = match condition {
            SideCondition::Fixed { temperature } => self
                .value(ui, side, "°C", temperature)
                .map(|temperature| SideCondition::Fixed { temperature }),
            SideCondition::Flux { flux } => self
                .value(ui, side, "W/m² in", flux)
                .map(|flux| SideCondition::Flux { flux }),
            SideCondition::Convective { h, ambient } => {
                let new_h = self.value(ui, side, "h W/m²K", h);
                let new_ambient = self.value(ui, side, "ambient °C", ambient);
                (new_h.is_some() || new_ambient.is_some()).then(|| SideCondition::Convective {
                    h: new_h.unwrap_or(h),
                    ambient: new_ambient.unwrap_or(ambient),
                })
            }
            SideCondition::Insulated | SideCondition::Periodic => None,
        };
        typed.map(|condition| DiffusionCommand::Problem(ProblemCommand::SetSide(side, condition)))
    }

    /// A value field named "`side` `unit`"; a committed number, or `None` (a refused text is
    /// told in a notice).
    fn value(&mut self, ui: &mut egui::Ui, side: Side, unit: &str, current: f64) -> Option<f64> {
        let label = format!("{side} {unit}");
        match self
            .typed
            .field(ui, ("side value", side, unit), &label, current, VALUE_WIDTH)
        {
            Typed::Unchanged => None,
            Typed::Value(value) => Some(value),
            Typed::Refused(text) => {
                self.messages.push(format!(
                    "\"{text}\" is not a number: the {side} side keeps {current} {unit}"
                ));
                None
            }
        }
    }

    fn change_type(
        &mut self,
        side: Side,
        condition: SideCondition,
        chosen: SideKind,
        problem: Option<&HeatProblem>,
    ) -> Option<DiffusionCommand> {
        let new = chosen.condition(condition);
        let pairs = chosen == SideKind::Periodic || condition == SideCondition::Periodic;
        match (pairs, problem) {
            (false, _) => Some(DiffusionCommand::Problem(ProblemCommand::SetSide(
                side, new,
            ))),
            (true, Some(problem)) => Some(pair_command(problem, side, new)),
            (true, None) => {
                // The first edit starts the problem; the pair follows once it is there.
                self.pending_pair = Some(side);
                Some(DiffusionCommand::Problem(ProblemCommand::SetSide(
                    side,
                    SideCondition::Insulated,
                )))
            }
        }
    }
}

/// The whole problem with `side` set to `condition` and its opposite made to match: periodic
/// with it, or insulated when it stops being periodic.
fn pair_command(problem: &HeatProblem, side: Side, condition: SideCondition) -> DiffusionCommand {
    let mut changed = problem.clone();
    changed.sides.set(side, condition);
    let opposite = if condition == SideCondition::Periodic {
        SideCondition::Periodic
    } else {
        SideCondition::Insulated
    };
    changed.sides.set(side.opposite(), opposite);
    DiffusionCommand::Problem(ProblemCommand::SetSides(changed.sides))
}

/// Draws each side's condition along the edges of a picture: a coloured line and a label.
pub fn overlay(ui: &egui::Ui, picture: &Picture, viewport: &Viewport, sides: &Sides) {
    let painter = ui.painter_at(picture.rect);
    let corner = |x: f32, y: f32| from_field(picture.rect, viewport, Vec2::new(x, y));
    for side in Side::ALL {
        let condition = sides.get(side);
        let (a, b) = match side {
            Side::Left => (corner(0.0, 0.0), corner(0.0, 1.0)),
            Side::Right => (corner(1.0, 0.0), corner(1.0, 1.0)),
            Side::Top => (corner(0.0, 0.0), corner(1.0, 0.0)),
            Side::Bottom => (corner(0.0, 1.0), corner(1.0, 1.0)),
        };
        let color = condition_color(condition);
        // Drawn just inside the edge, so that it shows where the picture is clipped.
        let inward = match side {
            Side::Left => Vec2::new(2.0, 0.0),
            Side::Right => Vec2::new(-2.0, 0.0),
            Side::Top => Vec2::new(0.0, 2.0),
            Side::Bottom => Vec2::new(0.0, -2.0),
        };
        painter.line_segment([a + inward, b + inward], Stroke::new(4.0, color));
        let middle = a + (b - a) * 0.5 + inward * 4.0;
        let (align, at) = match side {
            Side::Left => (egui::Align2::LEFT_CENTER, middle),
            Side::Right => (egui::Align2::RIGHT_CENTER, middle),
            Side::Top => (egui::Align2::CENTER_TOP, middle),
            Side::Bottom => (egui::Align2::CENTER_BOTTOM, middle),
        };
        label(&painter, at, align, &short_label(condition), color);
    }
}

fn label(painter: &egui::Painter, at: Pos2, align: egui::Align2, text: &str, color: Color32) {
    let font = egui::FontId::proportional(12.0);
    let galley = painter.layout_no_wrap(text.to_string(), font, color);
    let rect = align.anchor_size(at, galley.size());
    painter.rect_filled(rect.expand(2.0), 3.0, Color32::from_black_alpha(170));
    painter.galley(rect.min, galley, color);
}

#[cfg(test)]
mod tests {
    use super::*;
    use heatlab_engine::grid::GridSize;
    use heatlab_engine::problem::material;

    #[test]
    fn periodic_sides_are_set_in_pairs() {
        let aluminium = material::find("aluminium").unwrap();
        let mut problem = HeatProblem::uniform(GridSize::new(4, 4).unwrap(), 1e-3, aluminium);
        problem.sides.right = SideCondition::Fixed { temperature: 50.0 };
        let DiffusionCommand::Problem(ProblemCommand::SetSides(periodic)) =
            pair_command(&problem, Side::Left, SideCondition::Periodic)
        else {
            panic!("a periodic side sends the four sides");
        };
        assert_eq!(periodic.left, SideCondition::Periodic);
        assert_eq!(periodic.right, SideCondition::Periodic);
        assert!(periodic.check().is_ok());
        let mut problem = problem.clone();
        problem.sides = periodic;
        let DiffusionCommand::Problem(ProblemCommand::SetSides(back)) =
            pair_command(&problem, Side::Right, SideCondition::Flux { flux: 5.0 })
        else {
            panic!("leaving periodic sends the four sides");
        };
        assert_eq!(back.right, SideCondition::Flux { flux: 5.0 });
        assert_eq!(back.left, SideCondition::Insulated);
        assert!(back.check().is_ok());
    }
}
