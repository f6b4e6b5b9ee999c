//! The screenshot mode's `--material-demo`: the commands that choosing kinds in the palette and
//! dragging shapes would send, for a small heat sink on a plate: a glass ring filled (flood
//! fill) with water, a copper spreader with four fins, a chip held hot under it and a strip of
//! foam.

use crate::grid::GridSize;
use crate::problem::{material, CellKind, Shape};
use crate::session::diffusion::ProblemCommand;

use super::MaterialTools;

/// The temperature the demo's chip is held at, °C.
const CHIP_TEMPERATURE: f64 = 90.0;

impl MaterialTools {
    /// Queues the demo's shapes on a field of `size` (each one stroke, as a drag sends it).
    pub(super) fn paint_demo(&mut self, size: GridSize) {
        let (rows, cols) = (size.rows as f32, size.cols as f32);
        let at = |r: f32, c: f32| (rows * r, cols * c);
        let kind = |name: &str| material::find(name).map(CellKind::of);
        let fin_width = (cols / 80.0).max(2.0);
        let mut shapes = vec![
            (
                "glass",
                Shape::Ellipse {
                    from: at(0.08, 0.06),
                    to: at(0.42, 0.42),
                },
            ),
            (
                "air",
                Shape::Ellipse {
                    from: at(0.13, 0.11),
                    to: at(0.37, 0.37),
                },
            ),
            (
                "water",
                Shape::FloodFill {
                    seed: (size.rows / 4, size.cols * 6 / 25),
                },
            ),
            (
                "copper",
                Shape::Rectangle {
                    from: at(0.62, 0.46),
                    to: at(0.72, 0.94),
                },
            ),
            (
                "polystyrene-foam",
                Shape::Rectangle {
                    from: at(0.88, 0.04),
                    to: at(0.96, 0.96),
                },
            ),
        ];
        for fin in 0..4 {
            let col = 0.52 + 0.12 * fin as f32;
            shapes.push((
                "copper",
                Shape::Wall {
                    from: at(0.62, col),
                    to: at(0.2, col),
                    width: fin_width,
                },
            ));
        }
        for (name, shape) in shapes {
            if let Some(kind) = kind(name) {
                self.outgoing.push(ProblemCommand::Paint { shape, kind });
                self.outgoing.push(ProblemCommand::EndStroke);
            }
        }
        if let Some(mut chip) = kind("silicon") {
            chip.name = "hot chip".into();
            chip.held_temperature = Some(CHIP_TEMPERATURE);
            self.kind = Some(chip.clone());
            let shape = Shape::Rectangle {
                from: at(0.72, 0.6),
                to: at(0.78, 0.8),
            };
            self.outgoing
                .push(ProblemCommand::Paint { shape, kind: chip });
            self.outgoing.push(ProblemCommand::EndStroke);
        }
        self.shape = super::MaterialShape::Rectangle;
    }
}
