//! What a [`Module`](super::Module) takes and gives: borrowed input tensors, owned
//! outputs, and its error.

use std::fmt;
use std::string::{String, ToString};
use std::vec::Vec;

use crate::error::Error;
use crate::tensor_buf::TensorBuf;
use crate::value::EValue;
use et_schema::scalar_type::{Element, ScalarType};

/// A tensor an application lends as an input: a dtype, sizes and row-major data,
/// borrowed for the call. `TensorRef::from_slice(&pixels, &[1, 3, 224, 224])`.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef<'a> {
    dtype: ScalarType,
    sizes: &'a [usize],
    bytes: &'a [u8],
}

impl<'a> TensorRef<'a> {
    /// A tensor of `sizes` over `data` (row-major). A length that does not match the
    /// sizes is reported when the tensor is used, naming the input.
    pub fn from_slice<T: Element>(data: &'a [T], sizes: &'a [usize]) -> TensorRef<'a> {
        // SAFETY: every `Element` is a plain number type without padding or invalid byte
        // patterns, so its memory can be read as bytes; the view covers exactly the
        // slice's memory and lives no longer than the borrow.
        let bytes = unsafe {
            core::slice::from_raw_parts(data.as_ptr().cast::<u8>(), core::mem::size_of_val(data))
        };
        TensorRef {
            dtype: T::DTYPE,
            sizes,
            bytes,
        }
    }

    /// A tensor of `dtype` and `sizes` over little-endian bytes.
    pub fn from_bytes(dtype: ScalarType, sizes: &'a [usize], bytes: &'a [u8]) -> TensorRef<'a> {
        TensorRef {
            dtype,
            sizes,
            bytes,
        }
    }

    /// A tensor over an `ndarray` array in standard (row-major, contiguous) layout; `None`
    /// for any other layout (`as_standard_layout()` makes one).
    #[cfg(feature = "ndarray")]
    pub fn from_ndarray<S, D>(array: &'a ndarray::ArrayBase<S, D>) -> Option<TensorRef<'a>>
    where
        S: ndarray::Data,
        S::Elem: Element,
        D: ndarray::Dimension,
    {
        Some(TensorRef::from_slice(array.as_slice()?, array.shape()))
    }

    /// The element type.
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// The sizes.
    pub fn sizes(&self) -> &'a [usize] {
        self.sizes
    }

    /// The data as bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// One input of a method call: a tensor, or one of the scalar kinds a method can take
/// (which must equal the value the program was exported with, as in ExecuTorch).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Input<'a> {
    /// A tensor input.
    Tensor(TensorRef<'a>),
    /// An integer input.
    Int(i64),
    /// A double input.
    Double(f64),
    /// A boolean input.
    Bool(bool),
    /// A `None` input.
    None,
}

impl<'a> From<TensorRef<'a>> for Input<'a> {
    fn from(t: TensorRef<'a>) -> Self {
        Input::Tensor(t)
    }
}

impl From<i64> for Input<'_> {
    fn from(v: i64) -> Self {
        Input::Int(v)
    }
}

impl From<f64> for Input<'_> {
    fn from(v: f64) -> Self {
        Input::Double(v)
    }
}

impl From<bool> for Input<'_> {
    fn from(v: bool) -> Self {
        Input::Bool(v)
    }
}

/// One output of a method call, owned: it outlives the next call.
#[derive(Debug)]
#[non_exhaustive]
pub enum Output {
    /// A tensor (contiguous, row-major), copied out of the method's memory.
    Tensor(TensorBuf),
    /// An integer.
    Int(i64),
    /// A double.
    Double(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    String(String),
    /// No value.
    None,
}

impl Output {
    /// Copies a method's output value.
    pub(crate) fn copy_of(value: &EValue<'_>) -> Result<Output, Error> {
        Ok(match *value {
            EValue::None => Output::None,
            EValue::Int(v) => Output::Int(v),
            EValue::Double(v) => Output::Double(v),
            EValue::Bool(v) => Output::Bool(v),
            EValue::String(s) => Output::String(s.to_string()),
            EValue::Tensor(t) => {
                let bytes = t.to_row_major_bytes().map_err(|e| e.error)?;
                Output::Tensor(TensorBuf::from_bytes(t.dtype(), t.sizes(), &bytes)?)
            }
            EValue::List(_) => return Err(Error::NotSupported),
        })
    }

    /// The tensor, if this output is one.
    pub fn as_tensor(&self) -> Option<&TensorBuf> {
        match self {
            Output::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// The tensor's elements as `T`, if this output is a tensor of `T`.
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        self.as_tensor()?.data::<T>().ok()
    }

    /// The integer (an `Int` output, or a one-element integer tensor).
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Output::Int(v) => Some(*v),
            Output::Bool(b) => Some(i64::from(*b)),
            Output::Tensor(t) if t.numel() == 1 => match t.dtype() {
                ScalarType::Long => t.data::<i64>().ok().map(|d| d[0]),
                ScalarType::Int => t.data::<i32>().ok().map(|d| i64::from(d[0])),
                _ => None,
            },
            _ => None,
        }
    }

    /// The tensor as an `ndarray` array of its sizes, if this output is a tensor of `T`.
    #[cfg(feature = "ndarray")]
    pub fn to_ndarray<T: Element>(&self) -> Option<ndarray::ArrayD<T>> {
        let t = self.as_tensor()?;
        let data = t.data::<T>().ok()?;
        ndarray::ArrayD::from_shape_vec(t.sizes(), data.to_vec()).ok()
    }

    /// The tensor, consumed.
    pub fn into_tensor(self) -> Option<TensorBuf> {
        match self {
            Output::Tensor(t) => Some(t),
            _ => None,
        }
    }
}

/// Why a [`Module`](super::Module) call failed: ExecuTorch's error code and a message
/// that says what was wrong, where, and (when there is one) what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleError {
    code: Error,
    message: String,
}

impl ModuleError {
    pub(crate) fn new(code: Error, message: impl Into<String>) -> ModuleError {
        ModuleError {
            code,
            message: message.into(),
        }
    }

    /// ExecuTorch's error code.
    pub fn code(&self) -> Error {
        self.code
    }

    /// The message without the code.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for ModuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ModuleError {}

/// Joins names for a message: `` `a`, `b` ``.
pub(crate) fn quoted_list<'n>(names: impl Iterator<Item = &'n str>) -> String {
    let names: Vec<String> = names.map(|n| std::format!("`{n}`")).collect();
    names.join(", ")
}
