//! One rank's band of a field split over ranks, stepped by an ordinary [`Backend`].
//!
//! The band is held with `depth` halo rows beside its own (see [`super::bands`]) and stepped
//! as a field of its own under the plate's boundary. A step of a cell reads only its four
//! neighbours, so after `s` steps only the `s` outermost halo rows beside a neighbour are
//! wrong (their neighbours outside the band were not there); the band's own rows stay exact
//! for `depth` steps, after which the halos are exchanged and the band is whole again. At the
//! field's own edges the band's edge is the field's, and the boundary there is the field's.
//! Every own row is therefore computed from the same values by the same kernel as in the
//! single-rank run: equal bit for bit, whatever backend, kernel or number of ranks.

use std::time::{Duration, Instant};

use crate::compute::{Backend, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize, RowSpan};
use crate::memory::try_filled_vec;

use super::bands::{Band, Bands};
use super::link::RankLink;
use super::overlap::{Overlap, OverlapPlan};

/// Time a band spent stepping and exchanging.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BandTimes {
    /// Stepping, as the backend measured it.
    pub stepping: Duration,
    /// Exchanging halos (reading the edge rows, the messages, writing the halos), wall time.
    pub exchanging: Duration,
    /// Exchanges made.
    pub exchanges: u64,
}

/// Halos exchanged where the backend holds the band (GPU to GPU), instead of through the host
/// and the [`RankLink`].
pub trait DeviceExchange: Send {
    /// Queues, behind the field's stepping queued so far, the sending of `band`'s top and
    /// bottom `depth` own rows to its neighbours and the writing of theirs into its halos, in
    /// `backend`'s memory; the field's stream waits for it, the host does not.
    fn exchange(&mut self, backend: &mut dyn Backend, band: &Band, depth: usize) -> Result<()>;

    /// Queues, behind the strips `backend` stepped aside by `plan`, the sending of their rows
    /// to the neighbours and the receiving of theirs into the received slots; nothing is
    /// waited for (the field's stream places them, see [`super::overlap`]).
    fn exchange_aside(
        &mut self,
        backend: &mut dyn Backend,
        band: &Band,
        depth: usize,
        plan: &OverlapPlan,
    ) -> Result<()>;
}

/// What a band is made of: the link, the backend, the device exchange.
pub struct BandParts {
    /// The link to the other ranks.
    pub link: Box<dyn RankLink>,
    /// The backend that stepped the band.
    pub backend: Box<dyn Backend>,
    /// Halos device to device, if they went so.
    pub device_exchange: Option<Box<dyn DeviceExchange>>,
}

/// A band that could not be held: why, and the link and backend given back.
pub type Unheld = Box<(HeatlabError, BandParts)>;

/// Why a band could not be held, with its link and backend given back.
fn unheld(error: HeatlabError, link: Box<dyn RankLink>, backend: Box<dyn Backend>) -> Unheld {
    let parts = BandParts {
        link,
        backend,
        device_exchange: None,
    };
    Box::new((error, parts))
}

/// One rank's band, its backend and its link to the other ranks.
pub struct BandField {
    bands: Bands,
    band: Band,
    pub(super) backend: Box<dyn Backend>,
    link: Box<dyn RankLink>,
    /// Steps taken since the halos were last whole.
    pub(super) since_exchange: usize,
    pub(super) to_above: Vec<f32>,
    pub(super) to_below: Vec<f32>,
    pub(super) from_above: Vec<f32>,
    pub(super) from_below: Vec<f32>,
    pub(super) times: BandTimes,
    pub(super) device_exchange: Option<Box<dyn DeviceExchange>>,
    /// Whether whole rounds overlap their exchange with the interior.
    pub(super) overlap: Overlap,
}

/// The rows rank `band` holds of `whole`: its halo above, its own rows and its halo below
/// (wrapping around a periodic field's edges).
pub fn held_rows(whole: &Grid, band: &Band) -> Result<Grid> {
    let values = rows_of(whole.as_slice(), whole.size(), band, true);
    Grid::from_vec(band.held_size()?, values)
}

/// Of a row-major array of `size` (a field, a material map), the rows `band` holds (`held`:
/// halos too, wrapping around a periodic field's edges) or owns.
pub fn rows_of<T: Copy>(whole: &[T], size: GridSize, band: &Band, held: bool) -> Vec<T> {
    let (rows, cols) = (size.rows, size.cols);
    let (first, count) = match held {
        true => (band.first_held_row(rows), band.held_rows()),
        false => (band.first_row, band.rows),
    };
    let mut values = Vec::with_capacity(count * cols);
    for offset in 0..count {
        let row = (first + offset) % rows;
        values.extend_from_slice(&whole[row * cols..(row + 1) * cols]);
    }
    values
}

