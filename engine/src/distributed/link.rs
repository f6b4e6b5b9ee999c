//! What the ranks of a run say to each other: halos between neighbours, and the few collective
//! steps a run needs (agreeing on a failure, a sum, a barrier). [`RankLink`] is implemented by
//! MPI (`MpiLink`, feature `distributed`) and, in one process, by threads ([`thread_links`], for
//! tests and for comparing decompositions without `mpirun`).

use std::sync::mpsc::{channel, Receiver, Sender};

use crate::error::{HeatlabError, Result};

use super::bands::Band;

/// One rank's end of the ranks of a run.
pub trait RankLink: Send {
    /// This rank, from 0.
    fn rank(&self) -> usize;
    /// How many ranks.
    fn ranks(&self) -> usize;
    /// Sends `to_above` (the band's top own rows) to the rank above and `to_below` (its bottom
    /// own rows) to the rank below, and receives the halos: `from_above` (the bottom rows of
    /// the rank above) and `from_below`. A side without a neighbour sends and receives nothing.
    fn exchange_halos(
        &mut self,
        band: &Band,
        to_above: &[f32],
        to_below: &[f32],
        from_above: &mut [f32],
        from_below: &mut [f32],
    ) -> Result<()>;
    /// The sum over ranks of `value`, added in rank order (the same on every rank).
    fn sum_in_rank_order(&mut self, value: f64) -> Result<f64>;
    /// The smallest of `value` over the ranks.
    fn min(&mut self, value: f64) -> Result<f64>;
    /// The largest of `value` over the ranks.
    fn max(&mut self, value: f64) -> Result<f64>;
    /// Waits until every rank is here.
    fn barrier(&mut self) -> Result<()>;
    /// Every rank's `own` values joined in rank order on `root` (`None` on the others).
    fn gather_rows(&mut self, own: &[f32], root: usize) -> Result<Option<Vec<f32>>>;
    /// `root`'s `bytes` on every rank (the others' are ignored).
    fn broadcast_bytes(&mut self, bytes: &[u8], root: usize) -> Result<Vec<u8>>;
    /// Every rank's `own` bytes on `root`, in rank order (`None` on the others).
    fn gather_bytes(&mut self, own: &[u8], root: usize) -> Result<Option<Vec<Vec<u8>>>>;
    /// `parts[rank]` of `root`'s parts on each rank (the others pass no parts).
    fn scatter_bytes(&mut self, parts: &[Vec<u8>], root: usize) -> Result<Vec<u8>>;
}

/// A message between two threads standing for ranks.
enum Message {
    /// Rows going up (the receiver's halo below).
    GoingUp(Vec<f32>),
    /// Rows going down (the receiver's halo above).
    GoingDown(Vec<f32>),
    /// A value for a collective step.
    Value(f64),
    /// A band's own rows, for the rank joining them.
    Rows(Vec<f32>),
    /// Bytes broadcast from one rank.
    Bytes(Vec<u8>),
}

/// The ranks of a run as threads of one process, each with channels to every other: `ranks`
/// links, one to move into each thread.
pub fn thread_links(ranks: usize) -> Vec<ThreadLink> {
    let (inboxes, receivers): (Vec<_>, Vec<_>) = (0..ranks).map(|_| channel()).unzip();
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, inbox)| ThreadLink {
            rank,
            peers: inboxes.clone(),
            inbox,
            pending: Vec::new(),
        })
        .collect()
}

/// One thread's link (see [`thread_links`]).
pub struct ThreadLink {
    rank: usize,
    peers: Vec<Sender<(usize, Message)>>,
    inbox: Receiver<(usize, Message)>,
    /// Messages that came before the one waited for.
    pending: Vec<(usize, Message)>,
}

impl ThreadLink {
    fn send(&self, to: usize, message: Message) -> Result<()> {
        self.peers[to].send((self.rank, message)).map_err(|_| {
            HeatlabError::Internal(format!("rank {to} has stopped (its thread ended)"))
        })
    }

    /// The first message from `from` that `wanted` accepts, keeping the others for later.
    fn receive(&mut self, from: usize, wanted: impl Fn(&Message) -> bool) -> Result<Message> {
        if let Some(index) = self
            .pending
            .iter()
            .position(|(sender, message)| *sender == from && wanted(message))
        {
            return Ok(self.pending.remove(index).1);
        }
        loop {
            let (sender, message) = self.inbox.recv().map_err(|_| {
                HeatlabError::Internal(format!("rank {from} has stopped (its thread ended)"))
            })?;
            if sender == from && wanted(&message) {
                return Ok(message);
            }
            self.pending.push((sender, message));
        }
    }

    fn receive_bytes(&mut self, from: usize) -> Result<Vec<u8>> {
        match self.receive(from, |m| matches!(m, Message::Bytes(_)))? {
            Message::Bytes(bytes) => Ok(bytes),
            Message::GoingUp(_) | Message::GoingDown(_) | Message::Value(_) | Message::Rows(_) => {
                Err(HeatlabError::Internal("rows came for bytes".into()))
            }
        }
    }

