//! The Material tool on the pictures: brush dabs along a drag (as the heat brush lays them),
//! or a shape from press to release (rectangle, ellipse, wall, flood fill) with its outline
//! drawn live, each sent as [`ProblemCommand::Paint`] and closed by
//! [`ProblemCommand::EndStroke`] (one step of undo).

use std::fmt;

use eframe::egui::{self, Color32, Pos2, Rect, Stroke, Vec2};

use heatlab_engine::grid::GridSize;
use heatlab_engine::problem::Shape;
use heatlab_engine::session::diffusion::ProblemCommand;
use heatlab_engine::sim::paint::{dabs_towards, DAB_SPACING};

use super::super::view::{from_field, PictureCells};
use super::{outline, MaterialTools};

/// What a drag of the Material tool paints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MaterialShape {
    /// Discs of the brush's radius along the drag.
    #[default]
    Brush,
    /// The cells from the pressed one to the released one.
    Rectangle,
    /// The ellipse inscribed in that rectangle.
    Ellipse,
    /// A thick line from the pressed cell to the released one.
    Wall,
    /// The connected region of one kind under the released cell.
    Fill,
    /// Not a shape: the part (a connected region painted over the base) under the press is
    /// moved to where the drag ends, or deleted with a right-click.
    Move,
}

impl MaterialShape {
    /// Every shape, in the order the section lists them.
    pub const ALL: [Self; 6] = [
        Self::Brush,
        Self::Rectangle,
        Self::Ellipse,
        Self::Wall,
        Self::Fill,
        Self::Move,
    ];

    /// What a drag does with it.
    pub fn hint(self) -> &'static str {
        match self {
            Self::Brush => "drag to paint the material with the brush's radius",
            Self::Rectangle => "drag from corner to corner; release to paint",
            Self::Ellipse => "drag the box the ellipse fills; release to paint",
            Self::Wall => "drag from one end to the other; release to paint a wall this wide",
            Self::Fill => "click (or drag and release) on a region to fill it with the material",
            Self::Move => {
                "drag a part (a region painted over the base) to move it; right-click a part \
                 to delete it (the base takes its place); each is one step of undo"
            }
        }
    }
}

impl fmt::Display for MaterialShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Brush => "Brush",
            Self::Rectangle => "Rectangle",
            Self::Ellipse => "Ellipse",
            Self::Wall => "Wall",
            Self::Fill => "Fill",
            Self::Move => "Move part",
        })
    }
}

/// A drag of the Material tool under way, on picture `picture`. Points are in shape
/// coordinates: (row, col) with cell (r, c)'s centre at (r + 0.5, c + 0.5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gesture {
    /// Brush dabs; the last one's centre.
    Brush { picture: usize, anchor: (f32, f32) },
    /// A shape from `start` to `end`.
    Shape {
        picture: usize,
        start: (f32, f32),
        end: (f32, f32),
    },
}

impl Gesture {
    fn picture(&self) -> usize {
        match *self {
            Self::Brush { picture, .. } | Self::Shape { picture, .. } => picture,
        }
    }
}

/// The cell containing `point`, clamped onto the grid.
fn cell_of(point: (f32, f32), size: GridSize) -> (usize, usize) {
    let clamp = |v: f32, count: usize| (v.floor().max(0.0) as usize).min(count - 1);
    (clamp(point.0, size.rows), clamp(point.1, size.cols))
}

impl MaterialTools {
    /// The shape a drag from `start` to `end` paints: corners snap to the cells under them.
    fn shape_between(&self, start: (f32, f32), end: (f32, f32), size: GridSize) -> Shape {
        let (a, b) = (cell_of(start, size), cell_of(end, size));
        let from = (a.0.min(b.0) as f32, a.1.min(b.1) as f32);
        let to = (a.0.max(b.0) as f32 + 1.0, a.1.max(b.1) as f32 + 1.0);
        let centre = |(r, c): (usize, usize)| (r as f32 + 0.5, c as f32 + 0.5);
        match self.shape {
            MaterialShape::Brush | MaterialShape::Rectangle => Shape::Rectangle { from, to },
            MaterialShape::Ellipse => Shape::Ellipse { from, to },
            MaterialShape::Wall => Shape::Wall {
                from: centre(a),
                to: centre(b),
                width: self.wall_width.max(1.0),
            },
            MaterialShape::Fill => Shape::FloodFill { seed: b },
            // The part under the press, outlined while it is dragged.
            MaterialShape::Move => Shape::FloodFill { seed: a },
        }
    }

