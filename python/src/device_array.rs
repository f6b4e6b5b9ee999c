//! `heatlab.DeviceArray`: a simulation's GPU field as other libraries read it with no copy,
//! through DLPack (`__dlpack__`, `__dlpack_device__`: `torch.from_dlpack`, `cupy.from_dlpack`)
//! and the CUDA Array Interface version 3 (`__cuda_array_interface__`: `cupy.asarray`,
//! `numba.cuda.as_cuda_array`, `torch.as_tensor`). The view holds the simulation, so the buffer
//! lives as long as any consumer does, even past `Simulation.close()`.

use std::ffi::{c_void, CStr};

use numpy::PyArray2;
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::arrays::to_numpy;
use crate::errors::{invalid, to_python};
use crate::running::{lock, SharedRunning};
use heatlab_engine::compute::cuda::DeviceFieldView;

/// DLPack's device type of CUDA memory (`kDLCUDA`).
const DLPACK_CUDA: i32 = 2;
/// DLPack's type code of IEEE floats (`kDLFloat`).
const DLPACK_FLOAT: u8 = 2;
/// The capsule's name until a consumer takes it.
const DLTENSOR: &CStr = c"dltensor";

/// `DLDevice`.
#[repr(C)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

/// `DLDataType`.
#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

/// `DLTensor`.
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

/// `DLManagedTensor` (DLPack's unversioned form, which every consumer reads).
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// One exported tensor: the managed tensor first (its address is the capsule's pointer), then
/// the shape and strides it points into and the simulation it keeps alive.
#[repr(C)]
struct ExportedTensor {
    managed: DlManagedTensor,
    shape: [i64; 2],
    strides: [i64; 2],
    keep: SharedRunning,
}

/// Frees an exported tensor: called by its consumer when done with it, or by the capsule if
/// no consumer took it.
///
/// # Safety
/// `managed` must come from [`export`] and not have been freed.
unsafe extern "C" fn delete_exported(managed: *mut DlManagedTensor) {
    if managed.is_null() {
        return;
    }
    // SAFETY: `export` made `managed` the first field of a boxed `ExportedTensor` (repr(C)),
    // and the protocol calls the deleter once.
    drop(unsafe { Box::from_raw(managed.cast::<ExportedTensor>()) });
}

/// The capsule's destructor: frees the tensor unless a consumer took it (and renamed the
/// capsule "used_dltensor").
///
/// # Safety
/// Called by Python with a live capsule.
unsafe extern "C" fn capsule_destructor(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: Python passes the capsule being destroyed; the name is checked before the pointer
    // is read, so a consumed capsule is left alone.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let pointer = pyo3::ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr());
            delete_exported(pointer.cast::<DlManagedTensor>());
        } else {
            // A consumed capsule has no error to report; clear what IsValid may have set.
            pyo3::ffi::PyErr_Clear();
        }
    }
}

