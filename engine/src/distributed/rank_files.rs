//! A rank's files and kept rows: its own rows of an initial `.npy` read at their offset, its
//! own rows of a frame written into one `.npy` at theirs (no rank holds the whole field), and
//! its own rows of the run's initial field kept for a reset.

use std::path::Path;

use crate::compute::Layer;
use crate::error::{HeatlabError, Result};
use crate::grid::{Boundary, Grid, GridSize};

use super::bands::Bands;
use super::link::RankLink;
use super::npy::write_npy_by_ranks;
use super::rank_band::{decode, encode, f32_bytes, RankBand};

/// Copies of its band a rank holds on the host after reading it: the rows read, the band with
/// its halos (uploaded from it), the own rows kept for a reset.
const BAND_HOST_COPIES: usize = 3;

/// How many ranks run on the host of `link`'s rank, this one included (their host names
/// compared).
fn ranks_on_this_host(link: &mut dyn RankLink) -> Result<usize> {
    // A rank whose host has no name to read counts as alone on it.
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().as_bytes().to_vec())
        .unwrap_or_else(|_| format!("rank {}", link.rank()).into_bytes());
    let gathered = link.gather_bytes(&name, 0)?.unwrap_or_default();
    let names: Vec<Vec<u8>> = decode(&link.broadcast_bytes(&encode(&gathered)?, 0)?)?;
    Ok(names.iter().filter(|other| **other == name).count().max(1))
}

impl RankBand {
    /// The field of `size` split into bands (halos `depth` deep, wrapping when `wraps`), this
    /// rank's own rows read from the `.npy` at `path`. Every rank learns whether all read their
    /// rows before any splits: a rank that could not says why, the others answer nothing.
    pub(super) fn read_npy(
        &mut self,
        path: &Path,
        size: GridSize,
        depth: usize,
        wraps: bool,
    ) -> Result<Vec<u8>> {
        let ranks = self.link()?.ranks();
        let bands = Bands::with_wrap(size, ranks, depth, wraps)?;
        let band = bands.band(self.link()?.rank());
        let sharing = ranks_on_this_host(self.link()?)?;
        // The rows read, the band held with its halos, the rows kept for a reset: checked for
        // every rank of this host before any reads.
        let needed = band.held_size()?.bytes() * BAND_HOST_COPIES * sharing;
        let what = format!(
            "band of rank {} (rows {}..{} of {}; {BAND_HOST_COPIES} copies, {sharing} ranks on \
             this host)",
            band.rank,
            band.first_row,
            band.first_row + band.rows,
            path.display()
        );
        let read = crate::memory::ensure_host_memory(&what, needed)
            .and_then(|()| crate::import::read_npy_rows(path, size, band.first_row, band.rows));
        let failed = self.link()?.max(f64::from(u8::from(read.is_err())))? > 0.0;
        match (read, failed) {
            (Ok(own), false) => self.split_own(bands, &own).map(|()| Vec::new()),
            (Ok(_), true) => Ok(Vec::new()),
            (Err(error), _) => Err(error),
        }
    }

    /// This rank's own rows of the field, or of its Laplacian under `boundary`, written into
    /// one `.npy` at `path` with every rank's ([`write_npy_by_ranks`]), once every rank has
    /// its rows.
    pub(super) fn write_npy(
        &mut self,
        path: &Path,
        layer: Layer,
        boundary: Boundary,
    ) -> Result<Vec<u8>> {
        let field = self.field()?;
        let own = match layer {
            Layer::Field => field.own_rows().map(Grid::into_vec),
            Layer::Laplacian => field.own_laplacian(boundary),
        };
        let failed = field.link().max(f64::from(u8::from(own.is_err())))? > 0.0;
        let (band, size) = (*field.band(), field.bands().size());
        match (own, failed) {
            (Ok(own), false) => {
                write_npy_by_ranks(path, size, &band, &own, field.link()).map(|()| Vec::new())
            }
            (Ok(_), true) => Ok(Vec::new()),
            (Err(error), _) => Err(error),
        }
    }

    /// Keeps this rank's own rows as the run's initial field.
    pub(super) fn keep_initial(&mut self) -> Result<Vec<u8>> {
        self.initial = Some(self.field()?.own_rows()?);
        Ok(Vec::new())
    }

    /// Makes the kept own rows this rank's field again.
    pub(super) fn restore_initial(&mut self) -> Result<Vec<u8>> {
        let bands = *self.field()?.bands();
        let own = self.initial.take().ok_or_else(no_initial)?;
        let split = self.split_own(bands, &own);
        self.initial = Some(own);
        split.map(|()| Vec::new())
    }

    /// Lets the kept own rows go; answers nothing.
    pub(super) fn forget_initial(&mut self) -> Vec<u8> {
        self.initial = None;
        Vec::new()
    }

    /// The kept own rows.
    pub(super) fn initial_bytes(&self) -> Result<Vec<u8>> {
        let own = self.initial.as_ref().ok_or_else(no_initial)?;
        Ok(f32_bytes(own.as_slice()))
    }
}

fn no_initial() -> HeatlabError {
    HeatlabError::Internal("this rank keeps no initial field".into())
}
