//! Arrays in and out, through NumPy's array interface (`__array_interface__`, version 3):
//! a data pointer, the sizes and a type string. The Python layer hands over NumPy arrays
//! (torch tensors become arrays over the same memory), so an input whose array is
//! C-contiguous and of the method's dtype is read where it lies, and an output is an
//! array over the memory etch copied it into.

use et_runtime::{Error, Input, Output, ScalarType, TensorBuf, TensorRef};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyString, PyTuple};

use crate::errors::{raise, Kind};

/// NumPy's type string (without the byte order) for a dtype, and whether NumPy has that
/// type; a dtype it lacks is shown as unsigned integers of its width (bfloat16 as
/// `u2`), which the Python layer reinterprets.
pub fn typestr(dtype: ScalarType) -> (String, bool) {
    use ScalarType::*;
    let known = match dtype {
        Bool => "b1",
        Byte | QUInt8 => "u1",
        Char | QInt8 => "i1",
        Short => "i2",
        Int | QInt32 => "i4",
        Long => "i8",
        Half => "f2",
        Float => "f4",
        Double => "f8",
        ComplexFloat => "c8",
        ComplexDouble => "c16",
        UInt16 => "u2",
        UInt32 => "u4",
        UInt64 => "u8",
        other => return (format!("u{}", other.element_size()), false),
    };
    (String::from(known), true)
}

/// The dtype of a NumPy type string (`<f4`, `|b1`, ...), if etch has one; `None` also for
/// a byte order other than this machine's (little-endian: what etch's kernels read).
pub fn dtype_of_typestr(s: &str) -> Option<ScalarType> {
    use ScalarType::*;
    let (order, kind) = s.split_at_checked(1)?;
    let native = cfg!(target_endian = "little");
    let ok_order = match order {
        "<" => native,
        ">" => !native,
        "|" | "=" => true,
        _ => false,
    };
    if !ok_order {
        return None;
    }
    Some(match kind {
        "b1" => Bool,
        "u1" => Byte,
        "i1" => Char,
        "i2" => Short,
        "u2" => UInt16,
        "i4" => Int,
        "u4" => UInt32,
        "i8" => Long,
        "u8" => UInt64,
        "f2" => Half,
        "f4" => Float,
        "f8" => Double,
        "c8" => ComplexFloat,
        "c16" => ComplexDouble,
        _ => return None,
    })
}

/// One input, read from its Python object and held while the call reads it.
#[derive(Debug)]
pub enum Arg<'py> {
    /// An array's memory: `bytes` bytes at `data`, of `dtype` and `sizes`.
    Tensor {
        /// Kept alive (and so its memory) for as long as the argument is.
        _owner: Bound<'py, PyAny>,
        data: *const u8,
        bytes: usize,
        dtype: ScalarType,
        sizes: Vec<usize>,
    },
    /// A scalar, passed by value.
    Scalar(Input<'static>),
}

fn bad(py: Python<'_>, i: usize, why: impl std::fmt::Display) -> PyErr {
    raise(
        py,
        Kind::Code(Error::InvalidArgument),
        format!("input {i}: {why}"),
    )
}

