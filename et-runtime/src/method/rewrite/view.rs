//! What a rule reads: instructions, calls and values, as safe borrows of the built method.

use core::ptr::NonNull;

use crate::kernel::{KernelEntry, KernelFn};
use crate::method::instructions::Instr;
use crate::tensor::Tensor;
use crate::value::{BoxedList, Value};

/// An operator of the method's operator table (found with
/// [`Rewriter::operator`](super::Rewriter::operator)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OperatorId(pub(super) u32);

/// One instruction of a built method.
#[derive(Clone, Copy, Debug)]
pub enum Instruction<'r> {
    /// A KernelCall.
    Call(Call<'r>),
    /// A DelegateCall: the backend reads and may write every argument.
    Delegate {
        /// Its arguments (value indices).
        args: &'r [u32],
    },
    /// A MoveCall: copies value `from` over value `to`.
    Move {
        /// The value copied.
        from: u32,
        /// The value overwritten.
        to: u32,
    },
    /// A JumpFalseCall: jumps when bool value `cond` is false.
    JumpFalse {
        /// The condition's value.
        cond: u32,
        /// The instruction jumped to, in the chain.
        destination: u32,
    },
    /// A FreeCall of a value.
    Free {
        /// The value freed.
        value: u32,
    },
}

impl<'r> Instruction<'r> {
    pub(super) fn of(instr: &Instr) -> Instruction<'r> {
        match *instr {
            Instr::Kernel {
                function,
                args,
                len,
                params,
                op,
                ..
            } => Instruction::Call(Call {
                op: OperatorId(op),
                function,
                // SAFETY: a decoded KernelCall's `args` holds `len` range-checked value
                // indices in method memory, which outlives the rewriter and is never
                // written once stored (a replaced call gets a new list).
                args: unsafe { args_of(args, len) },
                params: params as usize,
            }),
            #[cfg(feature = "backends")]
            Instr::Delegate { args, len, .. } => Instruction::Delegate {
                // SAFETY: as above, for a DelegateCall's arguments.
                args: unsafe { args_of(args, len) },
            },
            Instr::Move { from, to } => Instruction::Move { from, to },
            Instr::JumpFalse { cond, dest } => Instruction::JumpFalse {
                cond,
                destination: dest,
            },
            Instr::Free { value } => Instruction::Free { value },
        }
    }
}

/// The `len` value indices at `args`.
///
/// # Safety
/// `args` must hold `len` initialized indices that live, unchanged, for `'x`.
unsafe fn args_of<'x>(args: NonNull<u32>, len: u32) -> &'x [u32] {
    // SAFETY: the caller's promise.
    unsafe { core::slice::from_raw_parts(args.as_ptr(), len as usize) }
}

/// A KernelCall: its operator, the kernel that serves it, and its arguments.
#[derive(Clone, Copy)]
pub struct Call<'r> {
    op: OperatorId,
    function: KernelFn,
    args: &'r [u32],
    params: usize,
}

impl core::fmt::Debug for Call<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Call")
            .field("op", &self.op)
            .field("args", &self.args)
            .field("params", &self.params)
            .finish()
    }
}

impl<'r> Call<'r> {
    /// The operator the program calls (a replaced call keeps its operator).
    #[inline]
    pub fn operator(&self) -> OperatorId {
        self.op
    }

    /// The function that runs: its kernel's ([`KernelEntry::function`]).
    #[inline]
    pub fn function(&self) -> KernelFn {
        self.function
    }

    /// Whether `entry`'s kernel serves this call (compared by function address: an entry
    /// sharing the address runs the very same code).
    #[inline]
    pub fn runs(&self, entry: &KernelEntry) -> bool {
        core::ptr::fn_addr_eq(self.function, entry.function)
    }

    /// The registered entry whose function runs, found by address (a registry scan: the
    /// first of entries sharing a function). `None` for a call that runs nothing.
    pub fn kernel(&self) -> Option<&'static KernelEntry> {
        crate::registry::kernels().iter().find(|e| self.runs(e))
    }

    /// All the arguments: the declared parameters, then return slots.
    #[inline]
    pub fn args(&self) -> &'r [u32] {
        self.args
    }

    /// The number of parameters its kernel declares.
    #[inline]
    pub fn num_params(&self) -> usize {
        self.params
    }

    /// The arguments after the declared parameters: return slots, which prim ops write.
    #[inline]
    pub fn returns(&self) -> &'r [u32] {
        self.args.get(self.params..).unwrap_or_default()
    }
}

/// A value of a built method.
#[derive(Clone, Copy, Debug)]
pub enum ValueRef<'r> {
    /// No value.
    None,
    /// An integer.
    Int(i64),
    /// A double.
    Double(f64),
    /// A bool.
    Bool(bool),
    /// A string.
    String,
    /// A tensor.
    Tensor(&'r Tensor),
    /// A list of ints: the value indices of its items.
    IntList(&'r [u32]),
    /// A list of doubles.
    DoubleList,
    /// A list of bools.
    BoolList,
    /// A list of tensors: the value indices of its items.
    TensorList(&'r [u32]),
    /// A list of optional tensors: the value indices of its items (`u32::MAX` for an
    /// absent one).
    OptionalTensorList(&'r [u32]),
}

impl ValueRef<'_> {
    /// The value `v` reads as.
    ///
    /// # Safety
    /// `v` must be a value of a built method that lives for `'x`, whose tensors nothing
    /// changes while the result is alive.
    pub(super) unsafe fn of<'x>(v: Value) -> ValueRef<'x> {
        match v {
            Value::None => ValueRef::None,
            Value::Int(i) => ValueRef::Int(i),
            Value::Double(d) => ValueRef::Double(d),
            Value::Bool(b) => ValueRef::Bool(b),
            Value::String(..) => ValueRef::String,
            // SAFETY: the tensor lives in method memory for 'x, unchanged (caller).
            Value::Tensor(t) => ValueRef::Tensor(unsafe { t.as_ref() }),
            // SAFETY: a list of a method that lives for 'x (caller).
            Value::IntList(l) => ValueRef::IntList(unsafe { indices(l) }),
            Value::DoubleList(..) => ValueRef::DoubleList,
            Value::BoolList(..) => ValueRef::BoolList,
            // SAFETY: as above.
            Value::TensorList(l) => ValueRef::TensorList(unsafe { indices(l) }),
            // SAFETY: as above.
            Value::OptionalTensorList(l) => ValueRef::OptionalTensorList(unsafe { indices(l) }),
        }
    }
}

/// The items of a list (value indices).
///
/// # Safety
/// `l` must be a list header of a built method that lives for `'x`. (Headers live in method
/// memory for the method's lifetime, and `indices` holds `len` range-checked value indices
/// that nothing writes after load.)
pub(super) unsafe fn indices<'x, T>(l: NonNull<BoxedList<T>>) -> &'x [u32] {
    // SAFETY: the caller's promise.
    unsafe {
        let l = l.as_ref();
        core::slice::from_raw_parts(l.indices.as_ptr(), l.len)
    }
}
