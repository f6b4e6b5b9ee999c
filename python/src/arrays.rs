//! Arrays crossing between Python and heatlab: fields handed in (NumPy on the host; CuPy,
//! PyTorch or Numba on the GPU through the CUDA Array Interface) checked as the command line
//! checks an imported `.npy` (2-D, float32 or float64 on the host, finite, C-contiguous), and
//! fields handed out as NumPy arrays.

use numpy::{PyArray1, PyArray2, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray};
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{invalid, to_python};
use heatlab_engine::compute::cuda::ForeignDeviceArray;
use heatlab_engine::grid::{Grid, GridSize};

/// A field handed in from Python.
pub enum FieldInput {
    /// Values on the host (a NumPy array or anything NumPy reads).
    Host(Grid),
    /// A device array of another library, read where it is.
    Device(ForeignDeviceArray),
}

/// Reads `object` as a field: a NumPy array, a device array with `__cuda_array_interface__`
/// (CuPy, PyTorch on CUDA, Numba), or anything `numpy.asarray` reads (a PyTorch tensor on the
/// CPU, nested lists).
pub fn field_input(py: Python<'_>, object: &Bound<'_, PyAny>) -> PyResult<FieldInput> {
    if let Ok(array) = object.cast::<PyUntypedArray>() {
        return host_field(py, array).map(FieldInput::Host);
    }
    if object.hasattr("__cuda_array_interface__")? {
        let interface = object.getattr("__cuda_array_interface__")?;
        let interface = interface.cast::<PyDict>().map_err(|_| {
            invalid("__cuda_array_interface__ is not a dict; the array's library does not follow the CUDA Array Interface")
        })?;
        return device_field(interface).map(FieldInput::Device);
    }
    let type_name = object.get_type().name()?.to_string();
    let read = py
        .import("numpy")?
        .call_method1("asarray", (object,))
        .map_err(|error| {
            invalid(format!(
                "expected a 2-D float32 array (NumPy, CuPy, PyTorch, Numba); NumPy cannot read \
                 this {type_name}: {error}"
            ))
        })?;
    let array = read.cast::<PyUntypedArray>()?;
    if array.ndim() != 2 {
        return Err(invalid(format!(
            "expected a 2-D float32 array (NumPy, CuPy, PyTorch, Numba); got a {type_name}, \
             which NumPy reads as shape {:?}",
            array.shape()
        )));
    }
    host_field(py, array).map(FieldInput::Host)
}

/// The size of a 2-D shape, or why it is not one.
fn field_size(shape: &[usize]) -> PyResult<GridSize> {
    let &[rows, cols] = shape else {
        return Err(invalid(format!(
            "the array has shape {shape:?}; heatlab needs a 2-D array (rows, cols){}",
            if shape.len() > 2 {
                ": pick one slice, e.g. a[0]"
            } else {
                ""
            }
        )));
    };
    GridSize::new(rows, cols).map_err(to_python)
}

/// A NumPy array as a field: float32 as it is, float64 narrowed (refused beyond float32's
/// range), every value finite.
fn host_field(py: Python<'_>, array: &Bound<'_, PyUntypedArray>) -> PyResult<Grid> {
    let size = field_size(array.shape())?;
    if !array.is_c_contiguous() {
        return Err(invalid(
            "the array is not C-contiguous (a transposed or strided view); pass \
             numpy.ascontiguousarray(a)",
        ));
    }
    let dtype = array.dtype();
    let values: Vec<f32> = if dtype.is_equiv_to(&numpy::dtype::<f32>(py)) {
        let typed: PyReadonlyArray2<'_, f32> = array.cast::<PyArray2<f32>>()?.readonly();
        typed
            .as_slice()
            .map_err(|error| invalid(format!("cannot read the array: {error}")))?
            .to_vec()
    } else if dtype.is_equiv_to(&numpy::dtype::<f64>(py)) {
        let typed: PyReadonlyArray2<'_, f64> = array.cast::<PyArray2<f64>>()?.readonly();
        let wide = typed
            .as_slice()
            .map_err(|error| invalid(format!("cannot read the array: {error}")))?;
        narrowed(wide)?
    } else {
        return Err(invalid(format!(
            "the array holds {} values; heatlab takes float32 or float64 arrays (convert with \
             a.astype(numpy.float32))",
            dtype.str()?
        )));
    };
    let grid = Grid::from_vec(size, values).map_err(to_python)?;
    if let Some((row, col)) = grid.first_non_finite() {
        return Err(invalid(format!(
            "the array holds a non-finite value ({}) at row {row}, column {col}; replace NaN \
             and infinities first (numpy.nan_to_num)",
            grid.get(row, col)
        )));
    }
    Ok(grid)
}