impl BandField {
    /// The band of `link`'s rank, its held rows taken from `whole` (every rank holds the same
    /// whole field: generated alike, or read from one file) and uploaded to `backend`.
    pub fn new(
        bands: Bands,
        link: Box<dyn RankLink>,
        backend: Box<dyn Backend>,
        whole: &Grid,
    ) -> Result<Self> {
        if whole.size() != bands.size() {
            return Err(HeatlabError::Internal(format!(
                "the bands split a {} field, not this {} one",
                bands.size(),
                whole.size()
            )));
        }
        let band = bands.band(link.rank());
        Self::with_held(bands, link, backend, &held_rows(whole, &band)?)
    }

    /// The band of `link`'s rank from its held rows alone (halos, own rows, halos: a field
    /// too large for one host is never whole anywhere).
    pub fn with_held(
        bands: Bands,
        link: Box<dyn RankLink>,
        backend: Box<dyn Backend>,
        held: &Grid,
    ) -> Result<Self> {
        Self::try_with_held(bands, link, backend, held).map_err(|unheld| unheld.0)
    }

    /// [`BandField::with_held`], giving the link and the backend back when the band cannot be
    /// held (its upload refused for memory, say): the rank stays able to answer.
    fn try_with_held(
        bands: Bands,
        link: Box<dyn RankLink>,
        mut backend: Box<dyn Backend>,
        held: &Grid,
    ) -> std::result::Result<Self, Unheld> {
        let band = bands.band(link.rank());
        let checked = if link.ranks() != bands.ranks() {
            Err(HeatlabError::Internal(format!(
                "{} bands for {} ranks",
                bands.ranks(),
                link.ranks()
            )))
        } else {
            band.held_size().and_then(|size| match held.size() == size {
                true => backend.upload(held),
                false => Err(HeatlabError::Internal(format!(
                    "rank {} holds {} rows, not the {} of its band",
                    band.rank,
                    held.rows(),
                    band.held_rows()
                ))),
            })
        };
        if let Err(error) = checked {
            return Err(unheld(error, link, backend));
        }
        let edge = bands.depth() * band.cols;
        Ok(Self {
            bands,
            band,
            backend,
            link,
            since_exchange: 0,
            to_above: vec![0.0; if band.above.is_some() { edge } else { 0 }],
            to_below: vec![0.0; if band.below.is_some() { edge } else { 0 }],
            from_above: vec![0.0; band.halo_above * band.cols],
            from_below: vec![0.0; band.halo_below * band.cols],
            times: BandTimes::default(),
            device_exchange: None,
            overlap: Overlap::Wanted,
        })
    }

    /// The band of `link`'s rank from its own rows alone (`own`, as many as the band owns):
    /// its halos are filled by an exchange before its next step or Laplacian.
    pub fn from_own(
        bands: Bands,
        link: Box<dyn RankLink>,
        backend: Box<dyn Backend>,
        own: &Grid,
    ) -> Result<Self> {
        Self::try_from_own(bands, link, backend, own).map_err(|unheld| unheld.0)
    }

    /// [`BandField::from_own`], giving the link and the backend back when the band cannot be
    /// held.
    pub fn try_from_own(
        bands: Bands,
        link: Box<dyn RankLink>,
        backend: Box<dyn Backend>,
        own: &Grid,
    ) -> std::result::Result<Self, Unheld> {
        let band = bands.band(link.rank());
        let held = GridSize::new(band.rows, band.cols)
            .and_then(|size| match own.size() == size {
                true => Ok(()),
                false => Err(HeatlabError::Internal(format!(
                    "rank {} owns {} rows of {} cells, not this {} field",
                    band.rank,
                    band.rows,
                    band.cols,
                    own.size()
                ))),
            })
            .and_then(|()| band.held_size())
            .and_then(|size| {
                let mut values = try_filled_vec("a band with its halos", size.cells(), 0.0)?;
                let first = band.own_offset() * band.cols;
                values[first..first + own.as_slice().len()].copy_from_slice(own.as_slice());
                Grid::from_vec(size, values)
            });
        let held = match held {
            Ok(held) => held,
            Err(error) => return Err(unheld(error, link, backend)),
        };
        let mut field = Self::try_with_held(bands, link, backend, &held)?;
        field.halos_stale();
        Ok(field)
    }

    /// The link, the backend and the device exchange, taken back (to split a new field).
    pub fn into_parts(self) -> BandParts {
        BandParts {
            link: self.link,
            backend: self.backend,
            device_exchange: self.device_exchange,
        }
    }

    /// The own rows were written other than by stepping: the halos are exchanged again before
    /// the next step or Laplacian.
    pub fn halos_stale(&mut self) {
        self.since_exchange = self.bands.depth();
    }

    /// Where the own rows are among the held ones.
    pub fn own_span(&self) -> RowSpan {
        RowSpan {
            first: self.band.own_offset(),
            count: self.band.rows,
        }
    }

    /// This rank's band.
    pub fn band(&self) -> &Band {
        &self.band
    }

    /// How the field is split.
    pub fn bands(&self) -> &Bands {
        &self.bands
    }

    /// The backend stepping the band.
    pub fn backend(&self) -> &dyn Backend {
        self.backend.as_ref()
    }

    /// The link to the other ranks.
    pub fn link(&mut self) -> &mut dyn RankLink {
        self.link.as_mut()
    }

