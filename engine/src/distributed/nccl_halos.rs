//! Halos exchanged between GPUs by NCCL, device to device (NVLink where the GPUs have it), on
//! the stream that steps the band: no copy through the host, and the next step is queued
//! behind the exchange. The NCCL id is made by rank 0 and broadcast over MPI.

use cudarc::nccl::safe::{Comm, Id};

use crate::compute::Backend;
use crate::error::{HeatlabError, Result};

use super::band_field::DeviceExchange;
use super::bands::Band;
use super::link::RankLink;

/// One rank's NCCL communicator, on the stream of the band's CUDA backend.
pub struct NcclHalos {
    comm: Comm,
}

// SAFETY: an NCCL communicator may be used from any thread so long as no two use it at once;
// `NcclHalos` is used through `&mut self` only, by the one thread stepping the band.
unsafe impl Send for NcclHalos {}

fn nccl_error(what: &str) -> impl Fn(cudarc::nccl::result::NcclError) -> HeatlabError + '_ {
    move |error| {
        // SAFETY: ncclGetLastError takes any communicator, null included, and returns a
        // NUL-terminated string that NCCL owns (or null); it is copied at once.
        let last = unsafe { cudarc::nccl::sys::ncclGetLastError(std::ptr::null_mut()) };
        let detail = if last.is_null() {
            String::new()
        } else {
            // SAFETY: a non-null pointer from ncclGetLastError is a NUL-terminated string.
            let text = unsafe { std::ffi::CStr::from_ptr(last) };
            format!(": {}", text.to_string_lossy())
        };
        HeatlabError::Unsupported(format!("NCCL, {what}: {:?}{detail}", error.0))
    }
}

impl NcclHalos {
    /// Joins the ranks of `link` in an NCCL communicator on `backend`'s stream (every rank calls
    /// it at once). Refuses a backend that is not CUDA.
    pub fn start(link: &mut dyn RankLink, backend: &mut dyn Backend) -> Result<Self> {
        let cuda = backend
            .cuda_mut()
            .ok_or_else(|| HeatlabError::Unsupported("NCCL halos need the CUDA backend".into()))?;
        let stream = cuda.device().stream().clone();
        let mut mine = Vec::new();
        if link.rank() == 0 {
            let made = *Id::new().map_err(nccl_error("making the id"))?.internal();
            mine = made.iter().map(|&c| c as u8).collect();
        }
        let shared = link.broadcast_bytes(&mine, 0)?;
        let mut internal = [0 as std::ffi::c_char; 128];
        if shared.len() != internal.len() {
            return Err(HeatlabError::Internal(format!(
                "the NCCL id came as {} bytes, not {}",
                shared.len(),
                internal.len()
            )));
        }
        for (to, &from) in internal.iter_mut().zip(&shared) {
            *to = from as std::ffi::c_char;
        }
        let comm = Comm::from_rank(stream, link.rank(), link.ranks(), Id::uninit(internal))
            .map_err(nccl_error("joining the ranks"))?;
        Ok(Self { comm })
    }
}

impl DeviceExchange for NcclHalos {
    fn exchange(&mut self, backend: &mut dyn Backend, band: &Band, depth: usize) -> Result<()> {
        let cuda = backend
            .cuda_mut()
            .ok_or_else(|| HeatlabError::Unsupported("NCCL halos need the CUDA backend".into()))?;
        let (stream, field) = cuda.field_on_device()?;
        let cols = band.cols;
        let mut whole = field.as_view_mut();
        let (mut above, rest) = whole.split_at_mut(band.halo_above * cols);
        let mut rest = rest;
        let (own, mut below) = rest.split_at_mut(band.rows * cols);
        let top_rows = own.slice(0..depth * cols);
        let bottom_rows = own.slice((band.rows - depth) * cols..band.rows * cols);
        let peer = |rank: usize| i32::try_from(rank).unwrap_or(i32::MAX);
        {
            // Per pair of ranks, NCCL matches sends and receives in the order they are posted:
            // every rank receives its halo below (a going-up message) first and sends up
            // first, so even two ranks that are both neighbours (periodic) match.
            let mut group = self.comm.group();
            if let Some(below_rank) = band.below {
                group
                    .recv(below.slice_mut(..), peer(below_rank))
                    .map_err(nccl_error("receiving the halo below"))?;
            }
            if let Some(above_rank) = band.above {
                group
                    .recv(above.slice_mut(..), peer(above_rank))
                    .map_err(nccl_error("receiving the halo above"))?;
            }
            if let Some(above_rank) = band.above {
                group
                    .send(top_rows, peer(above_rank))
                    .map_err(nccl_error("sending the top rows"))?;
            }
            if let Some(below_rank) = band.below {
                group
                    .send(bottom_rows, peer(below_rank))
                    .map_err(nccl_error("sending the bottom rows"))?;
            }
        }
        stream
            .synchronize()
            .map_err(|e| HeatlabError::Unsupported(format!("NCCL halo exchange: {e}")))
    }
}
