//! A band's halo exchange overlapped with its interior, on a CUDA backend.
//!
//! At the start of a round of `depth` steps the band is whole. Its edge strips (the `3 × depth`
//! held rows at each edge beside a neighbour) are copied and stepped `depth` steps on a second
//! stream of the greatest priority: their middle `depth` rows are then the band's own edge rows
//! after the round, exact for the same reason the band's own rows are (each row's
//! `depth`-row neighbourhood lies inside its strip). Those rows go to the neighbours (NCCL on
//! the second stream, or through the host and MPI) while the field's stream steps the whole
//! band; the rows received are placed into the halos once both streams are done, and the band
//! is whole again. Nothing is computed differently: every own row is still the band's own
//! stepping, bit for bit; the strips only make the neighbours' rows early. The host queues
//! round after round without waiting for the GPU's stepping, so the field's stream never waits
//! for the host either.
//!
//! The price is stepping `2 × 3 × depth` rows more per round (the strips), against the
//! exchange's wait: worth it where the exchange is slow against the strips (through the host)
//! or the band is long.
//!
//! Halos that go device to device (NCCL) and do not overlap are queued round after round too:
//! the band's steps, then the exchange on the aside stream, the field's stream waiting for it
//! by an event. The host waits once at the end, not at every round.

use std::time::Instant;

use crate::compute::{Backend, CudaBackend, StepParams};
use crate::error::{HeatlabError, Result};
use crate::grid::RowSpan;

use super::band_field::BandField;
use super::bands::Band;

/// Where a band's edge strips lie and what of them goes where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverlapPlan {
    /// The strips stepped aside, among the held rows, in order: the top strip (if the band
    /// has a neighbour above), then the bottom one (if below).
    pub spans: Vec<RowSpan>,
    /// The rows sent up: (strip, first row in it), `depth` rows.
    pub send_above: Option<(usize, usize)>,
    /// The rows sent down: (strip, first row in it), `depth` rows.
    pub send_below: Option<(usize, usize)>,
    /// The slots of rows received (cells each): the halo above, then the halo below.
    pub receive_cells: Vec<usize>,
    /// The slot of the halo above, if any.
    pub receive_above: Option<usize>,
    /// The slot of the halo below, if any.
    pub receive_below: Option<usize>,
    /// Where each slot goes: (slot, first held row).
    pub placements: Vec<(usize, usize)>,
}

impl OverlapPlan {
    /// The plan of `band` with halos `depth` rows deep.
    pub fn of(band: &Band, depth: usize) -> Self {
        let held = band.held_rows();
        let own_first = band.own_offset();
        let mut plan = Self {
            spans: Vec::new(),
            send_above: None,
            send_below: None,
            receive_cells: Vec::new(),
            receive_above: None,
            receive_below: None,
            placements: Vec::new(),
        };
        if band.above.is_some() {
            let span = RowSpan {
                first: 0,
                count: (3 * depth).min(held),
            };
            plan.send_above = Some((plan.spans.len(), own_first - span.first));
            plan.spans.push(span);
        }
        if band.below.is_some() {
            let first = held.saturating_sub(3 * depth);
            let span = RowSpan {
                first,
                count: held - first,
            };
            let sent_first = own_first + band.rows - depth;
            plan.send_below = Some((plan.spans.len(), sent_first - span.first));
            plan.spans.push(span);
        }
        if band.halo_above > 0 {
            plan.receive_above = Some(plan.receive_cells.len());
            plan.placements.push((plan.receive_cells.len(), 0));
            plan.receive_cells.push(band.halo_above * band.cols);
        }
        if band.halo_below > 0 {
            plan.receive_below = Some(plan.receive_cells.len());
            plan.placements
                .push((plan.receive_cells.len(), own_first + band.rows));
            plan.receive_cells.push(band.halo_below * band.cols);
        }
        plan
    }
}

/// Whether rounds overlap their exchange, as asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OverlapChoice {
    /// Where the halos go through the host (there the exchange costs a fifth to a quarter of
    /// the time; the strips, a few percent), not over NCCL (its exchange, queued after each
    /// round, costs 0.6-1.5%, less than the strips and NCCL's kernels beside the stepping:
    /// measured on two H200s).
    #[default]
    Auto,
    /// Wherever every rank steps the plate on a GPU.
    On,
    /// Never: the exchange after each round.
    Off,
}

impl OverlapChoice {
    /// Every choice, in the order a selector lists them.
    pub const ALL: [Self; 3] = [Self::Auto, Self::On, Self::Off];

    /// Whether a band whose halos go device to device (`on_device`) or through the host
    /// overlaps its rounds (where every rank can).
    pub fn overlaps(self, on_device: bool) -> bool {
        match self {
            Self::Auto => !on_device,
            Self::On => true,
            Self::Off => false,
        }
    }
}

