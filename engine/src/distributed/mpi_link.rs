//! The ranks of a run launched by `mpirun`, through MPI (Open MPI): halos as non-blocking
//! point-to-point messages tagged by direction, sums gathered and added in rank order.

use mpi::collective::SystemOperation;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Destination, Equivalence, Root, Source};

use crate::error::{HeatlabError, Result};

use super::bands::Band;
use super::link::RankLink;

/// Rows going up: the receiver's halo below.
const GOING_UP: i32 = 1;
/// Rows going down: the receiver's halo above.
const GOING_DOWN: i32 = 2;
/// Bytes gathered on or scattered from one rank.
const BYTES: i32 = 3;
/// The most bytes in one MPI message (its count is an `i32`).
const MESSAGE_BYTES: usize = 1 << 30;

/// This process's rank among the processes `mpirun` started.
pub struct MpiLink {
    world: SimpleCommunicator,
}

/// MPI initialized in this process: dropping it finalizes MPI, so it outlives every
/// [`MpiLink`] and every abort.
pub struct MpiSession {
    _universe: Universe,
}

// SAFETY: MPI is initialized with `Threading::Serialized` (checked in `MpiLink::start`), so any
// one thread may call it at a time; the link is used through `&mut self` only, by one thread at
// a time, and moving it between threads moves no MPI state that is tied to a thread.
unsafe impl Send for MpiLink {}

impl MpiLink {
    /// Initializes MPI (once per process) and joins the world's ranks.
    pub fn start() -> Result<(MpiSession, Self)> {
        let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Serialized)
            .ok_or_else(|| {
                HeatlabError::Internal("MPI was already initialized in this process".into())
            })?;
        if threading < mpi::Threading::Serialized {
            return Err(HeatlabError::Unsupported(format!(
                "this MPI library offers the threading level {threading:?}; heatlab needs \
                 Serialized (one thread at a time)"
            )));
        }
        let world = universe.world();
        Ok((
            MpiSession {
                _universe: universe,
            },
            Self { world },
        ))
    }

    /// A link to the world's ranks for a process whose MPI is already started (its first
    /// link was moved away).
    pub fn start_again() -> Self {
        Self {
            world: SimpleCommunicator::world(),
        }
    }

    /// Another link to the same ranks (its messages never mix with this one's).
    pub fn duplicate(&self) -> Self {
        Self {
            world: self.world.duplicate(),
        }
    }

    /// MPI's world communicator (for NCCL's id).
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// Gathers `value` from every rank, in rank order.
    fn gather(&mut self, value: f64) -> Vec<f64> {
        let mut values = vec![0.0; self.ranks()];
        self.world.all_gather_into(&value, &mut values[..]);
        values
    }

    /// Gathers every rank's bytes on every rank (a build's fingerprint, a failure's reason).
    pub fn all_gather_bytes(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let length = bytes.len() as u64;
        let mut lengths = vec![0_u64; self.ranks()];
        self.world.all_gather_into(&length, &mut lengths[..]);
        let longest = lengths.iter().copied().max().unwrap_or(0) as usize;
        if longest == 0 {
            // Nothing to gather (MPI refuses a gather of empty buffers).
            return vec![Vec::new(); self.ranks()];
        }
        let mut padded = bytes.to_vec();
        padded.resize(longest, 0);
        let mut all = vec![0_u8; longest * self.ranks()];
        self.world.all_gather_into(&padded[..], &mut all[..]);
        all.chunks(longest.max(1))
            .zip(lengths)
            .map(|(chunk, length)| chunk[..length as usize].to_vec())
            .collect()
    }

    /// Sends `values` to `to`: their count, then pieces MPI can count (a band of a 131072²
    /// field holds more values than an `i32` counts).
    fn send_values<T: Equivalence>(&self, to: usize, values: &[T]) {
        let process = self.world.process_at_rank(rank_number(to));
        process.send_with_tag(&(values.len() as u64), BYTES);
        for piece in values.chunks(MESSAGE_BYTES / std::mem::size_of::<T>().max(1)) {
            process.send_with_tag(piece, BYTES);
        }
    }

    /// Receives what [`MpiLink::send_values`] sent from `from`, after the values in `onto`.
    fn receive_values_onto<T: Equivalence + Copy + Default>(&self, from: usize, onto: &mut Vec<T>) {
        let process = self.world.process_at_rank(rank_number(from));
        let (count, _) = process.receive_with_tag::<u64>(BYTES);
        let start = onto.len();
        onto.resize(start + count as usize, T::default());
        for piece in onto[start..].chunks_mut(MESSAGE_BYTES / std::mem::size_of::<T>().max(1)) {
            process.receive_into_with_tag(piece, BYTES);
        }
    }

    /// Receives the bytes [`MpiLink::send_values`] sent from `from`.
    fn receive_bytes(&self, from: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        self.receive_values_onto(from, &mut bytes);
        bytes
    }

    /// Ends every rank of the run now with `code` (a rank that cannot go on while the others
    /// wait for it).
    pub fn abort(&self, code: i32) -> ! {
        self.world.abort(code)
    }

    /// [`MpiLink::abort`] where the link is no longer at hand (it was moved into a band).
    pub fn abort_world(code: i32) -> ! {
        SimpleCommunicator::world().abort(code)
    }
}

