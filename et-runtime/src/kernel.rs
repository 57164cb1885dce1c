//! The kernel calling convention: the context a kernel runs in, the argument unboxing
//! used by `#[kernel]`-generated wrappers, and the registry entry type.

use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of};
use core::ptr::NonNull;

use crate::error::{Error, KernelError, KernelResult};
use crate::memory::Arena;
use crate::scalar::Scalar;
use crate::scalar_type::{Element, ScalarType};
use crate::tensor::Tensor;
use crate::value::{BoxedList, Tag, Value, NONE_INDEX};

/// What a kernel can use besides its arguments: scratch memory for this instruction.
pub struct KernelContext<'a> {
    temp: &'a Arena<'a>,
}

impl<'a> KernelContext<'a> {
    /// A context whose scratch memory comes from `temp`.
    pub fn new(temp: &'a Arena<'a>) -> Self {
        KernelContext { temp }
    }

    /// Scratch space for `n` elements of `T`, valid until the instruction ends. The
    /// contents are unspecified (whatever the buffer held); every bit pattern is a valid
    /// `T`, so reading them is safe but meaningless.
    #[allow(
        clippy::mut_from_ref,
        reason = "bump allocation hands out disjoint regions"
    )]
    pub fn alloc_temp<T: Element>(&self, n: usize) -> KernelResult<&mut [T]> {
        let bytes = n.checked_mul(size_of::<T>()).ok_or(KernelError::new(
            Error::MemoryAllocationFailed,
            "scratch request overflows",
        ))?;
        let ptr = self
            .temp
            .allocate(bytes, align_of::<T>().max(16))
            .map_err(|_| {
                KernelError::new(Error::MemoryAllocationFailed, "scratch memory exhausted")
            })?;
        // SAFETY: the arena returned `bytes` fresh, aligned bytes that no other allocation
        // overlaps; they are initialized bytes of the caller's buffer and every bit pattern
        // is a valid `T` (`Element` contract). The slice borrows `self`, and the arena is
        // only reset by the method after the kernel returned.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr.cast::<T>().as_ptr(), n) })
    }
}

impl fmt::Debug for KernelContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelContext")
            .field("temp", self.temp)
            .finish()
    }
}

/// How a kernel parameter is passed; `load_method` checks each KernelCall's values
/// against these before the first `execute`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArgKind {
    /// `&Tensor`.
    Tensor,
    /// `&mut Tensor`: an out (or in-place) argument.
    TensorMut,
    /// `Option<&Tensor>`: a tensor or None.
    OptionalTensor,
    /// `&[&Tensor]`.
    TensorList,
    /// A list of out tensors (`Tensor(a!)[] out`).
    TensorListMut,
    /// `&[Option<&Tensor>]`.
    OptionalTensorList,
    /// `Scalar`: an int, double or bool.
    Scalar,
    /// `Option<Scalar>`.
    OptionalScalar,
    /// `i64` (also `MemoryFormat`, `Layout`).
    Int,
    /// `Option<i64>`.
    OptionalInt,
    /// `f64` (an int value is accepted too).
    Double,
    /// `Option<f64>`.
    OptionalDouble,
    /// `bool`.
    Bool,
    /// `Option<bool>`.
    OptionalBool,
    /// `&[i64]`.
    IntList,
    /// `Option<&[i64]>`.
    OptionalIntList,
    /// `&[f64]`.
    DoubleList,
    /// `Option<&[f64]>`.
    OptionalDoubleList,
    /// `&[bool]`.
    BoolList,
    /// `ScalarType` (passed as an int).
    ScalarType,
    /// `Option<ScalarType>`.
    OptionalScalarType,
    /// `&str`.
    String,
    /// `Option<&str>`.
    OptionalString,
}

