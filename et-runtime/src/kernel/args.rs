//! Argument access: how a `#[kernel]`-generated wrapper reads the values of a call.
//!
//! Every accessor checks the value's current kind, so a program that slipped past the
//! load-time signature check still cannot be misread. Out arguments, whose `&mut`
//! borrows need an aliasing proof, are in `outs`.

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;

use crate::error::{Error, KernelError, KernelResult};
use crate::scalar::Scalar;
use crate::tensor::Tensor;
use crate::value::{BoxedList, Value, NONE_INDEX};
use et_schema::scalar_type::ScalarType;

/// A kernel call's arguments, as the generated wrapper unboxes them.
///
/// Indices were range-checked at load. Every accessor checks the value's current kind
/// and fails with `InvalidProgram` on a mismatch, so a malformed program can never be
/// misread.
pub struct KernelArgs<'a> {
    values: NonNull<Value>,
    args: NonNull<u32>,
    pub(super) len: usize,
    /// How many leading values are parameters (the rest is the return slot).
    pub(super) params: usize,
    /// The method proved at load that no out argument of this call can alias another
    /// argument, so `tensor_mut` need not check again.
    pub(super) prechecked: bool,
    _method: PhantomData<&'a mut Value>,
}

/// Whether `load_method` proves each call's out arguments exclusive once, so that the
/// call skips the check. Built for size (the cfg `etch_size_first`) it does not: every
/// `tensor_mut` checks at its call, with the same errors, in less code. The one switch
/// that load, execute and the accessors read.
pub(crate) const ALIAS_PROOFS: bool = !cfg!(etch_size_first);

pub(super) fn wrong_kind() -> KernelError {
    KernelError::new(
        Error::InvalidProgram,
        "argument has the wrong type for this kernel",
    )
}

impl<'a> KernelArgs<'a> {
    /// Arguments `args` (value indices) of a table at `values`.
    ///
    /// # Safety
    /// Every index in `args` must be in range of the value table, the table and every
    /// tensor and list it refers to must stay valid and otherwise unused for `'a`, and
    /// `params <= args.len()`.
    pub(crate) unsafe fn new(values: NonNull<Value>, args: &'a [u32], params: usize) -> Self {
        KernelArgs {
            values,
            // SAFETY: a slice pointer is never null.
            args: unsafe { NonNull::new_unchecked(args.as_ptr() as *mut u32) },
            len: args.len(),
            params,
            prechecked: false,
            _method: PhantomData,
        }
    }

    /// As [`new`](Self::new), for a call whose out arguments `proved` exclusive at load by
    /// [`outs_are_exclusive`](Self::outs_are_exclusive) (then `tensor_mut` skips its
    /// check). Without [`ALIAS_PROOFS`] no call counts as proved.
    ///
    /// # Safety
    /// As for `new`; and when `proved`, since that check no tensor may have been rebound
    /// to other data or shared between values (the method only proves calls when it has
    /// no MoveCall and no view op), and tensors only ever shrink within their bound.
    pub(crate) unsafe fn with_proof(
        values: NonNull<Value>,
        args: &'a [u32],
        params: usize,
        proved: bool,
    ) -> Self {
        KernelArgs {
            prechecked: ALIAS_PROOFS && proved,
            // SAFETY: the caller upholds `new`'s contract.
            ..unsafe { Self::new(values, args, params) }
        }
    }

    /// Whether this call's outs were proved exclusive at load. Testing [`ALIAS_PROOFS`]
    /// here as well lets a build without the proofs drop, from every kernel's inlined
    /// `tensor_mut`, the branch that skips the check.
    #[inline(always)]
    pub(super) fn prechecked(&self) -> bool {
        ALIAS_PROOFS && self.prechecked
    }

