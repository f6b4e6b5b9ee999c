//! Records the engine serialises (timing rows) as Python values: dicts, lists, numbers,
//! strings, `None`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use pyo3::IntoPyObjectExt;
use serde::Serialize;
use serde_json::Value;

/// `record` as the Python value of its JSON form.
pub fn to_python_value<'py>(
    py: Python<'py>,
    record: &impl Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let value = serde_json::to_value(record).map_err(|error| {
        pyo3::exceptions::PyRuntimeError::new_err(format!("internal error: {error}"))
    })?;
    convert(py, &value)
}

fn convert<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    match value {
        Value::Null => Ok(py.None().into_bound(py)),
        Value::Bool(flag) => flag.into_bound_py_any(py),
        Value::Number(number) => match (number.as_u64(), number.as_i64(), number.as_f64()) {
            (Some(unsigned), _, _) => unsigned.into_bound_py_any(py),
            (None, Some(signed), _) => signed.into_bound_py_any(py),
            (None, None, Some(float)) => float.into_bound_py_any(py),
            (None, None, None) => number.to_string().into_bound_py_any(py),
        },
        Value::String(text) => text.into_bound_py_any(py),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(convert(py, item)?)?;
            }
            Ok(list.into_any())
        }
        Value::Object(fields) => {
            let dict = PyDict::new(py);
            for (key, item) in fields {
                dict.set_item(key, convert(py, item)?)?;
            }
            Ok(dict.into_any())
        }
    }
}
