//! `heatlab.Simulation`: the notebook's plate, a scenario or a saved state, stepped by the
//! engine's run loop with the GIL released.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use numpy::PyArray2;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::arrays::{field_input, to_numpy, FieldInput};
use crate::device_array::DeviceArray;
use crate::errors::{invalid, to_python};
use crate::running::{lock, Running, SharedRunning, StepEnd};
use crate::values::to_python_value;
use heatlab_engine::compute::{
    create_backend, Backend, BackendChoice, BackendKind, Boundary, KernelChoice, KernelRefusal,
    StepParams,
};
use heatlab_engine::error::HeatlabError;
use heatlab_engine::field::{JaggedParams, DEFAULT_SEED};
use heatlab_engine::grid::GridSize;
use heatlab_engine::import::LuminanceRange;
use heatlab_engine::problem::Side;
use heatlab_engine::session::start::{open, Expected, Start};
use heatlab_engine::sim::solve::Stepping;
use heatlab_engine::sim::Simulation;
use heatlab_engine::solve::{ImplicitScheme, SolveOptions, DEFAULT_TOLERANCE};
use heatlab_engine::state::{FieldOrigin, SavedState};

/// Copies of the field a Python simulation may hold on the host at once (initial, current, a
/// downloaded copy and a NumPy array), checked against free memory before a file is read.
const HOST_FIELD_COPIES: usize = 4;

/// A size from Python's integers, with heatlab's message for a bad one.
/// A solve's options from Python's arguments.
fn solve_options(tolerance: f64, max_iterations: u32) -> SolveOptions {
    SolveOptions {
        tolerance,
        max_cycles: max_iterations,
        ..SolveOptions::default()
    }
}

fn grid_size(rows: i64, cols: i64) -> PyResult<GridSize> {
    let side = |value: i64, name: &str| {
        usize::try_from(value).map_err(|_| invalid(format!("{name} must be positive, got {value}")))
    };
    GridSize::new(side(rows, "rows")?, side(cols, "cols")?).map_err(to_python)
}

/// The jagged field's parameters from Python's arguments, checked.
pub fn jagged_params(
    (rows, cols): (i64, i64),
    seed: u64,
    exponent: f64,
    cutoff: f64,
    percentile: f64,
) -> PyResult<JaggedParams> {
    let params = JaggedParams {
        size: grid_size(rows, cols)?,
        seed,
        exponent,
        cutoff,
        percentile,
    };
    params.validate().map_err(to_python)?;
    Ok(params)
}

/// A choice parsed as the command line parses it (its message lists the choices).
fn parse<T: std::str::FromStr<Err = HeatlabError>>(text: &str) -> PyResult<T> {
    text.parse().map_err(to_python)
}

/// The backend asked for, with the kernel set where one is named; a named kernel needs the GPU.
fn open_backend(backend: &str, kernel: &str) -> PyResult<Box<dyn Backend>> {
    let choice: BackendChoice = parse(backend)?;
    let kernel: KernelChoice = parse(kernel)?;
    let choice = kernel
        .backend_for(choice)
        .map_err(|refusal| match refusal {
            KernelRefusal::UserKernel => invalid(
                "kernel='user': user kernels are compiled and validated in the app's Kernel lab",
            ),
            KernelRefusal::GpuKernelOnCpu => invalid(format!(
                "kernel='{kernel}' is a GPU kernel; it cannot be used with backend='cpu'"
            )),
        })?;
    let (mut backend, _fallback) = create_backend(choice).map_err(to_python)?;
    if let Some(cuda) = backend.cuda_mut() {
        cuda.set_kernel_choice(kernel).map_err(to_python)?;
    }
    Ok(backend)
}

/// A heat diffusion simulation: the tutorial's plate (`Simulation(rows, cols, ...)`), a heat
/// problem (`Simulation.from_scenario`) or a saved state (`Simulation.resume`), on the GPU
/// (CUDA) or the CPU.
#[pyclass(name = "Simulation", module = "heatlab", frozen)]
pub struct PySimulation {
    /// The simulation, or `None` once closed. Views of its GPU buffers hold it too.
    slot: Mutex<Option<SharedRunning>>,
}