    /// Number of values passed (parameters plus the return slot).
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if no values were passed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn index(&self, i: usize) -> KernelResult<u32> {
        if i >= self.len {
            return Err(KernelError::new(
                Error::InvalidProgram,
                "kernel call has too few arguments",
            ));
        }
        // SAFETY: `i < len`, and `args` holds `len` indices (constructor contract).
        Ok(unsafe { *self.args.as_ptr().add(i) })
    }

    pub(super) fn value_at_index(&self, idx: u32) -> Value {
        // SAFETY: every index was range-checked against the value table at load.
        unsafe { *self.values.as_ptr().add(idx as usize) }
    }

    /// Argument `i`'s entry of the value table, for the accessors to match on and copy
    /// out of at once.
    ///
    /// Matched in place, the entry's tag is known to be a `Value`'s. A copy in a
    /// `KernelResult<Value>` shares its tag byte with the error, which the compiler cannot
    /// rule out for bytes read from memory: a check and a branch in every accessor.
    #[inline(always)]
    pub(super) fn entry(&self, i: usize) -> KernelResult<&Value> {
        let ptr = self.value_ptr(i)?;
        // SAFETY: an in-range entry of the table, which lives for 'a. The only write to
        // the table during a call is `set_return`'s, and no accessor holds this borrow
        // beyond the match that copies out of it.
        Ok(unsafe { &*ptr })
    }

    /// Argument `i`'s entry, for loops already bounded by the argument count.
    ///
    /// # Safety
    /// `i < self.len`.
    #[inline(always)]
    pub(super) unsafe fn entry_unchecked(&self, i: usize) -> Value {
        // SAFETY: `i < len` (caller), and `args` holds `len` indices.
        self.value_at_index(unsafe { *self.args.as_ptr().add(i) })
    }

    fn value_ptr(&self, i: usize) -> KernelResult<*mut Value> {
        let idx = self.index(i)?;
        // SAFETY: as in `value_at_index`.
        Ok(unsafe { self.values.as_ptr().add(idx as usize) })
    }

