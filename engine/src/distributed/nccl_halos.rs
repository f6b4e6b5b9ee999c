//! Halos exchanged between GPUs by NCCL, device to device (NVLink where the GPUs have it), on
//! the CUDA backend's aside stream (of the greatest priority): no copy through the host. An
//! exchange of the field's own rows is ordered after the field's stepping and before its next
//! step; an overlapped one sends the rows stepped aside while the field steps (see
//! [`super::overlap`]). The NCCL id is made by rank 0 and broadcast over MPI.

use cudarc::driver::{CudaView, CudaViewMut};
use cudarc::nccl::safe::{Comm, Id};

use crate::compute::Backend;
use crate::error::{HeatlabError, Result};

use super::band_field::DeviceExchange;
use super::bands::Band;
use super::link::RankLink;
use super::overlap::OverlapPlan;

/// One rank's NCCL communicator, on the aside stream of the band's CUDA backend.
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
        let stream = cuda.aside_stream()?;
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

fn peer(rank: usize) -> i32 {
    i32::try_from(rank).unwrap_or(i32::MAX)
}

fn not_cuda() -> HeatlabError {
    HeatlabError::Unsupported("NCCL halos need the CUDA backend".into())
}

/// The messages of one exchange: where the halos are received, what is sent (each only where
/// the band has that neighbour).
struct HaloMessages<'a> {
    below: Option<CudaViewMut<'a, f32>>,
    above: Option<CudaViewMut<'a, f32>>,
    top_rows: Option<CudaView<'a, f32>>,
    bottom_rows: Option<CudaView<'a, f32>>,
}

/// Posts `messages` in one NCCL group on `comm`'s stream. Per pair of ranks NCCL matches sends
/// and receives in the order they are posted: every rank receives its halo below (a going-up
/// message) first and sends up first, so even two ranks that are both neighbours (periodic)
/// match. Both exchanges post through here, so ranks may even mix them.
fn post(comm: &Comm, band: &Band, messages: HaloMessages<'_>) -> Result<()> {
    let mut group = comm.group();
    if let (Some(rank), Some(halo)) = (band.below, messages.below) {
        group
            .recv(halo, peer(rank))
            .map_err(nccl_error("receiving the halo below"))?;
    }
    if let (Some(rank), Some(halo)) = (band.above, messages.above) {
        group
            .recv(halo, peer(rank))
            .map_err(nccl_error("receiving the halo above"))?;
    }
    if let (Some(rank), Some(rows)) = (band.above, messages.top_rows) {
        group
            .send(rows, peer(rank))
            .map_err(nccl_error("sending the top rows"))?;
    }
    if let (Some(rank), Some(rows)) = (band.below, messages.bottom_rows) {
        group
            .send(rows, peer(rank))
            .map_err(nccl_error("sending the bottom rows"))?;
    }
    Ok(())
}

impl DeviceExchange for NcclHalos {
    fn exchange(&mut self, backend: &mut dyn Backend, band: &Band, depth: usize) -> Result<()> {
        let cuda = backend.cuda_mut().ok_or_else(not_cuda)?;
        let field = cuda.field_for_aside()?;
        let cols = band.cols;
        let mut whole = field.as_view_mut();
        let (above, mut rest) = whole.split_at_mut(band.halo_above * cols);
        let (own, below) = rest.split_at_mut(band.rows * cols);
        let messages = HaloMessages {
            below: Some(below),
            above: Some(above),
            top_rows: Some(own.slice(0..depth * cols)),
            bottom_rows: Some(own.slice((band.rows - depth) * cols..band.rows * cols)),
        };
        post(&self.comm, band, messages)?;
        cuda.field_after_aside()
    }

    fn exchange_aside(
        &mut self,
        backend: &mut dyn Backend,
        band: &Band,
        depth: usize,
        plan: &OverlapPlan,
    ) -> Result<()> {
        let cuda = backend.cuda_mut().ok_or_else(not_cuda)?;
        let buffers = cuda.aside_buffers(&plan.receive_cells)?;
        let cols = band.cols;
        let sent = |(strip, first): (usize, usize)| {
            buffers
                .strips
                .get(strip)
                .map(|rows| rows.slice(first * cols..(first + depth) * cols))
                .ok_or_else(|| HeatlabError::Internal(format!("no strip {strip} stepped aside")))
        };
        let top_rows = plan.send_above.map(sent).transpose()?;
        let bottom_rows = plan.send_below.map(sent).transpose()?;
        let mut slots: Vec<_> = buffers.received.into_iter().map(Some).collect();
        let mut slot = |index: Option<usize>| index.and_then(|i| slots.get_mut(i)?.take());
        let messages = HaloMessages {
            above: slot(plan.receive_above),
            below: slot(plan.receive_below),
            top_rows,
            bottom_rows,
        };
        post(&self.comm, band, messages)
    }
}