impl ArgKind {
    /// A phrase for messages ("a tensor", "an optional int list", ...).
    pub const fn describe(self) -> &'static str {
        match self {
            ArgKind::Tensor => "a tensor",
            ArgKind::TensorMut => "an out tensor",
            ArgKind::OptionalTensor => "an optional tensor",
            ArgKind::TensorList => "a tensor list",
            ArgKind::TensorListMut => "an out tensor list",
            ArgKind::OptionalTensorList => "an optional tensor list",
            ArgKind::Scalar => "a scalar",
            ArgKind::OptionalScalar => "an optional scalar",
            ArgKind::Int => "an int",
            ArgKind::OptionalInt => "an optional int",
            ArgKind::Double => "a double",
            ArgKind::OptionalDouble => "an optional double",
            ArgKind::Bool => "a bool",
            ArgKind::OptionalBool => "an optional bool",
            ArgKind::IntList => "an int list",
            ArgKind::OptionalIntList => "an optional int list",
            ArgKind::DoubleList => "a double list",
            ArgKind::OptionalDoubleList => "an optional double list",
            ArgKind::BoolList => "a bool list",
            ArgKind::ScalarType => "a dtype (int)",
            ArgKind::OptionalScalarType => "an optional dtype",
            ArgKind::String => "a string",
            ArgKind::OptionalString => "an optional string",
        }
    }

    /// Whether a value of this kind can be passed for this parameter.
    pub(crate) fn accepts(self, v: &Value) -> bool {
        // (A kind missing from `ALL_KINDS` accepts nothing rather than panicking.)
        ACCEPTED
            .get(self as usize)
            .is_some_and(|m| m >> v.tag() as u8 & 1 != 0)
    }

    /// The value kinds a parameter of this kind accepts, one bit per [`Tag`].
    const fn accepted(self) -> u16 {
        use ArgKind as K;
        const fn bits(tags: &[Tag]) -> u16 {
            let mut m = 0;
            let mut i = 0;
            while i < tags.len() {
                m |= 1 << tags[i] as u8;
                i += 1;
            }
            m
        }
        let none = bits(&[Tag::None]);
        let scalar = bits(&[Tag::Int, Tag::Double, Tag::Bool]);
        let number = bits(&[Tag::Int, Tag::Double]);
        match self {
            K::Tensor | K::TensorMut => bits(&[Tag::Tensor]),
            K::OptionalTensor => none | bits(&[Tag::Tensor]),
            K::TensorList | K::TensorListMut => bits(&[Tag::ListTensor]),
            K::OptionalTensorList => bits(&[Tag::ListOptionalTensor, Tag::ListTensor]),
            K::Scalar => scalar,
            K::OptionalScalar => none | scalar,
            K::Int | K::ScalarType => bits(&[Tag::Int]),
            K::OptionalInt | K::OptionalScalarType => none | bits(&[Tag::Int]),
            K::Double => number,
            K::OptionalDouble => none | number,
            K::Bool => bits(&[Tag::Bool]),
            K::OptionalBool => none | bits(&[Tag::Bool]),
            K::IntList => bits(&[Tag::ListInt]),
            K::OptionalIntList => none | bits(&[Tag::ListInt]),
            K::DoubleList => bits(&[Tag::ListDouble]),
            K::OptionalDoubleList => none | bits(&[Tag::ListDouble]),
            K::BoolList => bits(&[Tag::ListBool]),
            K::String => bits(&[Tag::String]),
            K::OptionalString => none | bits(&[Tag::String]),
        }
    }
}

/// Every [`ArgKind`], for building [`ACCEPTED`] (order does not matter).
pub(crate) const ALL_KINDS: [ArgKind; 23] = {
    use ArgKind as K;
    [
        K::Tensor,
        K::TensorMut,
        K::OptionalTensor,
        K::TensorList,
        K::TensorListMut,
        K::OptionalTensorList,
        K::Scalar,
        K::OptionalScalar,
        K::Int,
        K::OptionalInt,
        K::Double,
        K::OptionalDouble,
        K::Bool,
        K::OptionalBool,
        K::IntList,
        K::OptionalIntList,
        K::DoubleList,
        K::OptionalDoubleList,
        K::BoolList,
        K::ScalarType,
        K::OptionalScalarType,
        K::String,
        K::OptionalString,
    ]
};

