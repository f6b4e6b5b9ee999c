//! Shapes that paint kinds of cells onto a problem's map: a disc (the brush's dab), a
//! rectangle, an ellipse, a wall (a thick line) and a flood fill. Coordinates are in cells
//! (row, column), fractions allowed; a cell is inside when its centre is.

use serde::{Deserialize, Serialize};

use crate::grid::GridSize;

/// A region of cells, in cell coordinates (row, column; fractions allowed).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// The cells whose centres lie within `radius` of the centre.
    Disc {
        /// Centre (row, column).
        centre: (f32, f32),
        /// Radius in cells.
        radius: f32,
    },
    /// The cells whose centres lie in the rectangle spanned by two corners.
    Rectangle {
        /// One corner (row, column).
        from: (f32, f32),
        /// The opposite corner.
        to: (f32, f32),
    },
    /// The cells whose centres lie in the ellipse inscribed in the rectangle of two corners.
    Ellipse {
        /// One corner of the bounding rectangle (row, column).
        from: (f32, f32),
        /// The opposite corner.
        to: (f32, f32),
    },
    /// The cells whose centres lie within `width / 2` of the segment between two points.
    Wall {
        /// One end (row, column).
        from: (f32, f32),
        /// The other end.
        to: (f32, f32),
        /// Thickness in cells.
        width: f32,
    },
    /// The 4-connected cells of the same kind as the cell at `seed`.
    FloodFill {
        /// The cell the fill starts from (row, column).
        seed: (usize, usize),
    },
}

impl Shape {
    /// The indices (row-major) of the cells of a grid of `size` with kind map `map` that the
    /// shape covers, in increasing order. A shape outside the grid covers nothing.
    pub fn cells(&self, size: GridSize, map: &[u8]) -> Vec<u32> {
        match *self {
            Self::Disc { centre, radius } => {
                let r = radius.max(0.5);
                covered(
                    size,
                    (centre.0 - r, centre.1 - r),
                    (centre.0 + r, centre.1 + r),
                    |y, x| {
                        let (dy, dx) = (y - centre.0, x - centre.1);
                        dy * dy + dx * dx <= r * r
                    },
                )
            }
            Self::Rectangle { from, to } => covered(size, from, to, |_, _| true),
            Self::Ellipse { from, to } => {
                let centre = ((from.0 + to.0) / 2.0, (from.1 + to.1) / 2.0);
                let semi = (
                    ((to.0 - from.0) / 2.0).abs().max(0.5),
                    ((to.1 - from.1) / 2.0).abs().max(0.5),
                );
                covered(size, from, to, |y, x| {
                    let (dy, dx) = ((y - centre.0) / semi.0, (x - centre.1) / semi.1);
                    dy * dy + dx * dx <= 1.0
                })
            }
            Self::Wall { from, to, width } => {
                let half = (width / 2.0).max(0.5);
                let low = (from.0.min(to.0) - half, from.1.min(to.1) - half);
                let high = (from.0.max(to.0) + half, from.1.max(to.1) + half);
                covered(size, low, high, |y, x| {
                    distance_to_segment((y, x), from, to) <= half
                })
            }
            Self::FloodFill { seed } => flood_fill(size, map, seed),
        }
    }
}

/// The cells with centres in the box between `a` and `b` (corners in any order) for which
/// `inside(row, col)` (at the centre) holds.
fn covered(
    size: GridSize,
    a: (f32, f32),
    b: (f32, f32),
    inside: impl Fn(f32, f32) -> bool,
) -> Vec<u32> {
    // A cell's centre is at (row + 0.5, col + 0.5) in these coordinates.
    let span = |low: f32, high: f32, count: usize| -> Option<(usize, usize)> {
        let first = (low - 0.5).ceil().max(0.0);
        let last = (high - 0.5).floor().min(count as f32 - 1.0);
        (first.is_finite() && last.is_finite() && first <= last)
            .then_some((first as usize, last as usize))
    };
    let (Some(rows), Some(cols)) = (
        span(a.0.min(b.0), a.0.max(b.0), size.rows),
        span(a.1.min(b.1), a.1.max(b.1), size.cols),
    ) else {
        return Vec::new();
    };
    let mut cells = Vec::new();
    for row in rows.0..=rows.1 {
        for col in cols.0..=cols.1 {
            if inside(row as f32 + 0.5, col as f32 + 0.5) {
                cells.push((row * size.cols + col) as u32);
            }
        }
    }
    cells
}