impl<'py> Arg<'py> {
    /// Input `i`: `None`, a bool, an int, a float, a C-contiguous `numpy.ndarray`, or a
    /// pair `(array, dtype_name)` whose dtype name overrides
    /// the array's (for a dtype NumPy lacks, as bfloat16, carried in an array of its
    /// width).
    pub fn read(i: usize, obj: &Bound<'py, PyAny>) -> PyResult<Arg<'py>> {
        let py = obj.py();
        if obj.is_none() {
            return Ok(Arg::Scalar(Input::None));
        }
        // bool before int: Python's bool is an int.
        if obj.is_instance_of::<PyBool>() {
            return Ok(Arg::Scalar(Input::Bool(obj.extract()?)));
        }
        if obj.is_instance_of::<PyInt>() {
            let v: i64 = obj
                .extract()
                .map_err(|_| bad(py, i, "the integer does not fit in int64"))?;
            return Ok(Arg::Scalar(Input::Int(v)));
        }
        if obj.is_instance_of::<PyFloat>() {
            return Ok(Arg::Scalar(Input::Double(obj.extract()?)));
        }
        let (array, override_dtype) = match obj.cast::<PyTuple>() {
            Ok(pair) if pair.len() == 2 => {
                let name: String = pair.get_item(1)?.extract()?;
                let dtype = ScalarType::from_name(&name)
                    .ok_or_else(|| bad(py, i, format!("unknown dtype `{name}`")))?;
                (pair.get_item(0)?, Some(dtype))
            }
            _ => (obj.clone(), None),
        };
        Self::read_array(i, array, override_dtype)
    }

    fn read_array(
        i: usize,
        array: Bound<'py, PyAny>,
        override_dtype: Option<ScalarType>,
    ) -> PyResult<Arg<'py>> {
        let py = array.py();
        // Only NumPy's own arrays: their interface is trusted to describe memory they own
        // (any object can claim an `__array_interface__`; the Python layer turns every
        // input into an ndarray first).
        let type_name = array.get_type().fully_qualified_name()?.to_string();
        if type_name != "numpy.ndarray" {
            return Err(bad(
                py,
                i,
                format!(
                    "unsupported type {type_name}: give a NumPy array, a torch tensor, or a \
                     bool, int, float or None"
                ),
            ));
        }
        let interface = array
            .getattr("__array_interface__")?
            .cast_into::<PyDict>()?;
        let item = |key: &str| interface.get_item(key);
        let typestr: String = item("typestr")?
            .ok_or_else(|| bad(py, i, "the array interface has no typestr"))?
            .extract()?;
        let shape: Vec<usize> = item("shape")?
            .ok_or_else(|| bad(py, i, "the array interface has no shape"))?
            .extract()?;
        let native = dtype_of_typestr(&typestr)
            .ok_or_else(|| bad(py, i, format!("etch has no dtype for NumPy's `{typestr}`")))?;
        let dtype = match override_dtype {
            Some(d) if d.element_size() != native.element_size() => {
                return Err(bad(
                    py,
                    i,
                    format!("{d:?} elements are not {typestr} elements wide"),
                ))
            }
            Some(d) => d,
            None => native,
        };
        let numel =
            et_runtime::checked_numel(&shape).ok_or_else(|| bad(py, i, "the sizes overflow"))?;
        let bytes = numel
            .checked_mul(dtype.element_size())
            .ok_or_else(|| bad(py, i, "the sizes overflow"))?;
        if let Some(strides) = item("strides")? {
            if !strides.is_none() {
                let strides: Vec<isize> = strides.extract()?;
                if !is_c_contiguous(&shape, &strides, dtype.element_size()) {
                    return Err(bad(py, i, "the array is not C-contiguous"));
                }
            }
        }
        if item("mask")?.is_some_and(|m| !m.is_none()) {
            return Err(bad(py, i, "masked arrays are not supported"));
        }
        let data = item("data")?.ok_or_else(|| bad(py, i, "the array interface has no data"))?;
        let data = data
            .cast::<PyTuple>()
            .map_err(|_| bad(py, i, "the array's data is not a pointer"))?;
        let address: usize = data.get_item(0)?.extract()?;
        if address == 0 && bytes > 0 {
            return Err(bad(py, i, "the array's data pointer is null"));
        }
        Ok(Arg::Tensor {
            _owner: array,
            data: address as *const u8,
            bytes,
            dtype,
            sizes: shape,
        })
    }