impl PySimulation {
    fn holding(running: Running) -> Self {
        Self {
            slot: Mutex::new(Some(Arc::new(Mutex::new(running)))),
        }
    }

    /// The simulation, or a `ValueError` once it was closed.
    fn shared(&self) -> PyResult<SharedRunning> {
        let slot = self
            .slot
            .lock()
            .map_err(|_| invalid("this Simulation is unusable after an earlier failure"))?;
        slot.clone()
            .ok_or_else(|| invalid("this Simulation was closed; create a new one"))
    }

    /// Runs `work` on the simulation with the GIL released (other Python threads run).
    fn detached<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&mut Running) -> PyResult<T> + Send,
    ) -> PyResult<T> {
        let shared = self.shared()?;
        py.detach(|| work(&mut *lock(&shared)?))
    }

    /// Runs `work` on the simulation, holding the GIL (quick reads).
    fn with<T>(&self, work: impl FnOnce(&mut Running) -> PyResult<T>) -> PyResult<T> {
        let shared = self.shared()?;
        let mut running = lock(&shared)?;
        work(&mut running)
    }

    /// A simulation of a start read from `path`, on `backend`.
    fn from_start(py: Python<'_>, start: Start, backend: &str, kernel: &str) -> PyResult<Self> {
        // Opening CUDA compiles the kernels (NVRTC): seconds the first time in a process.
        let backend = py.detach(|| open_backend(backend, kernel))?;
        let params = start.saved_params.unwrap_or_default();
        let origin = start.origin.clone();
        let running = py
            .detach(|| {
                let sim = start.into_simulation(backend, params)?;
                Running::new(sim, origin)
            })
            .map_err(to_python)?;
        Ok(Self::holding(running))
    }
}