fn distance_to_segment(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (ab0, ab1) = (b.0 - a.0, b.1 - a.1);
    let length2 = ab0 * ab0 + ab1 * ab1;
    let t = if length2 > 0.0 {
        (((p.0 - a.0) * ab0 + (p.1 - a.1) * ab1) / length2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (d0, d1) = (p.0 - (a.0 + t * ab0), p.1 - (a.1 + t * ab1));
    (d0 * d0 + d1 * d1).sqrt()
}

fn flood_fill(size: GridSize, map: &[u8], seed: (usize, usize)) -> Vec<u32> {
    if seed.0 >= size.rows || seed.1 >= size.cols || map.len() != size.cells() {
        return Vec::new();
    }
    let start = seed.0 * size.cols + seed.1;
    let kind = map[start];
    let mut seen = vec![false; map.len()];
    let mut stack = vec![start];
    seen[start] = true;
    let mut cells = Vec::new();
    while let Some(index) = stack.pop() {
        cells.push(index as u32);
        let (row, col) = (index / size.cols, index % size.cols);
        let neighbours = [
            (row > 0).then(|| index - size.cols),
            (row + 1 < size.rows).then(|| index + size.cols),
            (col > 0).then(|| index - 1),
            (col + 1 < size.cols).then(|| index + 1),
        ];
        for next in neighbours.into_iter().flatten() {
            if !seen[next] && map[next] == kind {
                seen[next] = true;
                stack.push(next);
            }
        }
    }
    cells.sort_unstable();
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(rows: usize, cols: usize) -> GridSize {
        GridSize { rows, cols }
    }

    #[test]
    fn rectangle_covers_the_cells_whose_centres_it_holds() {
        let cells = Shape::Rectangle {
            from: (1.0, 1.0),
            to: (3.0, 2.0),
        }
        .cells(size(5, 5), &[0; 25]);
        assert_eq!(cells, vec![6, 11]);
    }

    #[test]
    fn disc_of_radius_one_half_is_one_cell() {
        let cells = Shape::Disc {
            centre: (2.5, 2.5),
            radius: 0.5,
        }
        .cells(size(5, 5), &[0; 25]);
        assert_eq!(cells, vec![12]);
    }

    #[test]
    fn wall_follows_its_segment() {
        let cells = Shape::Wall {
            from: (0.5, 0.5),
            to: (0.5, 4.5),
            width: 1.0,
        }
        .cells(size(3, 5), &[0; 15]);
        assert_eq!(cells, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn flood_fill_stops_at_other_kinds() {
        // A wall of kind 1 down column 2 splits the grid.
        let map: Vec<u8> = (0..12).map(|i| u8::from(i % 4 == 2)).collect();
        let cells = Shape::FloodFill { seed: (0, 0) }.cells(size(3, 4), &map);
        assert_eq!(cells, vec![0, 1, 4, 5, 8, 9]);
    }

    #[test]
    fn shapes_outside_the_grid_cover_nothing() {
        let outside = Shape::Ellipse {
            from: (-9.0, -9.0),
            to: (-5.0, -5.0),
        };
        assert!(outside.cells(size(4, 4), &[0; 16]).is_empty());
        assert!(Shape::FloodFill { seed: (7, 0) }
            .cells(size(4, 4), &[0; 16])
            .is_empty());
    }
}
