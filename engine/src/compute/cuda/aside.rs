//! Rows stepped aside: copies of a few rows of the field (a band's edge strips) stepped on a
//! second stream of high priority while the field's own stream steps the whole field, and
//! buffers for rows received from elsewhere, placed into the field once both streams are
//! done. A band split over ranks uses them to exchange its halos while its interior computes
//! (`distributed`): its edge rows are ready, and sent, long before the band is.
//!
//! The two streams are ordered by events, never by a wait of the host: the aside stream starts
//! from the field as it stands when [`CudaBackend::step_aside`] is called; the field's stream
//! waits until the strips are copied before it steps on, and waits for the aside stream before
//! the received rows are placed.

use std::sync::Arc;

use cudarc::driver::{sys, CudaEvent, CudaSlice, CudaStream, CudaView, CudaViewMut};

use std::time::Duration;

use super::device::GpuTimer;
use super::kernel::CudaKernel;
use super::launch::{step_loop, StepLaunch};
use super::{driver_error, CudaBackend, FieldBuffers};
use crate::compute::StepParams;
use crate::error::{HeatlabError, Result};
use crate::grid::{GridSize, RowSpan};

/// The aside stream, its strips, the received rows and the events that order them.
pub(super) struct AsideWork {
    stream: Arc<CudaStream>,
    /// One field per strip stepped aside (the spans of the last [`CudaBackend::step_aside`]).
    strips: Vec<FieldBuffers>,
    /// Rows received, by slot.
    received: Vec<CudaSlice<f32>>,
    /// Recorded on the field's stream: the field as the strips start from it.
    field_ready: CudaEvent,
    /// Recorded on the aside stream: the strips are copied out of the field.
    copied: CudaEvent,
    /// Recorded on the aside stream: everything queued there so far.
    aside_done: CudaEvent,
    /// One timer per round of steps queued by [`CudaBackend::queue_round`] (kept for reuse).
    round_timers: Vec<GpuTimer>,
    /// Rounds queued since the last [`CudaBackend::finish_rounds`].
    rounds_queued: usize,
}

// SAFETY: the stream, buffers and events are owned by one `CudaBackend` and used only through
// `&mut self`, so never from two threads at once; CUDA allows using them from any thread.
unsafe impl Send for AsideWork {}

impl AsideWork {
    /// Orders the aside stream after what is queued on `main` so far.
    fn wait_for(&self, main: &CudaStream) -> Result<()> {
        self.field_ready
            .record(main)
            .map_err(driver_error("marking the field for the aside stream"))?;
        self.stream
            .wait(&self.field_ready)
            .map_err(driver_error("ordering the aside stream"))
    }

    /// Orders `main` after what is queued on the aside stream so far.
    fn hold(&self, main: &CudaStream) -> Result<()> {
        self.aside_done
            .record(&self.stream)
            .map_err(driver_error("marking the aside stream's work"))?;
        main.wait(&self.aside_done)
            .map_err(driver_error("ordering the field after the aside stream"))
    }
}

/// The strips stepped aside (whole, as views) and the slots of rows received, on the aside
/// stream: what an exchange device to device sends and receives.
pub struct AsideBuffers<'a> {
    /// The aside stream.
    pub stream: &'a Arc<CudaStream>,
    /// Each strip's rows after its steps, in the order of the spans given to `step_aside`.
    pub strips: Vec<CudaView<'a, f32>>,
    /// The slots of rows received, each as long as asked for.
    pub received: Vec<CudaViewMut<'a, f32>>,
}

impl CudaBackend {
    fn aside_work(&mut self) -> Result<&mut AsideWork> {
        if self.aside.is_none() {
            let context = self.device.context().clone();
            // The greatest priority is the lowest number.
            let (_, greatest) = cudarc::driver::result::stream::get_priority_range()
                .map_err(driver_error("asking the streams' priorities"))?;
            let stream = context
                .new_stream_with_priority(greatest)
                .map_err(driver_error("creating the aside stream"))?;
            let event = || {
                context
                    .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                    .map_err(driver_error("creating the aside stream's events"))
            };
            self.aside = Some(AsideWork {
                stream,
                strips: Vec::new(),
                received: Vec::new(),
                field_ready: event()?,
                copied: event()?,
                aside_done: event()?,
                round_timers: Vec::new(),
                rounds_queued: 0,
            });
        }
        self.aside
            .as_mut()
            .ok_or_else(|| HeatlabError::Internal("no aside stream".into()))
    }