    fn paint(&mut self, shape: Shape) {
        if let Some(kind) = self.kind.clone() {
            self.outgoing.push(ProblemCommand::Paint { shape, kind });
        }
    }

    /// Ends the drag under way (the tool changed): a brush stroke is closed, a shape dropped.
    pub fn cancel(&mut self) {
        if let Some(Gesture::Brush { .. }) = self.gesture.take() {
            self.outgoing.push(ProblemCommand::EndStroke);
        }
    }

    /// Handles the pointer on picture number `index` with the brush's `radius` (cells).
    pub fn interact(&mut self, ui: &egui::Ui, index: usize, cells: PictureCells<'_>, radius: f32) {
        if self.kind.is_none() {
            return;
        }
        let size = cells.size;
        let response = &cells.picture.response;
        let pointer = response.interact_pointer_pos().or(response.hover_pos());
        let down = response.is_pointer_button_down_on() && ui.input(|i| i.pointer.primary_down());
        let ours = self.gesture.is_some_and(|g| g.picture() == index);
        let radius = radius.max(0.5);
        if down {
            let Some(pos) = pointer else {
                return;
            };
            let at = cells.shape_point(pos);
            match &mut self.gesture {
                None => {
                    let press = ui.input(|i| i.pointer.press_origin()).unwrap_or(pos);
                    let start = cells.shape_point(press);
                    self.gesture = Some(if self.shape == MaterialShape::Brush {
                        self.paint(Shape::Disc { centre: at, radius });
                        Gesture::Brush {
                            picture: index,
                            anchor: at,
                        }
                    } else {
                        Gesture::Shape {
                            picture: index,
                            start,
                            end: at,
                        }
                    });
                }
                Some(gesture) if gesture.picture() != index => {}
                Some(Gesture::Brush { anchor, .. }) => {
                    let spacing = (radius * DAB_SPACING).max(0.5);
                    let dabs = dabs_towards(*anchor, at, spacing);
                    if let Some(&last) = dabs.last() {
                        *anchor = last;
                    }
                    for centre in dabs {
                        self.paint(Shape::Disc { centre, radius });
                    }
                }
                Some(Gesture::Shape { end, .. }) => *end = at,
            }
        } else if ours {
            self.finish_gesture(size);
            self.gesture = None;
        } else if self.shape == MaterialShape::Move {
            if let (true, Some(pos)) = (response.secondary_clicked(), pointer) {
                let seed = cell_of(cells.shape_point(pos), size);
                self.outgoing.push(ProblemCommand::DeletePart(seed));
            }
        } else if response.clicked() {
            // Pressed and released within one frame.
            let Some(pos) = pointer else {
                return;
            };
            let at = cells.shape_point(pos);
            let shape = if self.shape == MaterialShape::Brush {
                Shape::Disc { centre: at, radius }
            } else {
                self.shape_between(at, at, size)
            };
            self.paint(shape);
            self.outgoing.push(ProblemCommand::EndStroke);
        }
        if let (Some(pos), None) = (response.hover_pos(), self.gesture) {
            self.hover = Some((index, cells.shape_point(pos)));
        } else if self.hover.is_some_and(|(i, _)| i == index) {
            self.hover = None;
        }
    }

    /// The drag ended: the shape is painted (one step of undo), or the part moved.
    fn finish_gesture(&mut self, size: GridSize) {
        match (self.shape, self.gesture) {
            (MaterialShape::Move, Some(Gesture::Shape { start, end, .. })) => {
                let (from, to) = (cell_of(start, size), cell_of(end, size));
                let by = (to.0 as i64 - from.0 as i64, to.1 as i64 - from.1 as i64);
                if by != (0, 0) {
                    self.outgoing
                        .push(ProblemCommand::MovePart { seed: from, by });
                }
            }
            (_, Some(Gesture::Shape { start, end, .. })) => {
                self.paint(self.shape_between(start, end, size));
                self.outgoing.push(ProblemCommand::EndStroke);
            }
            _ => self.outgoing.push(ProblemCommand::EndStroke),
        }
    }