/// `view` as a DLPack capsule that keeps `keep` alive until its consumer is done.
fn export<'py>(
    py: Python<'py>,
    view: &DeviceFieldView,
    keep: SharedRunning,
) -> PyResult<Bound<'py, PyCapsule>> {
    let as_i64 = |value: usize| i64::try_from(value).unwrap_or(i64::MAX);
    let mut exported = Box::new(ExportedTensor {
        managed: DlManagedTensor {
            dl_tensor: DlTensor {
                data: view.pointer as *mut c_void,
                device: DlDevice {
                    device_type: DLPACK_CUDA,
                    device_id: i32::try_from(view.device_ordinal).unwrap_or(0),
                },
                ndim: 2,
                dtype: DlDataType {
                    code: DLPACK_FLOAT,
                    bits: 32,
                    lanes: 1,
                },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_exported),
        },
        shape: [as_i64(view.size.rows), as_i64(view.size.cols)],
        strides: [as_i64(view.size.cols), 1],
        keep,
    });
    // The box does not move: its shape and strides stay where these point.
    exported.managed.dl_tensor.shape = exported.shape.as_mut_ptr();
    exported.managed.dl_tensor.strides = exported.strides.as_mut_ptr();
    let pointer = Box::into_raw(exported);
    // SAFETY: `pointer` is a live `ExportedTensor` whose first field is the managed tensor; the
    // capsule's destructor frees it unless a consumer takes it and calls its deleter.
    let capsule = unsafe {
        pyo3::ffi::PyCapsule_New(
            pointer.cast::<c_void>(),
            DLTENSOR.as_ptr(),
            Some(capsule_destructor),
        )
    };
    if capsule.is_null() {
        // SAFETY: no capsule owns `pointer`: free it here, once.
        unsafe { delete_exported(pointer.cast::<DlManagedTensor>()) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: `capsule` is a new reference to a capsule object, checked non-null.
    let object = unsafe { Bound::from_owned_ptr(py, capsule) };
    Ok(object.cast_into::<PyCapsule>()?)
}

/// A simulation's field on the GPU, shared with no copy (float32, C-contiguous, shape
/// (rows, cols)). It is the buffer the field stood in when `Simulation.temperature` was
/// read: writing it through CuPy or PyTorch changes the simulation's field.
#[pyclass(name = "DeviceArray", module = "heatlab", frozen)]
pub struct DeviceArray {
    view: DeviceFieldView,
    shared: SharedRunning,
}

impl DeviceArray {
    /// A view of `view`, holding the simulation it belongs to.
    pub fn new(view: DeviceFieldView, shared: SharedRunning) -> Self {
        Self { view, shared }
    }

    /// Waits until every step heatlab queued has finished (a consumer on any stream then reads
    /// a finished field).
    fn finished(&self) -> PyResult<()> {
        lock(&self.shared)?
            .cuda()?
            .field_view()
            .map(|_| ())
            .map_err(to_python)
    }
}

#[pymethods]
impl DeviceArray {
    /// (rows, cols).
    #[getter]
    fn shape(&self) -> (usize, usize) {
        (self.view.size.rows, self.view.size.cols)
    }

    /// "float32".
    #[getter]
    fn dtype(&self) -> &'static str {
        "float32"
    }

    /// The device address of the first value.
    #[getter]
    fn ptr(&self) -> u64 {
        self.view.pointer
    }

    /// The CUDA device ordinal of the GPU it is on.
    #[getter]
    fn device_id(&self) -> usize {
        self.view.device_ordinal
    }

    /// The CUDA Array Interface, version 3. The steps heatlab queued have finished when it is
    /// read, so `stream` is `None` (nothing to wait for).
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.finished()?;
        let interface = PyDict::new(py);
        interface.set_item("shape", self.shape())?;
        interface.set_item("typestr", "<f4")?;
        interface.set_item("data", (self.view.pointer, false))?;
        interface.set_item("version", 3)?;
        interface.set_item("strides", py.None())?;
        interface.set_item("descr", vec![("", "<f4")])?;
        interface.set_item("stream", py.None())?;
        Ok(interface)
    }

    /// A DLPack capsule of the buffer (no copy). heatlab's steps have finished when it is
    /// made, so the consumer's `stream` needs no wait. `copy=True` is refused (copy in the
    /// consumer instead); `dl_device` must be this GPU.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<&Bound<'py, PyAny>>,
        max_version: Option<&Bound<'py, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = (stream, max_version);
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "heatlab shares its GPU buffer and makes no copies; copy in the consumer (e.g. \
                 cupy.array(view, copy=True) or torch.from_dlpack(view).clone())",
            ));
        }
        let ours = (
            DLPACK_CUDA,
            i32::try_from(self.view.device_ordinal).unwrap_or(0),
        );
        if let Some(device) = dl_device.filter(|&device| device != ours) {
            return Err(PyBufferError::new_err(format!(
                "the field is on DLPack device {ours:?}, not {device:?}"
            )));
        }
        self.finished()?;
        export(py, &self.view, self.shared.clone())
    }

    /// (2, device id): CUDA memory on this GPU, as DLPack names it.
    fn __dlpack_device__(&self) -> (i32, usize) {
        (DLPACK_CUDA, self.view.device_ordinal)
    }

    /// A copy on the host, as a NumPy array (`numpy.asarray(view)`).
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if copy == Some(false) {
            return Err(invalid(
                "the field is on the GPU: NumPy cannot read it without a copy (use copy=None)",
            ));
        }
        let host = self.get(py)?.into_any();
        match dtype {
            Some(dtype) => host.call_method1("astype", (dtype,)),
            None => Ok(host),
        }
    }

    /// A copy on the host, as a new NumPy array.
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let view = self.view;
        let shared = self.shared.clone();
        let grid = py.detach(move || {
            lock(&shared)?
                .cuda()?
                .download_view(&view)
                .map_err(to_python)
        })?;
        to_numpy(py, grid)
    }

    fn __len__(&self) -> usize {
        self.view.size.rows
    }

    fn __repr__(&self) -> String {
        format!(
            "<heatlab.DeviceArray {} float32 on cuda:{} at {:#x}>",
            self.view.size, self.view.device_ordinal, self.view.pointer
        )
    }
}