impl std::fmt::Display for OverlapChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Auto => "auto",
            Self::On => "on",
            Self::Off => "off",
        })
    }
}

impl std::str::FromStr for OverlapChoice {
    type Err = HeatlabError;

    fn from_str(text: &str) -> Result<Self> {
        crate::choice::parse_choice(&Self::ALL, text, "overlap")
    }
}

/// Whether a band overlaps its exchange: to be decided by every rank at once, or decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overlap {
    /// Asked for; the ranks decide together at the first whole round whether all of them can.
    Wanted,
    /// Every rank overlaps (CUDA backends all).
    On,
    /// Not asked for, or a rank cannot (a CPU backend, no room for the strips).
    Off,
}

fn cuda_of(backend: &mut dyn Backend) -> Result<&mut CudaBackend> {
    backend.cuda_mut().ok_or_else(|| {
        HeatlabError::Internal("an overlapped exchange on a backend that is not CUDA".into())
    })
}

/// How rounds of `depth` steps are queued on the GPU, the host not waiting between them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QueuedRound {
    /// The exchange overlapped with the interior: strips stepped aside (see the module).
    Overlapped,
    /// The band stepped, then its halos exchanged device to device.
    ThenExchanged,
}

impl BandField {
    /// How the next rounds are queued (every rank calls it at once, at the start of a whole
    /// round), or `None` where the host steps and exchanges them one by one (a CPU backend,
    /// halos through the host without overlap).
    pub(super) fn queued_rounds(&mut self) -> Result<Option<QueuedRound>> {
        if self.overlaps_round()? {
            return Ok(Some(QueuedRound::Overlapped));
        }
        let on_gpu = self.backend.cuda().is_some();
        Ok((on_gpu && self.device_exchange.is_some()).then_some(QueuedRound::ThenExchanged))
    }

    /// Whether the next round of `depth` steps overlaps its exchange (every rank calls it at
    /// once, at the start of a whole round): decided with the other ranks the first time.
    pub(super) fn overlaps_round(&mut self) -> Result<bool> {
        if self.overlap == Overlap::Wanted {
            let plan = OverlapPlan::of(self.band(), self.bands().depth());
            let able = match self.backend.cuda_mut() {
                Some(cuda) => match cuda.prepare_aside(&plan.spans, &plan.receive_cells) {
                    Ok(()) => true,
                    Err(error) => {
                        log::warn!("the halo exchange cannot overlap the interior: {error}");
                        false
                    }
                },
                None => false,
            };
            let unable_anywhere = self.link().max(if able { 0.0 } else { 1.0 })?;
            self.overlap = match unable_anywhere > 0.0 {
                true => Overlap::Off,
                false => Overlap::On,
            };
        }
        // A heat problem or the tutorial's kernel is the same on every rank: so is this.
        Ok(self.overlap == Overlap::On
            && self.backend.cuda().is_some_and(CudaBackend::can_step_aside))
    }

    /// `rounds` rounds of `depth` steps, each with its exchange (see the module's comment).
    /// The host queues each round behind the last without waiting for the GPU's stepping
    /// (overlapped through the host it waits for the strips alone), and waits once at the end.
    pub(super) fn advance_rounds(
        &mut self,
        rounds: u64,
        kind: QueuedRound,
        params: &StepParams,
    ) -> Result<()> {
        let started = Instant::now();
        let band = *self.band();
        let depth = self.bands().depth();
        let plan = OverlapPlan::of(&band, depth);
        let mut queued = Ok(());
        for _ in 0..rounds {
            queued = match kind {
                QueuedRound::Overlapped => self.queue_overlapped_round(&band, depth, &plan, params),
                QueuedRound::ThenExchanged => self.queue_round_then_exchange(&band, depth, params),
            };
            if queued.is_err() {
                break;
            }
        }
        // Waited for even after a failure: nothing stays queued behind an error.
        let stepping = cuda_of(self.backend.as_mut())?.finish_rounds();
        queued?;
        let stepping = stepping?;
        self.since_exchange = 0;
        self.times.stepping += stepping;
        self.times.exchanging += started.elapsed().saturating_sub(stepping);
        self.times.exchanges += rounds;
        Ok(())
    }

    /// Queues one round: the band's steps, then its halos exchanged device to device.
    fn queue_round_then_exchange(
        &mut self,
        band: &Band,
        depth: usize,
        params: &StepParams,
    ) -> Result<()> {
        cuda_of(self.backend.as_mut())?.queue_round(depth as u64, params)?;
        let device = self.device_exchange.as_mut().ok_or_else(|| {
            HeatlabError::Internal("a round exchanged on the device without NCCL".into())
        })?;
        device.exchange(self.backend.as_mut(), band, depth)
    }

