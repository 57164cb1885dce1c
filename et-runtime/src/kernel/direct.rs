//! Calling one registry entry on arguments built by hand, without a program: what lets a
//! test exercise every registered kernel for every dtype it declares
//! (`tests/tests/registry_dtypes.rs`). Builds the same value table a method would, so the
//! generated wrapper, its unboxing and the kernel run exactly as under `execute`.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::ptr::NonNull;

use super::{KernelArgs, KernelContext, KernelEntry, ReturnKind};
use crate::error::{Error, KernelError, KernelResult};
use crate::tensor::Tensor;
use crate::value::{BoxedList, Value};

/// One argument of [`call_entry`], in the operator's argument order (out tensors last).
#[derive(Debug)]
pub enum CallArg<'t> {
    /// `None` (an absent optional argument).
    None,
    /// An int (also a dtype or a memory format).
    Int(i64),
    /// A double.
    Double(f64),
    /// A bool.
    Bool(bool),
    /// A tensor, read or written.
    Tensor(&'t mut Tensor),
    /// An int list.
    IntList(&'t [i64]),
    /// A double list.
    DoubleList(&'t [f64]),
    /// A bool list.
    BoolList(&'t [bool]),
    /// A tensor list (also for out lists and optional-tensor lists without holes).
    TensorList(Vec<&'t mut Tensor>),
    /// A string.
    Str(&'t str),
}

/// Calls `entry` with `args` (its parameters, without the return slot, which is added as
/// `None` for kernels that write one). The arguments are checked against the entry's
/// signature first, as `load_method` does, so a wrong kind is an `InvalidProgram` error.
pub fn call_entry(
    entry: &KernelEntry,
    ctx: &KernelContext<'_>,
    args: &mut [CallArg<'_>],
) -> KernelResult {
    // List headers and item buffers: boxed so the pointers in `values` stay put.
    let mut int_lists: Vec<Box<OwnedList<i64>>> = Vec::new();
    let mut tensor_lists: Vec<Box<OwnedList<*const Tensor>>> = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let mut positions: Vec<u32> = Vec::new();
    for arg in args.iter_mut() {
        let v = match arg {
            CallArg::None => Value::None,
            CallArg::Int(i) => Value::Int(*i),
            CallArg::Double(d) => Value::Double(*d),
            CallArg::Bool(b) => Value::Bool(*b),
            CallArg::Tensor(t) => Value::Tensor(NonNull::from(&mut **t)),
            CallArg::IntList(l) => {
                // Items are separate Int values, as in a program.
                let first = values.len() as u32;
                values.extend(l.iter().map(|&i| Value::Int(i)));
                let mut b = OwnedList::new(first, l.to_vec());
                let header = NonNull::from(&mut b.header);
                int_lists.push(b);
                Value::IntList(header)
            }
            CallArg::DoubleList(l) => Value::DoubleList(NonNull::from(&l[..]).cast(), l.len()),
            CallArg::BoolList(l) => Value::BoolList(NonNull::from(&l[..]).cast(), l.len()),
            CallArg::Str(s) => Value::String(NonNull::from(s.as_bytes()).cast(), s.len()),
            CallArg::TensorList(ts) => {
                let first = values.len() as u32;
                values.extend(
                    ts.iter_mut()
                        .map(|t| Value::Tensor(NonNull::from(&mut **t))),
                );
                let mut b = OwnedList::new(first, alloc::vec![core::ptr::null(); ts.len()]);
                let header = NonNull::from(&mut b.header);
                tensor_lists.push(b);
                Value::TensorList(header)
            }
        };
        positions.push(values.len() as u32);
        values.push(v);
    }
    let params = positions.len();
    if entry.signature.returns != ReturnKind::Outs {
        positions.push(values.len() as u32);
        values.push(Value::None);
    }
    if entry
        .signature
        .check_call(positions.iter().map(|&p| &values[p as usize]))
        .is_err()
    {
        return Err(KernelError::new(
            Error::InvalidProgram,
            "arguments do not match the kernel's signature",
        ));
    }
    // SAFETY: every position indexes `values`; the tensors are behind `&mut` borrows held
    // by `args` for this call, so nothing else uses them, and each tensor appears in one
    // value only; the list headers and buffers (boxed) and the inline lists and strings
    // (borrowed by `args`) outlive the call; `params <= positions.len()`.
    let kargs =
        unsafe { KernelArgs::new(NonNull::from(&mut values[..]).cast(), &positions, params) };
    let result = (entry.function)(ctx, &kargs);
    drop(int_lists);
    drop(tensor_lists);
    result
}

/// A list value with its own buffers: the header a `Value` points at, the value indices
/// of its items (consecutive, from `first`) and the item buffer the accessors refill.
struct OwnedList<T> {
    header: BoxedList<T>,
    indices: Vec<u32>,
    items: Vec<T>,
}

impl<T> OwnedList<T> {
    /// Boxed, so the header's pointers into the buffers stay valid when it moves.
    fn new(first: u32, items: Vec<T>) -> Box<OwnedList<T>> {
        let n = items.len();
        let mut b = Box::new(OwnedList {
            header: BoxedList {
                indices: NonNull::dangling(),
                items: NonNull::dangling(),
                len: 0,
            },
            indices: (first..first + n as u32).collect(),
            items,
        });
        b.header = BoxedList {
            indices: NonNull::from(&mut b.indices[..]).cast(),
            items: NonNull::from(&mut b.items[..]).cast(),
            len: n,
        };
        b
    }
}
