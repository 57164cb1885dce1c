//! The value table: every graph value's shape and where its bytes live (a delegate
//! argument, a constant, or a slice of the delegate's intermediate buffer).

use core::ptr::NonNull;

use et_runtime::backend::DelegateError;
use et_runtime::Error;
use et_xnnpack_schema::{ConstantRef, Graph, ValueView, FLAG_EXTERNAL_INPUT, FLAG_EXTERNAL_OUTPUT};

pub(crate) use crate::compute::shape::{Shape, MAX_RANK};
use crate::elem::{read_elem, Elem};

/// Where a value's bytes are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    /// Not used by any node.
    Unused,
    /// A tensor the delegate call passes: input or output `arg`.
    Input { arg: u32 },
    /// See [`Storage::Input`].
    Output { arg: u32 },
    /// Constant bytes (named data or the payload), valid as long as the program.
    Constant { data: *const u8, len: usize },
    /// `offset` bytes into the delegate's intermediate buffer (assigned by liveness).
    Internal { offset: usize },
}

/// One value of the plan.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Value {
    /// The sizes of the running execute: the graph's, except downstream of a dynamic
    /// input (see `exec::reshape`), where they are at most `bound`'s.
    pub(crate) shape: Shape,
    /// The graph's sizes: the most the value holds (its bytes are planned for these).
    pub(crate) bound: Shape,
    pub(crate) elem: Elem,
    pub(crate) storage: Storage,
    /// Index of the node that writes it (internal values), `u32::MAX` if none yet.
    pub(crate) def: u32,
    /// Index of the last node that reads it.
    pub(crate) last_use: u32,
}

impl Value {
    pub(crate) fn numel(&self) -> usize {
        // Checked when the value was read: every shape's numel fits.
        self.shape.numel().unwrap_or(0)
    }

    /// The rows of a `Qd8` value (the product of the dims before its row dims), 1 for
    /// other values.
    pub(crate) fn rows(&self) -> usize {
        match self.elem {
            Elem::Qd8 { row_dims } => {
                let dims = self.shape.dims();
                dims[..dims.len() - usize::from(row_dims)].iter().product()
            }
            _ => 1,
        }
    }

    /// The value's bytes (checked when the value was read).
    pub(crate) fn bytes(&self) -> usize {
        self.elem.bytes(self.numel(), self.rows()).unwrap_or(0)
    }

    pub(crate) fn is_constant(&self) -> bool {
        matches!(self.storage, Storage::Constant { .. })
    }
}

fn refuse(message: &'static str) -> DelegateError {
    DelegateError::new(Error::InvalidProgram, message)
}

/// Reads value `v` of the graph: its shape, datatype (see [`Elem`]) and where its bytes
/// are. `alloc` gives method memory for per-channel scales.
pub(crate) fn read_value<'n>(
    graph: &Graph<'_>,
    v: &ValueView<'_>,
    named: &dyn Fn(&str) -> Option<&'n [u8]>,
    alloc: &mut dyn FnMut(usize) -> Result<NonNull<f32>, DelegateError>,
) -> Result<Value, DelegateError> {
    let shape = Shape::of(v).ok_or(refuse("a value has more than 6 dims"))?;
    let elem = read_elem(graph, v, named, alloc)?;
    let mut value = Value {
        shape,
        bound: shape,
        elem,
        storage: Storage::Unused,
        def: u32::MAX,
        last_use: 0,
    };
    let bytes = shape
        .numel()
        .and_then(|n| elem.bytes(n, value.rows()))
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or(refuse("a value's size overflows"))?;
    let is_input = v.flags & FLAG_EXTERNAL_INPUT != 0;
    let is_output = v.flags & FLAG_EXTERNAL_OUTPUT != 0;
    if v.flags & !(FLAG_EXTERNAL_INPUT | FLAG_EXTERNAL_OUTPUT) != 0 {
        return Err(DelegateError::new(
            Error::NotSupported,
            "a value has flags other than external input / output",
        ));
    }
    if (is_input || is_output) && elem.external_dtype().is_none() {
        return Err(DelegateError::new(
            Error::NotSupported,
            "a delegate input or output is neither fp32 nor per-tensor quantized int8/uint8",
        ));
    }
    if matches!(elem, Elem::Qd8 { .. }) && v.constant_buffer_idx != 0 {
        return Err(refuse(
            "a qdint8 value is a constant (it is quantized at run time)",
        ));
    }
    value.storage = match (is_input, is_output, v.constant_buffer_idx) {
        (true, true, _) => return Err(refuse("a value is both a delegate input and output")),
        (true, false, 0) => Storage::Input { arg: v.external_id },
        (false, true, 0) => Storage::Output { arg: v.external_id },
        (false, false, 0) => Storage::Unused,
        (false, false, idx) => {
            let data = match graph
                .constant(idx)
                .map_err(|e| DelegateError::new(e.error, e.reason()))?
            {
                ConstantRef::Inline(b) => b,
                // The context records the missing key and the files searched.
                ConstantRef::Named(key) => named(key).ok_or(DelegateError::new(
                    Error::NotFound,
                    "no named data (in the program or an attached .ptd) has a constant's key",
                ))?,
            };
            if data.len() < bytes {
                return Err(refuse("a constant has fewer bytes than its shape needs"));
            }
            Storage::Constant {
                data: data.as_ptr(),
                len: bytes,
            }
        }
        _ => return Err(refuse("a delegate input or output is also a constant")),
    };
    Ok(value)
}