    /// Queues one round: the strips stepped aside, their rows exchanged, the band stepped, the
    /// rows received placed into the halos.
    fn queue_overlapped_round(
        &mut self,
        band: &Band,
        depth: usize,
        plan: &OverlapPlan,
        params: &StepParams,
    ) -> Result<()> {
        let cuda = cuda_of(self.backend.as_mut())?;
        cuda.step_aside(&plan.spans, depth as u64, params)?;
        // The received slots were made when the ranks decided (`overlaps_round`).
        if let Some(device) = self.device_exchange.as_mut() {
            device.exchange_aside(self.backend.as_mut(), band, depth, plan)?;
        }
        cuda_of(self.backend.as_mut())?.queue_round(depth as u64, params)?;
        if self.device_exchange.is_none() {
            self.exchange_through_host_aside(band, plan)?;
        }
        cuda_of(self.backend.as_mut())?.place_received(&plan.placements)
    }

    /// The host's part of an overlapped round: the strips' rows read, exchanged over the link,
    /// the rows received written to the GPU (the field's stream still stepping).
    fn exchange_through_host_aside(&mut self, band: &Band, plan: &OverlapPlan) -> Result<()> {
        let cuda = cuda_of(self.backend.as_mut())?;
        if let Some((strip, first)) = plan.send_above {
            cuda.read_aside(strip, first, &mut self.to_above)?;
        }
        if let Some((strip, first)) = plan.send_below {
            cuda.read_aside(strip, first, &mut self.to_below)?;
        }
        self.swap_edges(band)?;
        let cuda = cuda_of(self.backend.as_mut())?;
        if let Some(slot) = plan.receive_above {
            cuda.write_received(slot, &self.from_above)?;
        }
        if let Some(slot) = plan.receive_below {
            cuda.write_received(slot, &self.from_below)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::distributed::Bands;
    use crate::grid::{Boundary, GridSize};

    #[test]
    fn the_strips_hold_the_rows_sent_and_the_halos_take_the_rows_received() {
        let bands = Bands::new(GridSize::new(100, 8).unwrap(), 3, 4, Boundary::Dirichlet).unwrap();
        // The first band: a neighbour below only.
        let first = OverlapPlan::of(&bands.band(0), 4);
        let held = bands.band(0).held_rows();
        assert_eq!(
            first.spans,
            vec![RowSpan {
                first: held - 12,
                count: 12
            }]
        );
        // Its last 4 own rows: held rows held-8..held-4, rows 4..8 of the strip.
        assert_eq!((first.send_above, first.send_below), (None, Some((0, 4))));
        assert_eq!(first.receive_cells, vec![4 * 8]);
        assert_eq!(first.placements, vec![(0, held - 4)]);
        // A middle band: both.
        let middle = OverlapPlan::of(&bands.band(1), 4);
        let held = bands.band(1).held_rows();
        assert_eq!(
            middle.spans,
            vec![
                RowSpan {
                    first: 0,
                    count: 12
                },
                RowSpan {
                    first: held - 12,
                    count: 12
                }
            ]
        );
        assert_eq!(middle.send_above, Some((0, 4)));
        assert_eq!(middle.send_below, Some((1, 4)));
        assert_eq!(middle.placements, vec![(0, 0), (1, held - 4)]);
    }

    #[test]
    fn auto_overlaps_the_exchange_through_the_host_not_over_nccl() {
        let parsed: Vec<OverlapChoice> = ["auto", "ON", " off "]
            .iter()
            .map(|text| text.parse().unwrap())
            .collect();
        assert_eq!(parsed, OverlapChoice::ALL);
        assert!("sometimes".parse::<OverlapChoice>().is_err());
        let on_device = [true, false];
        let overlaps = |choice: OverlapChoice| on_device.map(|device| choice.overlaps(device));
        assert_eq!(overlaps(OverlapChoice::Auto), [false, true]);
        assert_eq!(overlaps(OverlapChoice::On), [true, true]);
        assert_eq!(overlaps(OverlapChoice::Off), [false, false]);
    }

    #[test]
    fn a_band_shorter_than_its_strips_steps_all_its_rows_aside() {
        // 10 rows over 2 ranks with halos 4 deep: each band holds 9 rows, fewer than 12.
        let bands = Bands::new(GridSize::new(10, 8).unwrap(), 2, 4, Boundary::Dirichlet).unwrap();
        let plan = OverlapPlan::of(&bands.band(0), 4);
        assert_eq!(plan.spans, vec![RowSpan { first: 0, count: 9 }]);
        // Own rows 1..5 of 5: the last 4 are held rows 1..5.
        assert_eq!(plan.send_below, Some((0, 1)));
        let plan = OverlapPlan::of(&bands.band(1), 4);
        assert_eq!(plan.spans, vec![RowSpan { first: 0, count: 9 }]);
        assert_eq!(plan.send_above, Some((0, 4)));
    }
}
