//! How a field is split over ranks: bands of whole rows, one per rank, each held with halo rows
//! of its neighbours above and below.
//!
//! Bands, not 2-D blocks: a band's edge rows are contiguous in memory (row-major), so a halo
//! is one copy and one message each way with no packing, a band is stepped by the same kernels
//! as a whole field (any backend, any kernel), and at the 2 to 8 ranks of one host the halo of
//! a band (2 × depth rows of 16,384 or more columns) is a small part of its rows.

use crate::error::{HeatlabError, Result};
use crate::grid::{Boundary, GridSize, RowSpan};

/// A field's rows split over `ranks` bands with halos `depth` rows deep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bands {
    size: GridSize,
    ranks: usize,
    depth: usize,
    /// Rows wrap around (the periodic boundary): the first band's halo above is the last
    /// band's bottom rows, and the other way round.
    wraps: bool,
}

/// One rank's band: the rows it owns and the halo rows held beside them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Band {
    /// The rank holding it.
    pub rank: usize,
    /// The first row it owns, in the whole field.
    pub first_row: usize,
    /// The rows it owns.
    pub rows: usize,
    /// Halo rows held above its own (0 at the field's top edge unless rows wrap).
    pub halo_above: usize,
    /// Halo rows held below its own.
    pub halo_below: usize,
    /// The field's columns.
    pub cols: usize,
    /// The rank whose bottom rows are this band's halo above, if any.
    pub above: Option<usize>,
    /// The rank whose top rows are this band's halo below, if any.
    pub below: Option<usize>,
}

impl Band {
    /// Rows held: halo above, own rows, halo below.
    pub fn held_rows(&self) -> usize {
        self.halo_above + self.rows + self.halo_below
    }

    /// The size of the field the band is stepped as.
    pub fn held_size(&self) -> Result<GridSize> {
        GridSize::new(self.held_rows(), self.cols)
    }

    /// Where the own rows start among the held ones.
    pub fn own_offset(&self) -> usize {
        self.halo_above
    }

    /// The first held row, in the whole field (wrapping for a periodic field's first band).
    pub fn first_held_row(&self, field_rows: usize) -> usize {
        (self.first_row + field_rows - self.halo_above) % field_rows
    }
}

impl Bands {
    /// Splits `size` over `ranks` bands (the first `rows % ranks` bands one row longer) with
    /// halos `depth` rows deep; refuses when a band would own fewer rows than the depth (its
    /// neighbours' halos come from its own rows alone).
    pub fn new(size: GridSize, ranks: usize, depth: usize, boundary: Boundary) -> Result<Self> {
        Self::with_wrap(size, ranks, depth, boundary == Boundary::Periodic)
    }

    /// [`Bands::new`], the rows wrapping around when `wraps` (a periodic plate, or a heat
    /// problem whose top and bottom wrap).
    pub fn with_wrap(size: GridSize, ranks: usize, depth: usize, wraps: bool) -> Result<Self> {
        if ranks == 0 {
            return Err(HeatlabError::InvalidInput(
                "a field needs at least one rank".into(),
            ));
        }
        if depth == 0 {
            return Err(HeatlabError::InvalidInput(
                "the halo depth must be at least 1 row".into(),
            ));
        }
        let bands = Self {
            size,
            ranks,
            depth,
            wraps,
        };
        let thinnest = size.rows / ranks;
        if thinnest < depth {
            let fitting = size.rows / depth;
            let advice = match fitting {
                0 | 1 => "run it on one rank".to_string(),
                n => format!("use at most {n} ranks for this field"),
            };
            return Err(HeatlabError::InvalidInput(format!(
                "{ranks} ranks leave rank {} only {thinnest} of the {} rows, fewer than the halo \
                 depth of {depth}; {advice}, or a shallower halo",
                ranks - 1,
                size.rows,
            )));
        }
        Ok(bands)
    }

    /// The deepest halo that `ranks` bands of `size` allow, at most `wanted`.
    pub fn deepest_halo(size: GridSize, ranks: usize, wanted: usize) -> usize {
        (size.rows / ranks.max(1)).min(wanted).max(1)
    }

    /// Whether the rows wrap around.
    pub fn wraps(&self) -> bool {
        self.wraps
    }

    /// The whole field's size.
    pub fn size(&self) -> GridSize {
        self.size
    }

    /// The number of bands.
    pub fn ranks(&self) -> usize {
        self.ranks
    }

    /// The halo depth in rows: the most steps between two exchanges.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// The band of `rank`.
    pub fn band(&self, rank: usize) -> Band {
        let own = RowSpan::part_of(self.size.rows, self.ranks, rank);
        let single = self.ranks == 1;
        let above = match rank {
            _ if single => None,
            0 if self.wraps => Some(self.ranks - 1),
            0 => None,
            _ => Some(rank - 1),
        };
        let below = match rank + 1 {
            _ if single => None,
            next if next == self.ranks && self.wraps => Some(0),
            next if next == self.ranks => None,
            next => Some(next),
        };
        Band {
            rank,
            first_row: own.first,
            rows: own.count,
            halo_above: if above.is_some() { self.depth } else { 0 },
            halo_below: if below.is_some() { self.depth } else { 0 },
            cols: self.size.cols,
            above,
            below,
        }
    }

    /// Every band, in rank order.
    pub fn all(&self) -> impl Iterator<Item = Band> + '_ {
        (0..self.ranks).map(|rank| self.band(rank))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_cover_the_rows_once_longer_bands_first() {
        let size = GridSize::new(11, 5).unwrap();
        let bands = Bands::new(size, 3, 2, Boundary::Dirichlet).unwrap();
        let all: Vec<_> = bands.all().collect();
        assert_eq!(
            all.iter()
                .map(|b| (b.first_row, b.rows))
                .collect::<Vec<_>>(),
            [(0, 4), (4, 4), (8, 3)]
        );
        assert_eq!((all[0].halo_above, all[0].halo_below), (0, 2));
        assert_eq!((all[1].halo_above, all[1].halo_below), (2, 2));
        assert_eq!((all[2].halo_above, all[2].halo_below), (2, 0));
        assert_eq!((all[0].above, all[2].below), (None, None));
        assert_eq!(all[1].held_rows(), 8);
    }

    #[test]
    fn periodic_bands_wrap_even_with_two_ranks() {
        let size = GridSize::new(8, 3).unwrap();
        let bands = Bands::new(size, 2, 3, Boundary::Periodic).unwrap();
        let first = bands.band(0);
        assert_eq!((first.above, first.below), (Some(1), Some(1)));
        assert_eq!(first.first_held_row(8), 5);
        assert_eq!(first.held_rows(), 10);
    }

    #[test]
    fn a_band_thinner_than_the_halo_is_refused_with_the_ranks_that_fit() {
        let size = GridSize::new(10, 4).unwrap();
        let error = Bands::new(size, 4, 3, Boundary::Neumann).unwrap_err();
        let text = error.to_string();
        assert!(text.contains("rank 3 only 2 of the 10 rows"), "{text}");
        assert!(text.contains("at most 3 ranks"), "{text}");
        assert_eq!(Bands::deepest_halo(size, 4, 8), 2);
        assert!(Bands::new(size, 0, 1, Boundary::Neumann).is_err());
        assert!(Bands::new(size, 2, 0, Boundary::Neumann).is_err());
    }
}