/// [`ArgKind::accepted`] of each kind, indexed by the kind's discriminant: the load-time
/// signature check is a table lookup rather than a match per kind.
static ACCEPTED: [u16; ALL_KINDS.len()] = {
    let mut t = [0u16; ALL_KINDS.len()];
    let mut i = 0;
    while i < ALL_KINDS.len() {
        let k = ALL_KINDS[i];
        // Every kind is listed once (a duplicate would leave another kind's entry empty).
        assert!(t[k as usize] == 0);
        t[k as usize] = k.accepted();
        i += 1;
    }
    t
};

/// What a kernel does with the call's last value (the return slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReturnKind {
    /// Out variants: the return slot aliases the out argument(s) and is left alone.
    Outs,
    /// The kernel writes an int into the return slot.
    Int,
    /// The kernel writes a double into the return slot.
    Double,
    /// The kernel writes a bool into the return slot.
    Bool,
    /// The kernel writes a scalar into the return slot.
    Scalar,
    /// The kernel computes the return tensor in place (prim ops such as `et_view`).
    Tensor,
}

/// A kernel's declared parameters, checked against each call at load.
#[derive(Debug)]
pub struct KernelSignature {
    /// One entry per parameter after the context, in operator-argument order.
    pub args: &'static [ArgKind],
    /// How the return slot is used.
    pub returns: ReturnKind,
    /// The crate that registered the kernel (for `etch kernels`).
    pub crate_name: &'static str,
    /// The tensor dtypes this kernel was compiled for: `DtypeSet::ALL` without a
    /// selection, else the dtypes the build's selection names for this operator. A
    /// fallback entry only serves calls whose tensor dtypes are all in this set.
    pub dtypes: crate::DtypeSet,
}

/// The boxed calling convention every registered kernel has.
pub type KernelFn = for<'a, 'b> fn(&'b KernelContext<'a>, &'b KernelArgs<'a>) -> KernelResult;

/// Which calls an entry serves, besides its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DtypeKey(u8);

impl DtypeKey {
    /// Serves any call of its operator that no dtype-specific entry serves.
    pub const FALLBACK: DtypeKey = DtypeKey(u8::MAX);

    /// Serves calls whose tensor arguments all have dtype `t`.
    pub const fn of(t: ScalarType) -> DtypeKey {
        DtypeKey(t as u8)
    }

    /// The dtype, or `None` for the fallback.
    pub const fn dtype(self) -> Option<ScalarType> {
        ScalarType::from_i8(self.0 as i8)
    }
}

/// One registered kernel: an element of `et_runtime::__private::KERNELS`.
///
/// Forty bytes on 64-bit targets: the name, a precomputed hash, the dtype key, the boxed
/// function and a pointer to the argument-kind descriptor.
#[derive(Debug)]
pub struct KernelEntry {
    /// `namespace::op.overload`, as in the program.
    pub name: &'static str,
    /// [`op_hash`] of the name, compared before the name itself.
    pub hash: u32,
    /// Which calls the entry serves.
    pub dtype: DtypeKey,
    /// The boxed wrapper.
    pub function: KernelFn,
    /// Declared parameters.
    pub signature: &'static KernelSignature,
}

pub use et_schema::op_name::{op_hash, op_hash_parts};

/// A kernel call's arguments, as the generated wrapper unboxes them.
///
/// Indices were range-checked at load. Every accessor checks the value's current kind
/// and fails with `InvalidProgram` on a mismatch, so a malformed program can never be
/// misread.
pub struct KernelArgs<'a> {
    values: NonNull<Value>,
    args: NonNull<u32>,
    len: usize,
    params: usize,
    /// The method proved at load that no out argument of this call can alias another
    /// argument, so `tensor_mut` need not check again.
    prechecked: bool,
    _method: PhantomData<&'a mut Value>,
}