    /// Exchanges the halos where the field is from now on (see [`DeviceExchange`]).
    pub fn exchange_on_device(&mut self, exchange: Box<dyn DeviceExchange>) {
        self.device_exchange = Some(exchange);
    }

    /// Whether halos go device to device.
    pub fn exchanges_on_device(&self) -> bool {
        self.device_exchange.is_some()
    }

    /// Whether whole rounds of `depth` steps overlap their exchange with the interior (on
    /// by default, where every rank steps on a GPU; every rank sets the same).
    pub fn set_overlap(&mut self, overlap: bool) {
        self.overlap = match overlap {
            true => Overlap::Wanted,
            false => Overlap::Off,
        };
    }

    /// Whether whole rounds overlap their exchange: asked for and possible on every rank (the
    /// ranks decide at the first whole round; until then, no).
    pub fn overlaps_exchange(&self) -> bool {
        self.overlap == Overlap::On
    }

    /// The backend stepping the band, to change.
    pub fn backend_mut(&mut self) -> &mut dyn Backend {
        self.backend.as_mut()
    }

    /// Time spent so far.
    pub fn times(&self) -> BandTimes {
        self.times
    }

    /// Advances the whole field by `steps` steps (every rank calls it with the same count),
    /// exchanging halos every `depth` steps.
    pub fn advance(&mut self, steps: u64, params: &StepParams) -> Result<()> {
        let depth = self.bands.depth();
        let mut left = steps;
        while left > 0 {
            if self.since_exchange == depth {
                self.exchange()?;
            }
            if self.since_exchange == 0 && left >= depth as u64 {
                if let Some(rounds_kind) = self.queued_rounds()? {
                    let rounds = left / depth as u64;
                    self.advance_rounds(rounds, rounds_kind, params)?;
                    left -= rounds * depth as u64;
                    continue;
                }
            }
            let room = (depth - self.since_exchange) as u64;
            let now = left.min(room);
            self.times.stepping += self.backend.advance(now, params)?;
            // At most `depth`: the cast back cannot truncate.
            self.since_exchange += now as usize;
            left -= now;
        }
        Ok(())
    }

    /// Sends the band's edge rows to its neighbours and takes their rows as its halos.
    fn exchange(&mut self) -> Result<()> {
        let started = Instant::now();
        let band = self.band;
        let depth = self.bands.depth();
        if let Some(device) = self.device_exchange.as_mut() {
            device.exchange(self.backend.as_mut(), &band, depth)?;
            self.since_exchange = 0;
            self.times.exchanging += started.elapsed();
            self.times.exchanges += 1;
            return Ok(());
        }
        let own_first = band.own_offset();
        if band.above.is_some() {
            self.backend.read_rows(own_first, &mut self.to_above)?;
        }
        if band.below.is_some() {
            let first = own_first + band.rows - depth;
            self.backend.read_rows(first, &mut self.to_below)?;
        }
        self.swap_edges(&band)?;
        if band.halo_above > 0 {
            self.backend.write_rows(0, &self.from_above)?;
        }
        if band.halo_below > 0 {
            self.backend
                .write_rows(own_first + band.rows, &self.from_below)?;
        }
        self.since_exchange = 0;
        self.times.exchanging += started.elapsed();
        self.times.exchanges += 1;
        Ok(())
    }

    /// Sends the edge rows read into `to_above` / `to_below` over the link and takes the
    /// neighbours' into `from_above` / `from_below`.
    pub(super) fn swap_edges(&mut self, band: &Band) -> Result<()> {
        self.link.exchange_halos(
            band,
            &self.to_above,
            &self.to_below,
            &mut self.from_above,
            &mut self.from_below,
        )
    }

    /// Exchanges the halos now unless they are whole (no step since the last exchange), so
    /// that every held row is exact (every rank calls it at once).
    pub fn refresh_halos(&mut self) -> Result<()> {
        if self.since_exchange > 0 {
            self.exchange()?;
        }
        Ok(())
    }

    /// The Laplacian of the band's own rows under `boundary`, computed where the band is held,
    /// with whole halos (every rank calls it at once): the rows of the whole field's Laplacian.
    pub fn own_laplacian(&mut self, boundary: crate::grid::Boundary) -> Result<Vec<f32>> {
        self.refresh_halos()?;
        let cols = self.band.cols;
        let first = self.band.own_offset() * cols;
        // The held Laplacian's own rows, kept in place (no second copy of the band).
        let mut values = self.backend.laplacian(boundary)?.into_vec();
        values.truncate(first + self.band.rows * cols);
        values.drain(..first);
        Ok(values)
    }

    /// The band's own rows as a field of their own.
    pub fn own_rows(&mut self) -> Result<Grid> {
        let mut values = try_filled_vec("a band's own rows", self.band.rows * self.band.cols, 0.0)?;
        self.backend
            .read_rows(self.band.own_offset(), &mut values)?;
        Grid::from_vec(GridSize::new(self.band.rows, self.band.cols)?, values)
    }
}