    /// The aside stream (made on first use), of the greatest priority: what is queued on it is
    /// scheduled before the field's stepping.
    pub fn aside_stream(&mut self) -> Result<Arc<CudaStream>> {
        Ok(self.aside_work()?.stream.clone())
    }

    /// Whether [`Self::step_aside`] steps the rows as `advance` steps the field: the uniform
    /// stencil of an exact kernel (no heat problem held, not the tutorial's racing kernel).
    pub fn can_step_aside(&self) -> bool {
        let exact = match self.stepper() {
            super::stepping::Stepper::Builtin(kernel) => kernel.is_exact(),
            // The user's kernel ran bit-identical to the reference before it was loaded.
            super::stepping::Stepper::User => true,
        };
        self.buffers.is_some() && self.problem.is_none() && exact
    }

    /// Queues, on the aside stream after the work queued so far on the field's stream, copies
    /// of the field's rows `spans`, each then stepped `steps` steps as a field of its own
    /// under `params` (the kernel's own exact results: each row equals the field's own where
    /// its `steps`-row neighbourhood lies inside its span). The field's stream waits for the
    /// copies before anything queued after this call.
    pub fn step_aside(&mut self, spans: &[RowSpan], steps: u64, params: &StepParams) -> Result<()> {
        if !self.can_step_aside() {
            return Err(HeatlabError::Unsupported(
                "rows are stepped aside only for the plate under an exact kernel".into(),
            ));
        }
        self.settle()?;
        let main = self.device.stream().clone();
        let size = self.buffers()?.size;
        self.ensure_strips(spans, size.cols)?;
        let Self {
            aside,
            buffers,
            kernels,
            ..
        } = self;
        let (Some(aside), Some(buffers)) = (aside.as_mut(), buffers.as_ref()) else {
            return Err(HeatlabError::NoField);
        };
        aside.wait_for(&main)?;
        for (strip, span) in aside.strips.iter_mut().zip(spans) {
            let range = super::super::brush::row_range(size, span.first, span.count * size.cols)?;
            aside
                .stream
                .memcpy_dtod(&buffers.current.slice(range), &mut strip.current)
                .map_err(driver_error("copying rows aside"))?;
        }
        aside
            .copied
            .record(&aside.stream)
            .map_err(driver_error("marking the rows copied aside"))?;
        main.wait(&aside.copied).map_err(driver_error(
            "ordering the field after the rows copied aside",
        ))?;
        for strip in &mut aside.strips {
            // Whole launches of 8 steps where the kernel can, then single steps: every exact
            // kernel gives the same rows. (Segments of 16 rows: one segment down the whole
            // strip measured no faster beside the field's stepping on two H200s.)
            let mut plan = vec![(CudaKernel::JacobiRows, steps)];
            let temporal = CudaKernel::Temporal {
                steps_per_launch: 8,
                segment_rows: 16,
                packed: false,
                rows_ahead: 1,
            };
            if temporal.supports(strip.size) {
                let single = CudaKernel::JacobiVec4 { rows_per_thread: 8 };
                plan = vec![(temporal, steps / 8), (single, steps % 8)];
            }
            for (kernel, launches) in plan {
                let (config, segment_rows) =
                    kernel.launch_geometry(strip.size).ok_or_else(|| {
                        HeatlabError::Internal(format!("{kernel} has no launch of its own"))
                    })?;
                let function = kernels
                    .stepping_function(kernel, params.boundary)
                    .ok_or_else(|| HeatlabError::Internal(format!("no function for {kernel}")))?;
                let launch = match segment_rows {
                    Some(segment_rows) => StepLaunch::Temporal(function, segment_rows),
                    None => StepLaunch::Jacobi(function),
                };
                step_loop(&aside.stream, launch, config, strip, launches, params.coeff)?;
            }
        }
        Ok(())
    }

