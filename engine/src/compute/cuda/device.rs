//! The CUDA device: checks that the driver and NVRTC load, opens a context and stream,
//! compiles `kernels/*.cu` once per architecture, and times work with events.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use cudarc::driver::{
    sys, CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, DriverError,
};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};

use crate::error::{CudaUnavailable, HeatlabError, Result};

/// Turns a driver error into a [`HeatlabError`] that says what heatlab was doing.
pub fn driver_error(context: &str) -> impl Fn(DriverError) -> HeatlabError + '_ {
    move |error| HeatlabError::Cuda {
        context: context.to_string(),
        message: error.to_string(),
    }
}

/// Compiled PTX by kernel file and compute capability.
type PtxCache = HashMap<(String, (i32, i32)), String>;

/// An open CUDA device: context, the stream heatlab works on, and its name.
pub struct CudaDevice {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    name: String,
    compute_capability: (i32, i32),
}

impl CudaDevice {
    /// The GPU's UUID as hex (what tells two processes on one GPU apart from two GPUs), if
    /// the driver gives it.
    pub fn uuid_hex(&self) -> Option<String> {
        let uuid = self.context().uuid().ok()?;
        Some(
            uuid.bytes
                .iter()
                .map(|&b| format!("{:02x}", b as u8))
                .collect(),
        )
    }

    /// Opens GPU 0, or says why CUDA cannot be used here. Never panics on a machine without CUDA.
    pub fn open() -> Result<Self> {
        // SAFETY: these only try to dlopen the libraries by name; nothing is called through them.
        let driver_present = unsafe { cudarc::driver::sys::is_culib_present() };
        if !driver_present {
            return Err(HeatlabError::CudaUnavailable(
                CudaUnavailable::DriverMissing,
            ));
        }
        // SAFETY: as above.
        let nvrtc_present = unsafe { cudarc::nvrtc::sys::is_culib_present() };
        if !nvrtc_present {
            return Err(HeatlabError::CudaUnavailable(CudaUnavailable::NvrtcMissing));
        }
        // cudarc's loader panics when a symbol it expects is missing (a driver too old for it);
        // treat that as "no usable CUDA" rather than bringing the application down.
        let opened = std::panic::catch_unwind(|| -> std::result::Result<Self, CudaUnavailable> {
            let context =
                CudaContext::new(0).map_err(|e| CudaUnavailable::NoUsableGpu(e.to_string()))?;
            let setup =
                |e: cudarc::driver::DriverError| CudaUnavailable::SetupFailed(e.to_string());
            let name = context.name().map_err(setup)?;
            let compute_capability = context.compute_capability().map_err(setup)?;
            // heatlab does its GPU work on this one stream (and on the aside stream of
            // `aside.rs`, ordered against it by events of its own), so cudarc's per-buffer
            // event tracking (for ordering work across streams) is not needed; turning it off
            // keeps launches lean. A stream of its own (not the legacy default stream) can be
            // captured into CUDA graphs.
            // SAFETY: every buffer of this context is used on `stream` only, but the aside
            // stream's, whose every use is ordered after and before the field's stream by the
            // events `aside.rs` records and waits for.
            unsafe { context.disable_event_tracking() };
            let stream = context.new_stream().map_err(setup)?;
            Ok(Self {
                context,
                stream,
                name,
                compute_capability,
            })
        });
        match opened {
            Ok(Ok(device)) => Ok(device),
            Ok(Err(reason)) => Err(HeatlabError::CudaUnavailable(reason)),
            Err(panic) => {
                let reason = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "the CUDA loader failed".into());
                Err(HeatlabError::CudaUnavailable(CudaUnavailable::SetupFailed(
                    reason,
                )))
            }
        }
    }

    /// The GPU's model name, e.g. "NVIDIA H100 80GB HBM3".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Major and minor compute capability.
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.context
    }

    /// The stream all of heatlab's GPU work runs on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.context
            .mem_get_info()
            .map_err(driver_error("querying GPU memory"))
    }

    /// Compiles `source` (the text of `kernels/<file_name>`) for this device's architecture and
    /// loads it. Each file is compiled once per process and architecture; a compile error
    /// carries NVRTC's log.
    pub fn load_kernels(&self, file_name: &str, source: &str) -> Result<Arc<CudaModule>> {
        static PTX_CACHE: OnceLock<Mutex<PtxCache>> = OnceLock::new();
        let key = (file_name.to_string(), self.compute_capability);
        let cache = PTX_CACHE.get_or_init(|| Mutex::new(HashMap::new()));
        // A panic while another thread held the cache cannot leave a half-written entry.
        let lock = || {
            cache
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let cached = lock().get(&key).cloned();
        let ptx_source = match cached {
            Some(ptx) => ptx,
            None => {
                let ptx = compile_ptx(file_name, source, self.compute_capability)?;
                let text = ptx.to_src();
                lock().insert(key, text.clone());
                text
            }
        };
        self.context
            .load_module(Ptx::from_src(ptx_source))
            .map_err(driver_error("loading compiled kernels"))
    }

    /// Looks up a kernel by its `extern "C"` name.
    pub fn function(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction> {
        module.load_function(name).map_err(|e| HeatlabError::Cuda {
            context: format!("looking up kernel {name}"),
            message: e.to_string(),
        })
    }

    /// A pair of timing events on this device's stream.
    pub fn timer(&self) -> Result<GpuTimer> {
        let create = || {
            self.context
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_error("creating a timing event"))
        };
        Ok(GpuTimer {
            start: create()?,
            end: create()?,
            stream: self.stream.clone(),
        })
    }

    /// Waits for all work on the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver_error("waiting for the GPU"))
    }
}