    /// Draws over picture `index`: the outlines of the material regions when they are on, and
    /// with the Material tool (`active`) the shape being dragged or the brush under the
    /// pointer.
    pub fn overlay(
        &mut self,
        ui: &egui::Ui,
        index: usize,
        cells: PictureCells<'_>,
        radius: f32,
        active: bool,
    ) {
        let PictureCells {
            picture,
            viewport,
            size,
        } = cells;
        let painter = ui.painter_at(picture.rect);
        let problem = self.problem.clone().filter(|p| p.size == size);
        if let (true, Some(problem)) = (self.outlines, &problem) {
            let width = picture.rect.width();
            let segments = self.outline.segments(problem, None, viewport, width);
            outline::draw(
                &painter,
                picture.rect,
                viewport,
                size,
                segments,
                Color32::WHITE,
            );
        }
        if !active {
            return;
        }
        let screen = |(row, col): (f32, f32)| {
            from_field(
                picture.rect,
                viewport,
                Vec2::new(col / size.cols as f32, row / size.rows as f32),
            )
        };
        let cell_width = cells.cell_width();
        match self.gesture {
            Some(Gesture::Shape { start, end, .. }) => {
                let shape = self.shape_between(start, end, size);
                if let (Shape::FloodFill { seed }, Some(problem)) = (shape, &problem) {
                    let width = picture.rect.width();
                    let segments = self
                        .fill_outline
                        .segments(problem, Some(seed), viewport, width);
                    outline::draw(&painter, picture.rect, viewport, size, segments, PREVIEW);
                }
                draw_shape(&painter, shape, &screen, cell_width);
                if self.shape == MaterialShape::Move {
                    let (from, to) = (screen(start), screen(end));
                    painter.arrow(from, to - from, Stroke::new(2.0, PREVIEW));
                }
            }
            Some(Gesture::Brush { .. }) | None => {
                if let Some((_, at)) = self.hover.filter(|(i, _)| *i == index) {
                    let pos = screen(at);
                    let stroke = Stroke::new(1.0, PREVIEW);
                    if self.shape == MaterialShape::Brush {
                        painter.circle_stroke(pos, (radius.max(0.5) * cell_width).max(2.0), stroke);
                    } else {
                        painter.circle_stroke(pos, 3.0, stroke);
                    }
                }
            }
        }
    }
}

/// The colour of the live outline of a shape.
const PREVIEW: Color32 = Color32::from_rgb(255, 230, 80);

/// Draws the outline of `shape` (shape coordinates; `screen` maps them).
fn draw_shape(
    painter: &egui::Painter,
    shape: Shape,
    screen: &dyn Fn((f32, f32)) -> Pos2,
    cell_width: f32,
) {
    let points: Vec<Pos2> = match shape {
        Shape::Rectangle { from, to } => {
            let rect = Rect::from_two_pos(screen(from), screen(to));
            vec![
                rect.left_top(),
                rect.right_top(),
                rect.right_bottom(),
                rect.left_bottom(),
            ]
        }
        Shape::Ellipse { from, to } => {
            let centre = ((from.0 + to.0) / 2.0, (from.1 + to.1) / 2.0);
            let semi = ((to.0 - from.0) / 2.0, (to.1 - from.1) / 2.0);
            (0..72)
                .map(|i| {
                    let angle = i as f32 / 72.0 * std::f32::consts::TAU;
                    screen((
                        centre.0 + semi.0 * angle.sin(),
                        centre.1 + semi.1 * angle.cos(),
                    ))
                })
                .collect()
        }
        Shape::Wall { from, to, width } => capsule(from, to, width / 2.0)
            .into_iter()
            .map(screen)
            .collect(),
        Shape::Disc { centre, radius } => {
            painter.circle_stroke(
                screen(centre),
                radius * cell_width,
                Stroke::new(1.5, PREVIEW),
            );
            return;
        }
        Shape::FloodFill { seed } => {
            let at = screen((seed.0 as f32 + 0.5, seed.1 as f32 + 0.5));
            painter.circle_stroke(at, 4.0, Stroke::new(1.5, PREVIEW));
            return;
        }
    };
    painter.add(egui::Shape::closed_line(
        points.clone(),
        Stroke::new(3.0, Color32::from_black_alpha(200)),
    ));
    painter.add(egui::Shape::closed_line(points, Stroke::new(1.5, PREVIEW)));
}

/// The outline of the points within `half` of the segment from `a` to `b`.
fn capsule(a: (f32, f32), b: (f32, f32), half: f32) -> Vec<(f32, f32)> {
    let (dr, dc) = (b.0 - a.0, b.1 - a.1);
    let angle = dr.atan2(dc);
    let arc = |centre: (f32, f32), from: f32| {
        (0..=16).map(move |i| {
            let t = from + i as f32 / 16.0 * std::f32::consts::PI;
            (centre.0 + half * t.sin(), centre.1 + half * t.cos())
        })
    };
    let quarter = std::f32::consts::FRAC_PI_2;
    arc(b, angle - quarter)
        .chain(arc(a, angle + quarter))
        .collect()
}