    /// Makes the aside stream, the strips of `spans` and the received slots of `received` cells
    /// now (what [`Self::step_aside`] and [`Self::aside_buffers`] would make on first use), or
    /// says why they cannot be had (no room on the GPU, say).
    pub fn prepare_aside(&mut self, spans: &[RowSpan], received: &[usize]) -> Result<()> {
        let cols = self.buffers()?.size.cols;
        self.ensure_strips(spans, cols)?;
        self.aside_buffers(received).map(|_| ())
    }

    /// Strips of the spans' sizes, allocated on the aside stream (kept while the sizes stay).
    fn ensure_strips(&mut self, spans: &[RowSpan], cols: usize) -> Result<()> {
        let sizes = spans
            .iter()
            .map(|span| GridSize::new(span.count, cols))
            .collect::<Result<Vec<_>>>()?;
        let held: Vec<GridSize> = self
            .aside_work()?
            .strips
            .iter()
            .map(|strip| strip.size)
            .collect();
        if held == sizes {
            return Ok(());
        }
        let (free, _) = self.device.memory_info()?;
        let aside = self.aside_work()?;
        aside.strips.clear();
        let bytes = sizes.iter().map(|size| 2 * size.bytes()).sum();
        crate::memory::ensure_gpu_memory("the band's edge rows stepped aside", bytes, free)?;
        for size in sizes {
            let allocate = || {
                aside
                    .stream
                    .alloc_zeros::<f32>(size.cells())
                    .map_err(driver_error("allocating rows stepped aside"))
            };
            let (current, next) = (allocate()?, allocate()?);
            aside.strips.push(FieldBuffers {
                size,
                current,
                next,
                laplacian: None,
                swapped: false,
            });
        }
        Ok(())
    }

