//! The method's value table: what each `EValue` of the program became at load.

use core::ptr::NonNull;
pub use et_schema::Tag;

use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// A list whose items are other values, re-read each time a kernel receives it (an int
/// list may hold SymInts that prim ops rewrite between instructions).
///
/// `repr(C)`: the layout is the same for every item type, so the builder makes one kind
/// of list and casts it.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct BoxedList<T> {
    /// Value indices of the items, range-checked at load.
    pub(crate) indices: NonNull<u32>,
    /// Gathered items, refreshed before each use.
    pub(crate) items: NonNull<T>,
    pub(crate) len: usize,
}

/// Marks a missing item in an optional-tensor list's index array.
pub(crate) const NONE_INDEX: u32 = u32::MAX;

/// One entry of a method's value table. Pointers refer to the method's own memory (or the
/// program's data for strings and inline lists) and stay valid for the method's lifetime.
#[derive(Clone, Copy)]
pub(crate) enum Value {
    None,
    Int(i64),
    Double(f64),
    Bool(bool),
    String(NonNull<u8>, usize),
    Tensor(NonNull<Tensor>),
    IntList(NonNull<BoxedList<i64>>),
    DoubleList(NonNull<f64>, usize),
    BoolList(NonNull<bool>, usize),
    TensorList(NonNull<BoxedList<*const Tensor>>),
    OptionalTensorList(NonNull<BoxedList<*const Tensor>>),
}

impl Value {
    pub(crate) fn tag(&self) -> Tag {
        match self {
            Value::None => Tag::None,
            Value::Int(_) => Tag::Int,
            Value::Double(_) => Tag::Double,
            Value::Bool(_) => Tag::Bool,
            Value::String(..) => Tag::String,
            Value::Tensor(_) => Tag::Tensor,
            Value::IntList(_) => Tag::ListInt,
            Value::DoubleList(..) => Tag::ListDouble,
            Value::BoolList(..) => Tag::ListBool,
            Value::TensorList(_) => Tag::ListTensor,
            Value::OptionalTensorList(_) => Tag::ListOptionalTensor,
        }
    }

    pub(crate) fn as_scalar(&self) -> Option<Scalar> {
        match *self {
            Value::Int(i) => Some(Scalar::Int(i)),
            Value::Double(d) => Some(Scalar::Double(d)),
            Value::Bool(b) => Some(Scalar::Bool(b)),
            _ => None,
        }
    }
}

/// A read-only view of one value of a loaded method (an input or output).
#[derive(Clone, Copy, Debug)]
pub enum EValue<'a> {
    /// No value.
    None,
    /// An integer.
    Int(i64),
    /// A double.
    Double(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    String(&'a str),
    /// A tensor.
    Tensor(&'a Tensor),
    /// Any list (lists are not exposed element-wise here).
    List(Tag),
}

impl EValue<'_> {
    /// The value's kind.
    pub fn tag(&self) -> Tag {
        match self {
            EValue::None => Tag::None,
            EValue::Int(_) => Tag::Int,
            EValue::Double(_) => Tag::Double,
            EValue::Bool(_) => Tag::Bool,
            EValue::String(_) => Tag::String,
            EValue::Tensor(_) => Tag::Tensor,
            EValue::List(t) => *t,
        }
    }

    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            EValue::Tensor(t) => Some(t),
            _ => None,
        }
    }
}