/// Compiles `source` (named `file_name` in NVRTC's log) for compute capability `arch` without
/// fused multiply-adds, so that results equal the CPU's bit for bit. Needs NVRTC, not a GPU.
pub(super) fn compile_ptx(file_name: &str, source: &str, arch: (i32, i32)) -> Result<Ptx> {
    // SAFETY: this only tries to dlopen the library by name; nothing is called through it.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(HeatlabError::CudaUnavailable(CudaUnavailable::NvrtcMissing));
    }
    let (major, minor) = arch;
    let options = CompileOptions {
        fmad: Some(false),
        options: vec![format!("--gpu-architecture=compute_{major}{minor}")],
        name: Some(file_name.to_string()),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(source, options)
        .map_err(|error| compile_error(file_name, error))
}

fn compile_error(file_name: &str, error: CompileError) -> HeatlabError {
    let log = match &error {
        CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
        other => format!("{other:?}"),
    };
    HeatlabError::KernelCompile {
        kernel: file_name.to_string(),
        log,
    }
}

/// Times a stretch of GPU work with two events (created with timing enabled:
/// cudarc's default event disables it).
pub struct GpuTimer {
    start: CudaEvent,
    end: CudaEvent,
    stream: Arc<CudaStream>,
}

impl GpuTimer {
    /// Marks the start on the stream.
    pub fn start(&self) -> Result<()> {
        self.start
            .record(&self.stream)
            .map_err(driver_error("recording a timing event"))
    }

    /// Marks the end, waits for it and returns the time between the marks.
    pub fn stop(&self) -> Result<Duration> {
        self.mark_end()?;
        self.elapsed()
    }

    /// Marks the end on the stream without waiting for it.
    pub fn mark_end(&self) -> Result<()> {
        self.end
            .record(&self.stream)
            .map_err(driver_error("recording a timing event"))
    }

    /// Waits for the end mark and returns the time between the marks.
    pub fn elapsed(&self) -> Result<Duration> {
        self.end
            .synchronize()
            .map_err(driver_error("waiting for the GPU"))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(driver_error("reading a timing event"))?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}