impl RankLink for MpiLink {
    fn rank(&self) -> usize {
        // MPI ranks are never negative.
        usize::try_from(self.world.rank()).unwrap_or(0)
    }

    fn ranks(&self) -> usize {
        usize::try_from(self.world.size()).unwrap_or(1)
    }

    fn exchange_halos(
        &mut self,
        band: &Band,
        to_above: &[f32],
        to_below: &[f32],
        from_above: &mut [f32],
        from_below: &mut [f32],
    ) -> Result<()> {
        let world = &self.world;
        let peer = |rank: usize| world.process_at_rank(rank as i32);
        mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(4);
            if let Some(above) = band.above {
                requests.push(
                    peer(above).immediate_receive_into_with_tag(scope, from_above, GOING_DOWN),
                );
            }
            if let Some(below) = band.below {
                requests
                    .push(peer(below).immediate_receive_into_with_tag(scope, from_below, GOING_UP));
            }
            let mut sends = Vec::with_capacity(2);
            if let Some(above) = band.above {
                sends.push(peer(above).immediate_send_with_tag(scope, to_above, GOING_UP));
            }
            if let Some(below) = band.below {
                sends.push(peer(below).immediate_send_with_tag(scope, to_below, GOING_DOWN));
            }
            for request in requests {
                request.wait();
            }
            for request in sends {
                request.wait();
            }
        });
        Ok(())
    }

    fn sum_in_rank_order(&mut self, value: f64) -> Result<f64> {
        Ok(self.gather(value).iter().sum())
    }

    fn min(&mut self, value: f64) -> Result<f64> {
        let mut out = 0.0;
        self.world
            .all_reduce_into(&value, &mut out, SystemOperation::min());
        Ok(out)
    }

    fn max(&mut self, value: f64) -> Result<f64> {
        let mut out = 0.0;
        self.world
            .all_reduce_into(&value, &mut out, SystemOperation::max());
        Ok(out)
    }

    fn barrier(&mut self) -> Result<()> {
        self.world.barrier();
        Ok(())
    }

    fn gather_rows(&mut self, own: &[f32], root: usize) -> Result<Option<Vec<f32>>> {
        if self.rank() != root {
            self.send_values(root, own);
            return Ok(None);
        }
        let mut all = Vec::new();
        for from in 0..self.ranks() {
            match from == root {
                true => all.extend_from_slice(own),
                false => self.receive_values_onto(from, &mut all),
            }
        }
        Ok(Some(all))
    }

    fn gather_bytes(&mut self, own: &[u8], root: usize) -> Result<Option<Vec<Vec<u8>>>> {
        if self.rank() != root {
            self.send_values(root, own);
            return Ok(None);
        }
        Ok(Some(
            (0..self.ranks())
                .map(|from| match from == root {
                    true => own.to_vec(),
                    false => self.receive_bytes(from),
                })
                .collect(),
        ))
    }

    fn scatter_bytes(&mut self, parts: &[Vec<u8>], root: usize) -> Result<Vec<u8>> {
        if self.rank() != root {
            return Ok(self.receive_bytes(root));
        }
        if parts.len() != self.ranks() {
            return Err(HeatlabError::Internal(format!(
                "{} parts for {} ranks",
                parts.len(),
                self.ranks()
            )));
        }
        for (to, part) in parts.iter().enumerate().filter(|&(to, _)| to != root) {
            self.send_values(to, part);
        }
        Ok(parts[root].clone())
    }

    fn broadcast_bytes(&mut self, bytes: &[u8], root: usize) -> Result<Vec<u8>> {
        let root_process = self.world.process_at_rank(root as i32);
        let mut length = bytes.len() as u64;
        root_process.broadcast_into(&mut length);
        let mut shared = if self.rank() == root {
            bytes.to_vec()
        } else {
            vec![0_u8; length as usize]
        };
        if length > 0 {
            root_process.broadcast_into(&mut shared[..]);
        }
        Ok(shared)
    }
}

/// A rank as MPI numbers it (ranks come from MPI's own `i32` count).
fn rank_number(rank: usize) -> i32 {
    i32::try_from(rank).unwrap_or(i32::MAX)
}