    /// The strips stepped aside and `received` slots of the given lengths (allocated on first
    /// use), for an exchange queued on the aside stream.
    pub fn aside_buffers(&mut self, received: &[usize]) -> Result<AsideBuffers<'_>> {
        let lengths: Vec<usize> = self
            .aside_work()?
            .received
            .iter()
            .map(CudaSlice::len)
            .collect();
        if lengths != received {
            let (free, _) = self.device.memory_info()?;
            let aside = self.aside_work()?;
            aside.received.clear();
            let bytes = received.iter().sum::<usize>() * std::mem::size_of::<f32>();
            crate::memory::ensure_gpu_memory("the halo rows received", bytes, free)?;
            for &len in received {
                let slot = aside
                    .stream
                    .alloc_zeros::<f32>(len)
                    .map_err(driver_error("allocating the rows received"))?;
                aside.received.push(slot);
            }
        }
        let AsideWork {
            stream,
            strips,
            received: slots,
            ..
        } = self.aside_work()?;
        Ok(AsideBuffers {
            stream,
            strips: strips.iter().map(|strip| strip.current.slice(..)).collect(),
            received: slots.iter_mut().map(|slot| slot.slice_mut(..)).collect(),
        })
    }

    /// Queues `steps` steps of the field on its stream, as `advance` steps it, timed by a
    /// timer of its own and waited for by no one: a round of an overlapped exchange (the host
    /// queues the next round while the GPU steps this one). [`Self::finish_rounds`] waits.
    pub fn queue_round(&mut self, steps: u64, params: &StepParams) -> Result<()> {
        self.settle()?;
        let index = self.aside_work()?.rounds_queued;
        if index == self.aside_work()?.round_timers.len() {
            let timer = self.device.timer()?;
            self.aside_work()?.round_timers.push(timer);
        }
        self.aside_work()?.round_timers[index].start()?;
        self.defer_timing = true;
        let queued = self.advance_stepper(steps, params);
        self.defer_timing = false;
        queued?;
        let aside = self.aside_work()?;
        aside.round_timers[index].mark_end()?;
        aside.rounds_queued += 1;
        Ok(())
    }

    /// Waits for everything queued on both streams and returns the GPU's stepping time of the
    /// rounds queued since the last call.
    pub fn finish_rounds(&mut self) -> Result<Duration> {
        let aside = self.aside_work()?;
        let queued = std::mem::take(&mut aside.rounds_queued);
        let mut stepping = Duration::ZERO;
        for timer in &aside.round_timers[..queued] {
            stepping += timer.elapsed()?;
        }
        aside
            .stream
            .synchronize()
            .map_err(driver_error("waiting for the aside stream"))?;
        self.device.synchronize()?;
        Ok(stepping)
    }

    /// Copies rows of strip `strip` (rows of the strip itself) to the host, waiting for the
    /// aside stream alone (the field's stepping goes on).
    pub fn read_aside(&mut self, strip: usize, first_row: usize, values: &mut [f32]) -> Result<()> {
        let aside = self.aside_work()?;
        let field = aside
            .strips
            .get(strip)
            .ok_or_else(|| HeatlabError::Internal(format!("no strip {strip} stepped aside")))?;
        let range = super::super::brush::row_range(field.size, first_row, values.len())?;
        aside
            .stream
            .memcpy_dtoh(&field.current.slice(range), values)
            .map_err(driver_error("copying rows stepped aside to the host"))?;
        aside
            .stream
            .synchronize()
            .map_err(driver_error("copying rows stepped aside to the host"))
    }

    /// Copies `values` into received slot `slot` (as long as `values`, see
    /// [`Self::aside_buffers`]) on the aside stream.
    pub fn write_received(&mut self, slot: usize, values: &[f32]) -> Result<()> {
        let aside = self.aside_work()?;
        let target = aside
            .received
            .get_mut(slot)
            .filter(|target| target.len() == values.len())
            .ok_or_else(|| {
                HeatlabError::Internal(format!("no received slot {slot} of {}", values.len()))
            })?;
        aside
            .stream
            .memcpy_htod(values, target)
            .map_err(driver_error("copying received rows to the GPU"))?;
        // The host rows belong to the caller, who may change them next.
        aside
            .stream
            .synchronize()
            .map_err(driver_error("copying received rows to the GPU"))
    }

    /// Once the field's stream is past what is queued on it and the aside stream past what is
    /// queued there, copies received slot `slot` into the field's rows from `first_row`
    /// (`(slot, first_row)` for each of `placements`).
    pub fn place_received(&mut self, placements: &[(usize, usize)]) -> Result<()> {
        self.settle()?;
        // A step computed ahead for the Laplacian view started from the field before.
        self.lookahead = None;
        let main = self.device.stream().clone();
        let Self { aside, buffers, .. } = self;
        let (Some(aside), Some(buffers)) = (aside.as_mut(), buffers.as_mut()) else {
            return Err(HeatlabError::NoField);
        };
        aside.hold(&main)?;
        for &(slot, first_row) in placements {
            let received = aside
                .received
                .get(slot)
                .ok_or_else(|| HeatlabError::Internal(format!("no received slot {slot}")))?;
            let len = received.len();
            let range = super::super::brush::row_range(buffers.size, first_row, len)?;
            main.memcpy_dtod(received, &mut buffers.current.slice_mut(range))
                .map_err(driver_error("placing received rows"))?;
        }
        Ok(())
    }

    /// Orders the aside stream after what is queued on the field's stream, and returns the
    /// field's buffer: for an exchange into the field itself, queued on the aside stream
    /// (then [`Self::field_after_aside`]).
    pub fn field_for_aside(&mut self) -> Result<&mut CudaSlice<f32>> {
        self.aside_work()?;
        let (main, _) = self.field_on_device()?;
        let Self { aside, buffers, .. } = self;
        let (Some(aside), Some(buffers)) = (aside.as_mut(), buffers.as_mut()) else {
            return Err(HeatlabError::NoField);
        };
        aside.wait_for(&main)?;
        Ok(&mut buffers.current)
    }

    /// Orders the field's stream after what is queued on the aside stream.
    pub fn field_after_aside(&mut self) -> Result<()> {
        let main = self.device.stream().clone();
        let aside = self.aside_work()?;
        aside.hold(&main)
    }
}