    fn gather_values(&mut self, value: f64) -> Result<Vec<f64>> {
        let ranks = self.peers.len();
        for to in (0..ranks).filter(|&to| to != self.rank) {
            self.send(to, Message::Value(value))?;
        }
        let mut values = Vec::with_capacity(ranks);
        for from in 0..ranks {
            if from == self.rank {
                values.push(value);
                continue;
            }
            match self.receive(from, |m| matches!(m, Message::Value(_)))? {
                Message::Value(v) => values.push(v),
                Message::GoingUp(_)
                | Message::GoingDown(_)
                | Message::Rows(_)
                | Message::Bytes(_) => {
                    return Err(HeatlabError::Internal("rows came for a value".into()))
                }
            }
        }
        Ok(values)
    }
}

fn copy_rows(into: &mut [f32], rows: &[f32], from: usize) -> Result<()> {
    if into.len() != rows.len() {
        return Err(HeatlabError::Internal(format!(
            "rank {from} sent {} halo values, {} expected",
            rows.len(),
            into.len()
        )));
    }
    into.copy_from_slice(rows);
    Ok(())
}

impl RankLink for ThreadLink {
    fn rank(&self) -> usize {
        self.rank
    }

    fn ranks(&self) -> usize {
        self.peers.len()
    }

    fn exchange_halos(
        &mut self,
        band: &Band,
        to_above: &[f32],
        to_below: &[f32],
        from_above: &mut [f32],
        from_below: &mut [f32],
    ) -> Result<()> {
        if let Some(above) = band.above {
            self.send(above, Message::GoingUp(to_above.to_vec()))?;
        }
        if let Some(below) = band.below {
            self.send(below, Message::GoingDown(to_below.to_vec()))?;
        }
        if let Some(above) = band.above {
            match self.receive(above, |m| matches!(m, Message::GoingDown(_)))? {
                Message::GoingDown(rows) => copy_rows(from_above, &rows, above)?,
                Message::GoingUp(_) | Message::Value(_) | Message::Rows(_) | Message::Bytes(_) => {
                    return Err(HeatlabError::Internal("wrong message for a halo".into()))
                }
            }
        }
        if let Some(below) = band.below {
            match self.receive(below, |m| matches!(m, Message::GoingUp(_)))? {
                Message::GoingUp(rows) => copy_rows(from_below, &rows, below)?,
                Message::GoingDown(_)
                | Message::Value(_)
                | Message::Rows(_)
                | Message::Bytes(_) => {
                    return Err(HeatlabError::Internal("wrong message for a halo".into()))
                }
            }
        }
        Ok(())
    }

    fn sum_in_rank_order(&mut self, value: f64) -> Result<f64> {
        Ok(self.gather_values(value)?.iter().sum())
    }

    fn min(&mut self, value: f64) -> Result<f64> {
        Ok(self
            .gather_values(value)?
            .into_iter()
            .fold(f64::INFINITY, f64::min))
    }

    fn max(&mut self, value: f64) -> Result<f64> {
        Ok(self
            .gather_values(value)?
            .into_iter()
            .fold(f64::NEG_INFINITY, f64::max))
    }

    fn barrier(&mut self) -> Result<()> {
        self.gather_values(0.0).map(|_| ())
    }

    fn gather_rows(&mut self, own: &[f32], root: usize) -> Result<Option<Vec<f32>>> {
        if self.rank != root {
            self.send(root, Message::Rows(own.to_vec()))?;
            return Ok(None);
        }
        let mut all = Vec::new();
        for from in 0..self.peers.len() {
            if from == root {
                all.extend_from_slice(own);
                continue;
            }
            match self.receive(from, |m| matches!(m, Message::Rows(_)))? {
                Message::Rows(rows) => all.extend_from_slice(&rows),
                Message::GoingUp(_)
                | Message::GoingDown(_)
                | Message::Value(_)
                | Message::Bytes(_) => {
                    return Err(HeatlabError::Internal("a value came for rows".into()))
                }
            }
        }
        Ok(Some(all))
    }

    fn gather_bytes(&mut self, own: &[u8], root: usize) -> Result<Option<Vec<Vec<u8>>>> {
        if self.rank != root {
            self.send(root, Message::Bytes(own.to_vec()))?;
            return Ok(None);
        }
        let mut all = Vec::with_capacity(self.peers.len());
        for from in 0..self.peers.len() {
            if from == root {
                all.push(own.to_vec());
                continue;
            }
            all.push(self.receive_bytes(from)?);
        }
        Ok(Some(all))
    }

    fn scatter_bytes(&mut self, parts: &[Vec<u8>], root: usize) -> Result<Vec<u8>> {
        if self.rank != root {
            return self.receive_bytes(root);
        }
        if parts.len() != self.peers.len() {
            return Err(HeatlabError::Internal(format!(
                "{} parts for {} ranks",
                parts.len(),
                self.peers.len()
            )));
        }
        for (to, part) in parts.iter().enumerate().filter(|&(to, _)| to != root) {
            self.send(to, Message::Bytes(part.clone()))?;
        }
        Ok(parts[root].clone())
    }

    fn broadcast_bytes(&mut self, bytes: &[u8], root: usize) -> Result<Vec<u8>> {
        if self.rank == root {
            for to in (0..self.peers.len()).filter(|&to| to != root) {
                self.send(to, Message::Bytes(bytes.to_vec()))?;
            }
            return Ok(bytes.to_vec());
        }
        self.receive_bytes(root)
    }
}