    /// The input the module reads. The interpreter's lock must be held while the
    /// returned input is used (see the SAFETY comment).
    pub fn input(&self, _py: Python<'_>) -> Input<'_> {
        match self {
            Arg::Scalar(s) => *s,
            Arg::Tensor {
                data,
                bytes,
                dtype,
                sizes,
                ..
            } => {
                let slice: &[u8] = if *bytes == 0 {
                    &[]
                } else {
                    // SAFETY: `data` and `bytes` come from the array interface of
                    // `_owner`, a `numpy.ndarray` (checked in `read_array`), which promises `bytes` readable bytes at `data` for a C-contiguous
                    // array of these sizes and dtype while the array lives and is not
                    // resized. `_owner` lives as long as `self`, and the returned borrow
                    // no longer; the `Python` token proves the interpreter's lock is
                    // held, so no Python code runs (to resize or write the array) while
                    // the module reads it.
                    unsafe { std::slice::from_raw_parts(*data, *bytes) }
                };
                Input::Tensor(TensorRef::from_bytes(*dtype, sizes, slice))
            }
        }
    }
}

fn is_c_contiguous(shape: &[usize], strides: &[isize], element: usize) -> bool {
    if shape.len() != strides.len() {
        return false;
    }
    // An empty array has no element to be out of place.
    if shape.contains(&0) {
        return true;
    }
    let mut expected = element as isize;
    for (&size, &stride) in shape.iter().zip(strides).rev() {
        // A dimension of one element may have any stride.
        if size != 1 && stride != expected {
            return false;
        }
        expected = expected.saturating_mul(size as isize);
    }
    true
}

/// An output tensor: memory etch owns, shown to NumPy through `__array_interface__`
/// (`numpy.asarray` wraps it without a copy and keeps this object alive as its base).
#[derive(Debug)]
#[pyclass(name = "_Tensor", module = "etch._etch", frozen)]
pub struct OutTensor {
    _buf: TensorBuf,
    /// Taken once from the buffer's data, mutably: NumPy may write through it (arrays
    /// ExecuTorch returns are writable), and nothing on the Rust side reads the data
    /// again, so no Rust borrow of it is alive when NumPy writes.
    data: usize,
    dtype: ScalarType,
    sizes: Vec<usize>,
}

impl OutTensor {
    fn new(mut buf: TensorBuf) -> Result<OutTensor, Error> {
        let data = buf.bytes_mut().map_err(|e| e.error)?.as_mut_ptr() as usize;
        Ok(OutTensor {
            dtype: buf.dtype(),
            sizes: buf.sizes().to_vec(),
            _buf: buf,
            data,
        })
    }
}

#[pymethods]
impl OutTensor {
    /// NumPy's array interface, version 3.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (kind, _) = typestr(self.dtype);
        let order = if kind.ends_with('1') { "|" } else { "<" };
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("typestr", format!("{order}{kind}"))?;
        d.set_item("shape", PyTuple::new(py, &self.sizes)?)?;
        d.set_item("data", (self.data, false))?;
        d.set_item("strides", py.None())?;
        Ok(d)
    }

    /// The dtype's name (`float32`, `bfloat16`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }

    /// Whether NumPy has the dtype (otherwise the array holds its bits as unsigned
    /// integers of its width).
    #[getter]
    fn numpy_native(&self) -> bool {
        typestr(self.dtype).1
    }
}

/// A method's output as a Python object: a tensor as an [`OutTensor`], scalars as
/// Python's.
pub fn output_to_py(py: Python<'_>, output: Output) -> PyResult<Py<PyAny>> {
    Ok(match output {
        Output::Tensor(t) => {
            let t = OutTensor::new(t)
                .map_err(|e| raise(py, Kind::Code(e), "an output tensor has no readable data"))?;
            Py::new(py, t)?.into_any()
        }
        Output::Int(v) => v.into_pyobject(py)?.into_any().unbind(),
        Output::Double(v) => PyFloat::new(py, v).into_any().unbind(),
        Output::Bool(v) => PyBool::new(py, v).to_owned().into_any().unbind(),
        Output::String(s) => PyString::new(py, &s).into_any().unbind(),
        _ => py.None(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_strings_round_trip() {
        for dtype in ScalarType::ALL {
            let (kind, native) = typestr(dtype);
            if native
                && !matches!(
                    dtype,
                    ScalarType::QInt8 | ScalarType::QUInt8 | ScalarType::QInt32
                )
            {
                assert_eq!(
                    dtype_of_typestr(&format!("<{kind}")),
                    Some(dtype),
                    "{dtype:?}"
                );
            }
        }
        assert_eq!(dtype_of_typestr("|b1"), Some(ScalarType::Bool));
        assert_eq!(dtype_of_typestr(">f4"), None);
        assert_eq!(dtype_of_typestr("<M8"), None);
        assert_eq!(typestr(ScalarType::BFloat16), (String::from("u2"), false));
    }

    #[test]
    fn contiguity() {
        assert!(is_c_contiguous(&[2, 3], &[12, 4], 4));
        assert!(!is_c_contiguous(&[2, 3], &[4, 8], 4));
        assert!(is_c_contiguous(&[1, 3], &[999, 4], 4));
        assert!(is_c_contiguous(&[0, 3], &[0, 0], 4));
        assert!(!is_c_contiguous(&[3], &[4, 4], 4));
    }
}
