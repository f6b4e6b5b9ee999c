//! A small heat sink on a plate, drawn in the library's materials: a glass ring filled (flood
//! fill) with water, a copper spreader with four fins, a chip held hot under it and a strip of
//! foam. The app's screenshot mode (`--material-demo`) paints it stroke by stroke, as choosing
//! kinds in the palette and dragging shapes would.

use crate::grid::GridSize;

use super::{material, CellKind, Shape};

/// The temperature the demo's chip is held at, °C.
const CHIP_TEMPERATURE: f64 = 90.0;

/// One stroke of the demo: a shape painted with a kind.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoStroke {
    /// Where.
    pub shape: Shape,
    /// What the cells become.
    pub kind: CellKind,
}

/// The heat sink demo on one field size.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatSinkDemo {
    /// The strokes in the order they are painted; the hot chip comes last.
    pub strokes: Vec<DemoStroke>,
    /// The hot chip's kind (a silicon cell held at [`CHIP_TEMPERATURE`]), for the palette.
    pub chip: Option<CellKind>,
}

impl HeatSinkDemo {
    /// The demo's strokes on a field of `size`. A material missing from the library leaves its
    /// strokes out.
    pub fn new(size: GridSize) -> Self {
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
        let mut strokes: Vec<DemoStroke> = shapes
            .into_iter()
            .filter_map(|(name, shape)| kind(name).map(|kind| DemoStroke { shape, kind }))
            .collect();
        let chip = kind("silicon").map(|mut chip| {
            chip.name = "hot chip".into();
            chip.held_temperature = Some(CHIP_TEMPERATURE);
            chip
        });
        if let Some(chip) = &chip {
            strokes.push(DemoStroke {
                shape: Shape::Rectangle {
                    from: at(0.72, 0.6),
                    to: at(0.78, 0.8),
                },
                kind: chip.clone(),
            });
        }
        Self { strokes, chip }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_paints_every_material_and_ends_with_the_held_chip() {
        let demo = HeatSinkDemo::new(GridSize {
            rows: 200,
            cols: 400,
        });
        // Glass, air, water, copper, foam, four fins and the chip.
        assert_eq!(demo.strokes.len(), 10);
        let chip = demo.chip.expect("silicon is in the library");
        assert_eq!(chip.held_temperature, Some(CHIP_TEMPERATURE));
        assert_eq!(demo.strokes.last().map(|s| &s.kind), Some(&chip));
        // The chip sits under the spreader, 72% down and from 60% across.
        let Shape::Rectangle { from, .. } = demo.strokes[9].shape else {
            panic!("the chip is a rectangle: {:?}", demo.strokes[9].shape);
        };
        assert!((from.0 - 144.0).abs() < 1e-3 && (from.1 - 240.0).abs() < 1e-3);
    }
}