fn wrong_kind() -> KernelError {
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

    /// As [`new`](Self::new), for a call whose out arguments were shown by
    /// [`outs_are_exclusive`](Self::outs_are_exclusive) not to alias anything.
    ///
    /// # Safety
    /// As for `new`; and since that check, no tensor may have been rebound to other data
    /// or shared between values (the method only uses this when it has no MoveCall and no
    /// view op), and tensors only ever shrink within their bound.
    pub(crate) unsafe fn new_prechecked(
        values: NonNull<Value>,
        args: &'a [u32],
        params: usize,
    ) -> Self {
        KernelArgs {
            prechecked: true,
            // SAFETY: the caller upholds `new`'s contract.
            ..unsafe { Self::new(values, args, params) }
        }
    }

    /// Whether every out parameter (per `kinds`) is exclusive: the check `tensor_mut`
    /// would make, done once at load for calls whose aliasing cannot change.
    pub(crate) fn outs_are_exclusive(&self, kinds: &[ArgKind]) -> bool {
        kinds.iter().enumerate().all(|(i, kind)| match kind {
            ArgKind::TensorMut => match self.value(i) {
                Ok(Value::Tensor(t)) => self.check_exclusive(i, t.as_ptr()).is_ok(),
                _ => false,
            },
            ArgKind::TensorListMut => self.tensor_list(i).is_ok_and(|items| {
                items.iter().enumerate().all(|(k, t)| {
                    self.check_exclusive(i, *t as *const Tensor as *mut Tensor)
                        .is_ok()
                        && !items[..k].iter().any(|u| overlaps(t, u))
                })
            }),
            _ => true,
        })
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

    fn value_at_index(&self, idx: u32) -> Value {
        // SAFETY: every index was range-checked against the value table at load.
        unsafe { *self.values.as_ptr().add(idx as usize) }
    }

    fn value(&self, i: usize) -> KernelResult<Value> {
        Ok(self.value_at_index(self.index(i)?))
    }

    fn value_ptr(&self, i: usize) -> KernelResult<*mut Value> {
        let idx = self.index(i)?;
        // SAFETY: as in `value_at_index`.
        Ok(unsafe { self.values.as_ptr().add(idx as usize) })
    }

    /// A tensor argument.
    pub fn tensor(&self, i: usize) -> KernelResult<&'a Tensor> {
        match self.value(i)? {
            // SAFETY: tensors live in method memory for 'a; no `&mut` to this tensor can
            // exist in the same call, because `tensor_mut` refuses tensors that appear at
            // any other position.
            Value::Tensor(t) => Ok(unsafe { t.as_ref() }),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional tensor argument.
    pub fn opt_tensor(&self, i: usize) -> KernelResult<Option<&'a Tensor>> {
        match self.value(i)? {
            Value::None => Ok(None),
            _ => self.tensor(i).map(Some),
        }
    }

    /// An out (or in-place) tensor argument.
    ///
    /// Fails if the tensor, or memory overlapping its data, is also passed at another
    /// parameter position, so the `&mut` never aliases another argument.
    ///
    /// # Safety
    /// The caller must not obtain position `i` again (shared or mutable) while the result
    /// lives. Generated wrappers take each position exactly once.
    pub unsafe fn tensor_mut(&self, i: usize) -> KernelResult<&'a mut Tensor> {
        let t = match self.value(i)? {
            Value::Tensor(t) => t,
            _ => return Err(wrong_kind()),
        };
        if !self.prechecked {
            self.check_exclusive(i, t.as_ptr())?;
        }
        // SAFETY: no other parameter position refers to this tensor or overlaps its data
        // (checked above, or at load for a call whose aliasing cannot change), and the
        // caller does not take position `i` twice.
        Ok(unsafe { &mut *t.as_ptr() })
    }

    /// An out tensor whose data the caller will not touch (only its shape and data
    /// pointer), so only tensor identity is checked, not data overlap: view ops alias
    /// their input's memory by design.
    ///
    /// # Safety
    /// As for [`tensor_mut`](Self::tensor_mut); additionally the caller must not read or
    /// write the tensor's data through the result.
    pub(crate) unsafe fn tensor_mut_for_view(&self, i: usize) -> KernelResult<&'a mut Tensor> {
        let t = match self.value(i)? {
            Value::Tensor(t) => t,
            _ => return Err(wrong_kind()),
        };
        for j in 0..self.params.min(self.len) {
            if j != i && matches!(self.value(j)?, Value::Tensor(u) if u == t) {
                return Err(KernelError::invalid("a view's output is also its input"));
            }
        }
        // SAFETY: no other parameter position refers to this tensor struct (checked), the
        // caller takes position `i` once and does not touch the data through it.
        Ok(unsafe { &mut *t.as_ptr() })
    }

    /// Out tensors passed as a list (`Tensor(a!)[] out`).
    ///
    /// # Safety
    /// As for [`tensor_mut`](Self::tensor_mut).
    pub unsafe fn tensor_list_mut(&self, i: usize) -> KernelResult<TensorListMut<'a>> {
        let items = self.tensor_list(i)?;
        for (k, t) in items.iter().enumerate().filter(|_| !self.prechecked) {
            let p = *t as *const Tensor as *mut Tensor;
            self.check_exclusive(i, p)?;
            if items[..k].iter().any(|u| overlaps(t, u)) {
                return Err(KernelError::invalid(
                    "an out tensor appears twice in an out list",
                ));
            }
        }
        Ok(TensorListMut {
            items: items.as_ptr() as *const *mut Tensor,
            len: items.len(),
            _m: PhantomData,
        })
    }

    /// Checks that tensor `t`, passed at position `i`, is not reachable from any other
    /// parameter position and does not share data with one.
    fn check_exclusive(&self, i: usize, t: *mut Tensor) -> KernelResult<()> {
        // SAFETY: `t` points at a live tensor of the method; reading its metadata is fine.
        let target = unsafe { &*t };
        // The target's byte range once; an empty or unbound target only clashes by identity.
        let (t0, t1) = target.byte_range();
        let has_data = !target.data_ptr().is_null() && t0 < t1;
        let clashes = |u: NonNull<Tensor>| {
            u.as_ptr() == t
                || has_data && {
                    let u = unsafe_ref(u);
                    let (u0, u1) = u.byte_range();
                    !u.data_ptr().is_null() && u0 < u1 && t0 < u1 && u0 < t1
                }
        };
        for j in 0..self.params.min(self.len) {
            if j == i {
                continue;
            }
            let clash = match self.value(j)? {
                Value::Tensor(u) => clashes(u),
                Value::TensorList(l) | Value::OptionalTensorList(l) => {
                    // SAFETY: list headers live in method memory for 'a.
                    let l = unsafe { l.as_ref() };
                    (0..l.len).any(|k| {
                        // SAFETY: `indices` holds `len` range-checked entries.
                        let idx = unsafe { *l.indices.as_ptr().add(k) };
                        idx != NONE_INDEX
                            && matches!(self.value_at_index(idx), Value::Tensor(u) if clashes(u))
                    })
                }
                _ => false,
            };
            if clash {
                return Err(KernelError::invalid(
                    "an out tensor aliases another argument of the same call",
                ));
            }
        }
        Ok(())
    }

    /// A tensor-list argument.
    pub fn tensor_list(&self, i: usize) -> KernelResult<&'a [&'a Tensor]> {
        let list = match self.value(i)? {
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
        let (list, allow_none) = match self.value(i)? {
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
        self.value(i)?.as_scalar().ok_or_else(wrong_kind)
    }

    /// An optional scalar argument.
    pub fn opt_scalar(&self, i: usize) -> KernelResult<Option<Scalar>> {
        match self.value(i)? {
            Value::None => Ok(None),
            v => v.as_scalar().map(Some).ok_or_else(wrong_kind),
        }
    }

    /// An int argument.
    pub fn int(&self, i: usize) -> KernelResult<i64> {
        match self.value(i)? {
            Value::Int(v) => Ok(v),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional int argument.
    pub fn opt_int(&self, i: usize) -> KernelResult<Option<i64>> {
        match self.value(i)? {
            Value::None => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            _ => Err(wrong_kind()),
        }
    }

    /// A double argument (an int value converts).
    pub fn double(&self, i: usize) -> KernelResult<f64> {
        match self.value(i)? {
            Value::Double(v) => Ok(v),
            Value::Int(v) => Ok(v as f64),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional double argument.
    pub fn opt_double(&self, i: usize) -> KernelResult<Option<f64>> {
        match self.value(i)? {
            Value::None => Ok(None),
            _ => self.double(i).map(Some),
        }
    }

    /// A bool argument.
    pub fn bool(&self, i: usize) -> KernelResult<bool> {
        match self.value(i)? {
            Value::Bool(v) => Ok(v),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional bool argument.
    pub fn opt_bool(&self, i: usize) -> KernelResult<Option<bool>> {
        match self.value(i)? {
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
        match self.value(i)? {
            Value::None => Ok(None),
            _ => self.scalar_type(i).map(Some),
        }
    }

    /// An int-list argument, re-read from its items (which prim ops may have rewritten).
    pub fn int_list(&self, i: usize) -> KernelResult<&'a [i64]> {
        let list = match self.value(i)? {
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
        match self.value(i)? {
            Value::None => Ok(None),
            _ => self.int_list(i).map(Some),
        }
    }

    /// A double-list argument.
    pub fn double_list(&self, i: usize) -> KernelResult<&'a [f64]> {
        match self.value(i)? {
            // SAFETY: inline lists were copied into method memory at load; read-only.
            Value::DoubleList(p, n) => Ok(unsafe { core::slice::from_raw_parts(p.as_ptr(), n) }),
            _ => Err(wrong_kind()),
        }
    }

    /// An optional double-list argument.
    pub fn opt_double_list(&self, i: usize) -> KernelResult<Option<&'a [f64]>> {
        match self.value(i)? {
            Value::None => Ok(None),
            _ => self.double_list(i).map(Some),
        }
    }

    /// A bool-list argument.
    pub fn bool_list(&self, i: usize) -> KernelResult<&'a [bool]> {
        match self.value(i)? {
            // SAFETY: copied into method memory at load, each byte validated as 0 or 1.
            Value::BoolList(p, n) => Ok(unsafe { core::slice::from_raw_parts(p.as_ptr(), n) }),
            _ => Err(wrong_kind()),
        }
    }

    /// A string argument.
    pub fn string(&self, i: usize) -> KernelResult<&'a str> {
        match self.value(i)? {
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
        match self.value(i)? {
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

fn unsafe_ref<'x>(t: NonNull<Tensor>) -> &'x Tensor {
    // SAFETY: used only for metadata reads of live method tensors inside alias checks.
    unsafe { t.as_ref() }
}

/// True when two tensors' data ranges share a byte (empty ranges never overlap).
fn overlaps(a: &Tensor, b: &Tensor) -> bool {
    if a.data_ptr().is_null() || b.data_ptr().is_null() {
        return false;
    }
    let (a0, a1) = a.byte_range();
    let (b0, b1) = b.byte_range();
    a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1
}

impl fmt::Debug for KernelArgs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KernelArgs")
            .field("len", &self.len)
            .finish()
    }
}

/// Out tensors passed as one list; each is lent out mutably in turn.
pub struct TensorListMut<'a> {
    items: *const *mut Tensor,
    len: usize,
    _m: PhantomData<&'a mut Tensor>,
}

impl<'a> TensorListMut<'a> {
    /// Number of out tensors.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Out tensor `i`, or `None` past the end.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Tensor> {
        if i >= self.len {
            return None;
        }
        // SAFETY: `i < len`; the items are distinct, non-overlapping tensors no other
        // argument refers to (checked when the list was unboxed), and `&mut self` lends
        // out one at a time.
        Some(unsafe { &mut **self.items.add(i) })
    }

    /// Out tensor `i`, shared.
    pub fn get(&self, i: usize) -> Option<&Tensor> {
        if i >= self.len {
            return None;
        }
        // SAFETY: as in `get_mut`, shared.
        Some(unsafe { &**self.items.add(i) })
    }
}

impl fmt::Debug for TensorListMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TensorListMut")
            .field("len", &self.len)
            .finish()
    }
}