#[pymethods]
impl PySimulation {
    /// The tutorial's plate: the notebook's jagged field of `rows` × `cols` (see
    /// `heatlab.generate_field`), stepped with `coeff` under `boundary` ("dirichlet",
    /// "neumann" or "periodic"). `backend`: "auto" (CUDA when a GPU works), "cuda" or "cpu";
    /// `kernel`: "auto" or a GPU kernel's name.
    #[new]
    #[pyo3(signature = (
        rows, cols, *, seed = DEFAULT_SEED, exponent = -1.7, cutoff = 0.45, percentile = 70.0,
        coeff = 0.25, boundary = "dirichlet", backend = "auto", kernel = "auto",
        allow_unstable = false
    ))]
    #[expect(clippy::too_many_arguments, reason = "Python keyword arguments")]
    fn new(
        py: Python<'_>,
        rows: i64,
        cols: i64,
        seed: u64,
        exponent: f64,
        cutoff: f64,
        percentile: f64,
        coeff: f32,
        boundary: &str,
        backend: &str,
        kernel: &str,
        allow_unstable: bool,
    ) -> PyResult<Self> {
        let field = jagged_params((rows, cols), seed, exponent, cutoff, percentile)?;
        let params = StepParams {
            coeff,
            boundary: parse::<Boundary>(boundary)?,
        };
        params.validate(allow_unstable).map_err(|error| {
            invalid(
                error
                    .to_string()
                    .replace("--allow-unstable", "allow_unstable=True"),
            )
        })?;
        let backend = py.detach(|| open_backend(backend, kernel))?;
        let running = py
            .detach(|| {
                let (sim, _) = Simulation::generated(backend, &field, params, &|_| {})?;
                Running::new(sim, FieldOrigin::Jagged(field))
            })
            .map_err(to_python)?;
        Ok(Self::holding(running))
    }

    /// A heat problem from a scenario file (`.toml`) or the gallery's name for one.
    #[staticmethod]
    #[pyo3(signature = (scenario, *, backend = "auto"))]
    fn from_scenario(py: Python<'_>, scenario: PathBuf, backend: &str) -> PyResult<Self> {
        let loaded = py
            .detach(|| {
                heatlab_engine::scenario::gallery::load_file_or_named_for(
                    &scenario,
                    HOST_FIELD_COPIES,
                )
            })
            .map_err(|error| to_python(error.into_error()))?;
        let start = Start::of_scenario(loaded, &scenario);
        Self::from_start(py, start, backend, "auto")
    }

    /// Continues a state saved by `save_state` (or `heatlab run --save-state`, or the app).
    #[staticmethod]
    #[pyo3(signature = (path, *, backend = "auto"))]
    fn resume(py: Python<'_>, path: PathBuf, backend: &str) -> PyResult<Self> {
        let start = py
            .detach(|| {
                open(
                    &path,
                    LuminanceRange::default(),
                    Expected::State,
                    HOST_FIELD_COPIES,
                )
            })
            .map_err(to_python)?;
        Self::from_start(py, start, backend, "auto")
    }

    /// Advances `n` steps (default 1) through heatlab's run loop, the GIL released. Ctrl-C
    /// stops it between pieces of about a quarter of a second (KeyboardInterrupt; the steps
    /// taken stay taken). A run that goes non-finite or below absolute zero raises
    /// `heatlab.SimulationHalted`, standing at the last state it reached.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: i128) -> PyResult<()> {
        if n < 0 {
            return Err(invalid(format!(
                "the number of steps must be 0 or more, got {n}"
            )));
        }
        let steps = u64::try_from(n).map_err(|_| {
            invalid(format!(
                "{n} steps are more than heatlab can count (at most {})",
                u64::MAX
            ))
        })?;
        let end = self.detached(py, |running| running.step(steps).map_err(to_python))?;
        match end {
            StepEnd::Completed => Ok(()),
            StepEnd::Interrupted(error) => Err(error),
            StepEnd::Halted(error) => Err(to_python(error)),
        }
    }

    /// Steps taken since the initial field.
    #[getter]
    fn steps(&self) -> PyResult<u64> {
        self.with(|running| Ok(running.sim.step_count()))
    }

    /// Simulated seconds since the initial field, for a heat problem; `None` for the plate,
    /// whose steps have no unit.
    #[getter]
    fn time(&self) -> PyResult<Option<f64>> {
        self.with(|running| Ok(running.sim.simulated_seconds()))
    }

    /// "cuda" or "cpu": where it actually runs.
    #[getter]
    fn backend(&self) -> PyResult<String> {
        self.with(|running| Ok(running.sim.backend().kind().to_string()))
    }

    /// The kernel (or CPU loop) that steps it now.
    #[getter]
    fn kernel(&self) -> PyResult<String> {
        self.with(|running| Ok(running.sim.backend().step_method()))
    }

    /// The GPU's model, or the CPU with its thread count.
    #[getter]
    fn device(&self) -> PyResult<String> {
        self.with(|running| Ok(running.sim.backend().device_name()))
    }

    /// (rows, cols).
    #[getter]
    fn shape(&self) -> PyResult<(usize, usize)> {
        self.with(|running| {
            let size = running.sim.initial_size();
            Ok((size.rows, size.cols))
        })
    }

    /// Where the initial field came from, in words.
    #[getter]
    fn origin(&self) -> PyResult<String> {
        self.with(|running| Ok(running.origin.to_string()))
    }

    /// The temperature (the field) now. On the CPU a new NumPy array (a copy); on CUDA a
    /// `heatlab.DeviceArray` over the GPU buffer itself, which CuPy, PyTorch and Numba read
    /// with no copy (`cupy.asarray`, `torch.from_dlpack`, `numba.cuda.as_cuda_array`) and
    /// `numpy.asarray` copies to the host. The view is of the field as it stands: a step
    /// writes the other buffer, so take `temperature` again after stepping.
    #[getter]
    fn temperature(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let kind = self.with(|running| Ok(running.sim.backend().kind()))?;
        match kind {
            BackendKind::Cpu => {
                let field = self.detached(py, |running| running.sim.field().map_err(to_python))?;
                Ok(to_numpy(py, field)?.into_any().unbind())
            }
            BackendKind::Cuda => {
                let shared = self.shared()?;
                let view = {
                    let mut running = lock(&shared)?;
                    let view = running.cuda()?.field_view().map_err(to_python)?;
                    running.views_shared = true;
                    view
                };
                Ok(Py::new(py, DeviceArray::new(view, shared))?.into_any())
            }
        }
    }

    /// Replaces the temperature with `array` (rows × cols, as `shape`): a NumPy array
    /// (float32, or float64 within float32's range) or anything NumPy reads; on CUDA also a
    /// CuPy, PyTorch or Numba device array (float32), copied on the GPU. The step count, the
    /// simulated time and the initial field stay.
    fn set_temperature(&self, py: Python<'_>, array: &Bound<'_, PyAny>) -> PyResult<()> {
        let input = field_input(py, array)?;
        self.detached(py, move |running| {
            running.before_writing().map_err(to_python)?;
            match &input {
                FieldInput::Host(grid) => running.sim.overwrite_field(grid),
                FieldInput::Device(source) => running.sim.overwrite_field_from_device(source),
            }
            .map_err(to_python)?;
            running.restart().map_err(to_python)
        })
    }

    /// The Laplacian of the temperature under the plate's boundary, as a new NumPy array.
    fn laplacian<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let field = self.detached(py, |running| running.sim.laplacian().map_err(to_python))?;
        to_numpy(py, field)
    }

    /// Back to the initial field at step 0 (and time 0).
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        self.detached(py, |running| {
            running.before_writing().map_err(to_python)?;
            running.sim.reset().map_err(to_python)?;
            running.restart().map_err(to_python)
        })
    }

    /// Replaces the temperature by the heat problem's steady state, solved directly
    /// (multigrid-preconditioned conjugate gradients; the same bits on the CPU and CUDA)
    /// until the estimated error is at most `tolerance` of the temperature span. The step and
    /// time stay. Returns `iterations`, `levels`, `residual_history` (W/m, before the first
    /// iteration and after each), `estimated_error` and `span` (°C) and `seconds`.
    #[pyo3(signature = (*, tolerance = DEFAULT_TOLERANCE, max_iterations = 200))]
    fn solve_steady<'py>(
        &self,
        py: Python<'py>,
        tolerance: f64,
        max_iterations: u32,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = solve_options(tolerance, max_iterations);
        let report = self.detached(py, |running| {
            running.before_writing().map_err(to_python)?;
            let report = running.sim.solve_steady(&options).map_err(to_python)?;
            running.restart().map_err(to_python)?;
            Ok(report)
        })?;
        let dict = PyDict::new(py);
        dict.set_item("iterations", report.cycles)?;
        dict.set_item("levels", report.levels)?;
        dict.set_item("residual_history", report.residual_history)?;
        dict.set_item("estimated_error", report.estimated_error)?;
        dict.set_item("span", report.span)?;
        dict.set_item("seconds", report.seconds)?;
        Ok(dict)
    }

    /// Takes implicit steps from now on: `scheme` "backward-euler" (first order, no
    /// overshoot) or "crank-nicolson" (second order), of `dt` seconds (default: 100 explicit
    /// steps), each solved to `tolerance`; `scheme=None` goes back to explicit steps.
    /// `step(n)` then takes `n` implicit steps, booking their energy as explicit ones do.
    #[pyo3(signature = (scheme = Some("backward-euler"), dt = None, *, tolerance = DEFAULT_TOLERANCE, max_iterations = 200))]
    fn set_implicit(
        &self,
        py: Python<'_>,
        scheme: Option<&str>,
        dt: Option<f64>,
        tolerance: f64,
        max_iterations: u32,
    ) -> PyResult<()> {
        let scheme: Option<ImplicitScheme> = scheme.map(parse).transpose()?;
        let options = solve_options(tolerance, max_iterations);
        self.detached(py, |running| {
            let stepping = match scheme {
                None => Stepping::Explicit,
                Some(scheme) => {
                    let explicit = running
                        .sim
                        .compiled_problem()
                        .map(|compiled| compiled.tables.dt)
                        .ok_or_else(|| invalid("implicit steps need a heat problem"))?;
                    Stepping::Implicit {
                        scheme,
                        dt: dt.unwrap_or(100.0 * explicit),
                        options,
                    }
                }
            };
            running.sim.set_stepping(stepping).map_err(to_python)
        })
    }

    /// Writes the state (initial and current fields, step, heat problem) to `path`, for
    /// `Simulation.resume`, `heatlab run --resume` or the app.
    fn save_state(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        self.detached(py, |running| {
            let origin = running.origin.clone();
            let state = SavedState::of(&mut running.sim, origin).map_err(to_python)?;
            state.save(&path).map_err(to_python)
        })
    }

    /// A heat problem's energy, J per metre of depth: `stored` (now), and `budget`, what
    /// came in and was stored since the first step (or the last change of the field other
    /// than by stepping): `from_step`, `to_step`, `seconds`, `stored_before`,
    /// `stored_after`, `heaters`, `sides` (by side), `held`, `heat_crossed`,
    /// `round_off_bound`, `closing_error`, `relative_closing_error` and `within_round_off`;
    /// `None` before a step.
    fn energy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (stored, budget) = self.with(|running| {
            if running.sim.problem().is_none() {
                return Err(PyValueError::new_err(
                    "the tutorial's plate has no energy balance (its steps have no unit); heat \
                     problems (Simulation.from_scenario) do",
                ));
            }
            let stored = running
                .sim
                .backend_mut()
                .stored_energy()
                .map_err(to_python)?;
            Ok((stored, running.run.ledger().budget))
        })?;
        let energy = PyDict::new(py);
        energy.set_item("stored", stored)?;
        let Some(budget) = budget else {
            energy.set_item("budget", py.None())?;
            return Ok(energy);
        };
        let window = budget.window;
        let entry = PyDict::new(py);
        entry.set_item("from_step", budget.from_step)?;
        entry.set_item("to_step", window.to_step)?;
        entry.set_item("from_seconds", budget.from_seconds)?;
        entry.set_item("seconds", window.seconds)?;
        entry.set_item("stored_before", window.stored_before)?;
        entry.set_item("stored_after", window.stored_after)?;
        entry.set_item("heaters", window.exchange.sources)?;
        let sides = PyDict::new(py);
        for side in Side::ALL {
            sides.set_item(side.to_string(), window.exchange.side(side))?;
        }
        entry.set_item("sides", sides)?;
        entry.set_item("held", window.exchange.held)?;
        entry.set_item("closing_error", window.closing_error)?;
        entry.set_item("heat_crossed", window.heat_crossed)?;
        entry.set_item("round_off_bound", window.round_off_bound)?;
        entry.set_item("relative_closing_error", window.relative_closing_error)?;
        entry.set_item("within_round_off", window.within_round_off)?;
        energy.set_item("budget", entry)?;
        Ok(energy)
    }

    /// The timing rows of the `step` calls (one each), as dicts: `step_start`, `steps`, `seconds` (GPU events on CUDA), `us_per_step`,
    /// `steps_per_s`, `effective_gb_s`, `backend`, `method`, `size`.
    #[getter]
    fn timings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rows = self.with(|running| Ok(running.timings.clone()))?;
        to_python_value(py, &rows)
    }

    /// Frees the simulation (its GPU memory once no view of it is left). Every later use
    /// raises ValueError.
    fn close(&self) -> PyResult<()> {
        let mut slot = self
            .slot
            .lock()
            .map_err(|_| invalid("this Simulation is unusable after an earlier failure"))?;
        if let Some(shared) = slot.as_ref() {
            // Not while another thread steps it.
            drop(lock(shared)?);
        }
        *slot = None;
        Ok(())
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close()?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let Ok(shared) = self.shared() else {
            return "<heatlab.Simulation (closed)>".into();
        };
        let Ok(running) = lock(&shared) else {
            return "<heatlab.Simulation (busy)>".into();
        };
        let size = running.sim.initial_size();
        format!(
            "<heatlab.Simulation {} at step {} on {} ({}): {}>",
            size,
            running.sim.step_count(),
            running.sim.backend().kind(),
            running.sim.backend().step_method(),
            running.origin
        )
    }
}