/// float64 values as float32, refusing one beyond float32's range.
fn narrowed(wide: &[f64]) -> PyResult<Vec<f32>> {
    wide.iter()
        .enumerate()
        .map(|(index, &value)| {
            let narrow = value as f32;
            if value.is_finite() && !narrow.is_finite() {
                return Err(invalid(format!(
                    "the array holds {value:e} at index {index}, beyond float32's range (about \
                     3.4e38)"
                )));
            }
            Ok(narrow)
        })
        .collect()
}

/// A device array described by its `__cuda_array_interface__` (version 2 or 3): float32,
/// C-contiguous, unmasked.
fn device_field(interface: &Bound<'_, PyDict>) -> PyResult<ForeignDeviceArray> {
    let item = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> {
        Ok(interface.get_item(key)?.filter(|value| !value.is_none()))
    };
    let missing = |key: &str| invalid(format!("__cuda_array_interface__ has no '{key}'"));
    let shape: Vec<usize> = item("shape")?.ok_or_else(|| missing("shape"))?.extract()?;
    let size = field_size(&shape)?;
    let typestr: String = item("typestr")?
        .ok_or_else(|| missing("typestr"))?
        .extract()?;
    match typestr.as_str() {
        "<f4" => {}
        "<f8" => {
            return Err(invalid(
                "the device array holds float64 values; heatlab's fields are float32 on the \
                 GPU (convert there with a.astype('float32') or tensor.float())",
            ))
        }
        other => {
            return Err(invalid(format!(
                "the device array holds {other} values; heatlab takes float32 arrays"
            )))
        }
    }
    if item("mask")?.is_some() {
        return Err(invalid(
            "the device array is masked; heatlab takes plain arrays",
        ));
    }
    if let Some(strides) = item("strides")? {
        let strides: Vec<isize> = strides.extract()?;
        let item_bytes = 4_isize;
        let row_bytes = isize::try_from(size.cols).unwrap_or(isize::MAX) * item_bytes;
        let rows_ok = size.rows == 1 || strides.first() == Some(&row_bytes);
        let cols_ok = size.cols == 1 || strides.get(1) == Some(&item_bytes);
        if !(rows_ok && cols_ok) {
            return Err(invalid(format!(
                "the device array is not C-contiguous (strides {strides:?} bytes); pass \
                 cupy.ascontiguousarray(a) or tensor.contiguous()"
            )));
        }
    }
    let data = item("data")?.ok_or_else(|| missing("data"))?;
    let data = data.cast::<PyTuple>().map_err(|_| {
        invalid("__cuda_array_interface__'s 'data' is not a (pointer, read-only) tuple")
    })?;
    let pointer: u64 = data.get_item(0)?.extract()?;
    if pointer == 0 {
        return Err(invalid("the device array has no memory (a null pointer)"));
    }
    // 0 is not a valid stream in the interface; treat it as "nothing to wait for".
    let stream = item("stream")?
        .map(|stream| stream.extract::<u64>())
        .transpose()?
        .filter(|&stream| stream != 0);
    Ok(ForeignDeviceArray {
        pointer,
        size,
        stream,
    })
}

/// A field as a new NumPy array of shape (rows, cols).
pub fn to_numpy<'py>(py: Python<'py>, grid: Grid) -> PyResult<Bound<'py, PyArray2<f32>>> {
    let size = grid.size();
    PyArray1::from_vec(py, grid.into_vec()).reshape([size.rows, size.cols])
}