    /// A tensor argument.
    pub fn tensor(&self, i: usize) -> KernelResult<&'a Tensor> {
        match *self.entry(i)? {
            // SAFETY: tensors live in method memory for 'a; no `&mut` to this tensor can
            // exist in the same call, because `tensor_mut` refuses tensors that appear at
            // any other position.
            Value::Tensor(t) => Ok(unsafe { t.as_ref() }),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional tensor argument.
    pub fn opt_tensor(&self, i: usize) -> KernelResult<Option<&'a Tensor>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            _ => self.tensor(i).map(Some),
        }
    }

    /// A tensor-list argument.
    pub fn tensor_list(&self, i: usize) -> KernelResult<&'a [&'a Tensor]> {
        let list = match *self.entry(i)? {
            Value::TensorList(l) => l,
            _ => return Err(wrong_kind()),
        };
        let items = self.gather_tensors(list, false)?;
        // SAFETY: `gather_tensors` with `allow_none == false` stored only non-null pointers
        // to live tensors, and `&Tensor` has the layout of a non-null `*const Tensor`.
        Ok(unsafe { core::slice::from_raw_parts(items as *const &'a Tensor, list_len(list)) })
    }

    /// An optional-tensor-list argument (`Tensor?[]`).
    pub fn opt_tensor_list(&self, i: usize) -> KernelResult<&'a [Option<&'a Tensor>]> {
        let (list, allow_none) = match *self.entry(i)? {
            Value::OptionalTensorList(l) => (l, true),
            Value::TensorList(l) => (l, false),
            _ => return Err(wrong_kind()),
        };
        let items = self.gather_tensors(list, allow_none)?;
        // SAFETY: the gathered pointers are null or point at live tensors;
        // `Option<&Tensor>` has the layout of `*const Tensor` (null is `None`).
        Ok(unsafe {
            core::slice::from_raw_parts(items as *const Option<&'a Tensor>, list_len(list))
        })
    }

    /// Re-reads a tensor list's items from the value table into its item buffer.
    fn gather_tensors(
        &self,
        list: NonNull<BoxedList<*const Tensor>>,
        allow_none: bool,
    ) -> KernelResult<*const *const Tensor> {
        // SAFETY: list headers live in method memory for 'a.
        let l = unsafe { list.as_ref() };
        for k in 0..l.len {
            // SAFETY: `indices` and `items` hold `len` entries each.
            let (idx, slot) = unsafe { (*l.indices.as_ptr().add(k), l.items.as_ptr().add(k)) };
            let ptr: *const Tensor = if idx == NONE_INDEX {
                core::ptr::null()
            } else {
                match self.value_at_index(idx) {
                    Value::Tensor(t) => t.as_ptr(),
                    Value::None if allow_none => core::ptr::null(),
                    _ => return Err(wrong_kind()),
                }
            };
            if ptr.is_null() && !allow_none {
                return Err(wrong_kind());
            }
            // Write only on change: a list passed twice to one call is then never written
            // while the first view of it is alive.
            // SAFETY: `slot` is in bounds; it is only read through views of this list.
            unsafe {
                if *slot != ptr {
                    *slot = ptr;
                }
            }
        }
        Ok(l.items.as_ptr())
    }

    /// A scalar argument (int, double or bool value).
    pub fn scalar(&self, i: usize) -> KernelResult<Scalar> {
        self.entry(i)?.as_scalar().ok_or_else(wrong_kind)
    }

    /// An optional scalar argument.
    pub fn opt_scalar(&self, i: usize) -> KernelResult<Option<Scalar>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            v => v.as_scalar().map(Some).ok_or_else(wrong_kind),
        }
    }

    /// An int argument.
    pub fn int(&self, i: usize) -> KernelResult<i64> {
        match *self.entry(i)? {
            Value::Int(v) => Ok(v),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional int argument.
    pub fn opt_int(&self, i: usize) -> KernelResult<Option<i64>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            _ => Err(wrong_kind()),
        }
    }

    /// A double argument (an int value converts).
    pub fn double(&self, i: usize) -> KernelResult<f64> {
        match *self.entry(i)? {
            Value::Double(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional double argument.
    pub fn opt_double(&self, i: usize) -> KernelResult<Option<f64>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            _ => self.double(i).map(Some),
        }
    }

    /// A bool argument.
    pub fn bool(&self, i: usize) -> KernelResult<bool> {
        match *self.entry(i)? {
            Value::Bool(v) => Ok(v),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional bool argument.
    pub fn opt_bool(&self, i: usize) -> KernelResult<Option<bool>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            Value::Bool(v) => Ok(Some(v)),
            _ => Err(wrong_kind()),
        }
    }

    /// A dtype argument (an int holding a `ScalarType` number).
    pub fn scalar_type(&self, i: usize) -> KernelResult<ScalarType> {
        let v = self.int(i)?;
        i8::try_from(v)
            .ok()
            .and_then(ScalarType::from_i8)
            .ok_or(KernelError::new(
                Error::InvalidArgument,
                "dtype argument is not a valid ScalarType",
            ))
    }

    /// An optional dtype argument.
    pub fn opt_scalar_type(&self, i: usize) -> KernelResult<Option<ScalarType>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            _ => self.scalar_type(i).map(Some),
        }
    }

    /// An int-list argument, re-read from its items (which prim ops may have rewritten).
    pub fn int_list(&self, i: usize) -> KernelResult<&'a [i64]> {
        let list = match *self.entry(i)? {
            Value::IntList(l) => l,
            _ => return Err(wrong_kind()),
        };
        // SAFETY: list headers live in method memory for 'a.
        let l = unsafe { list.as_ref() };
        for k in 0..l.len {
            // SAFETY: `indices` and `items` hold `len` entries each.
            let (idx, slot) = unsafe { (*l.indices.as_ptr().add(k), l.items.as_ptr().add(k)) };
            let v = match self.value_at_index(idx) {
                Value::Int(v) => v,
                _ => return Err(wrong_kind()),
            };
            // Write only on change (see `gather_tensors`).
            // SAFETY: `slot` is in bounds and only read through views of this list.
            unsafe {
                if *slot != v {
                    *slot = v;
                }
            }
        }
        // SAFETY: `items` holds `len` initialized i64s in method memory for 'a.
        Ok(unsafe { core::slice::from_raw_parts(l.items.as_ptr(), l.len) })
    }

    /// An optional int-list argument.
    pub fn opt_int_list(&self, i: usize) -> KernelResult<Option<&'a [i64]>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            _ => self.int_list(i).map(Some),
        }
    }

    /// A double-list argument.
    pub fn double_list(&self, i: usize) -> KernelResult<&'a [f64]> {
        match *self.entry(i)? {
            // SAFETY: inline lists were copied into method memory at load; read-only.
            Value::DoubleList(p, n) => Ok(unsafe { core::slice::from_raw_parts(p.as_ptr(), n) }),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional double-list argument.
    pub fn opt_double_list(&self, i: usize) -> KernelResult<Option<&'a [f64]>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            _ => self.double_list(i).map(Some),
        }
    }

    /// A bool-list argument.
    pub fn bool_list(&self, i: usize) -> KernelResult<&'a [bool]> {
        match *self.entry(i)? {
            // SAFETY: copied into method memory at load, each byte validated as 0 or 1.
            Value::BoolList(p, n) => Ok(unsafe { core::slice::from_raw_parts(p.as_ptr(), n) }),
            _ => Err(wrong_kind()),
        }
    }

    /// A string argument.
    pub fn string(&self, i: usize) -> KernelResult<&'a str> {
        match *self.entry(i)? {
            Value::String(p, n) => {
                // SAFETY: strings point into the program's data, which outlives the method,
                // and were validated as UTF-8 at load.
                Ok(unsafe {
                    core::str::from_utf8_unchecked(core::slice::from_raw_parts(p.as_ptr(), n))
                })
            }
            _ => Err(wrong_kind()),
        }
    }

    /// An optional string argument.
    pub fn opt_string(&self, i: usize) -> KernelResult<Option<&'a str>> {
        match *self.entry(i)? {
            Value::None => Ok(None),
            _ => self.string(i).map(Some),
        }
    }

    /// Writes a value into the return slot (the last position), for functional ops.
    fn set_return(&self, v: Value) -> KernelResult<()> {
        if self.len == 0 {
            return Err(KernelError::new(
                Error::InvalidProgram,
                "kernel call has no return slot",
            ));
        }
        let slot = self.value_ptr(self.len - 1)?;
        // SAFETY: `slot` is an in-range entry of the value table, which no reference points
        // into (accessors copy values out), so writing it cannot invalidate a borrow.
        unsafe { *slot = v };
        Ok(())
    }

    /// Stores an int result.
    pub fn set_return_int(&self, v: i64) -> KernelResult<()> {
        self.set_return(Value::Int(v))
    }

    /// Stores a double result.
    pub fn set_return_double(&self, v: f64) -> KernelResult<()> {
        self.set_return(Value::Double(v))
    }

    /// Stores a bool result.
    pub fn set_return_bool(&self, v: bool) -> KernelResult<()> {
        self.set_return(Value::Bool(v))
    }

    /// Stores a scalar result as the matching value kind.
    pub fn set_return_scalar(&self, v: Scalar) -> KernelResult<()> {
        self.set_return(match v {
            Scalar::Bool(b) => Value::Bool(b),
            Scalar::Int(i) => Value::Int(i),
            Scalar::Double(d) => Value::Double(d),
        })
    }
}

fn list_len<T>(l: NonNull<BoxedList<T>>) -> usize {
    // SAFETY: list headers live in method memory for the method's lifetime.
    unsafe { l.as_ref().len }
}

impl fmt::Debug for KernelArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelArgs")
            .field("len", &self.len)
            .finish()
    }
}
