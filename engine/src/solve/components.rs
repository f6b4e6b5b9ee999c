//! The parts of a problem that exchange heat: free cells joined by faces that conduct. A part
//! with no way out (no held neighbour, no fixed or convective side) has a steady state only
//! when the heat entering it sums to zero, and then only up to a constant, which its stored
//! energy fixes.

use std::collections::VecDeque;

use super::system::Coefficients;

/// A part with no way out.
#[derive(Debug, Clone, PartialEq)]
pub struct ClosedPart {
    /// Its cells, row-major indices in increasing order.
    pub cells: Vec<u32>,
    /// The heat entering it, W/m (the sum of its `b`).
    pub net_source: f64,
    /// The sum of `|b|` over its cells, W/m.
    pub gross_source: f64,
}

/// The closed parts of grid `c` with right side `rhs`.
pub fn closed_parts(c: &Coefficients, rhs: &[f64]) -> Vec<ClosedPart> {
    let cells = c.cells();
    let mut seen = vec![false; cells];
    let mut parts = Vec::new();
    let mut queue = VecDeque::new();
    for first in 0..cells {
        if seen[first] || c.free[first] == 0 {
            continue;
        }
        seen[first] = true;
        queue.push_back(first);
        let mut members = Vec::new();
        let mut outlet = false;
        while let Some(here) = queue.pop_front() {
            members.push(here as u32);
            outlet |= c.extra_x[here] > 0.0 || c.extra_y[here] > 0.0;
            let (row, col) = (here / c.cols, here % c.cols);
            let faces = [
                (
                    c.west(row, col),
                    c.west(row, col).map_or(0.0, |w| c.east[w]),
                ),
                (c.east_of(row, col), c.east[here]),
                (
                    c.north(row, col),
                    c.north(row, col).map_or(0.0, |n| c.south[n]),
                ),
                (c.south_of(row, col), c.south[here]),
            ];
            for (neighbour, g) in faces {
                if let Some(next) = neighbour.filter(|&n| g > 0.0 && !seen[n]) {
                    seen[next] = true;
                    queue.push_back(next);
                }
            }
        }
        if outlet {
            continue;
        }
        members.sort_unstable();
        let net_source = members.iter().map(|&i| rhs[i as usize]).sum();
        let gross_source = members.iter().map(|&i| rhs[i as usize].abs()).sum();
        parts.push(ClosedPart {
            cells: members,
            net_source,
            gross_source,
        });
    }
    parts
}
