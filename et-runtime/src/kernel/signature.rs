//! What a kernel declares about its parameters ([`ArgKind`], [`ReturnKind`],
//! [`KernelSignature`]) and the check `load_method` runs on every KernelCall against it.

use crate::value::{Tag, Value};
use et_schema::scalar_type::DtypeSet;

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
    fn accepts(self, v: &Value) -> bool {
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
const ALL_KINDS: [ArgKind; 23] = {
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
    pub crate_name: CrateName,
    /// The tensor dtypes this kernel was compiled for: `DtypeSet::ALL` without a
    /// selection, else the dtypes the build's selection names for this operator. A
    /// fallback entry only serves calls whose tensor dtypes are all in this set.
    pub dtypes: DtypeSet,
}

/// The name of the crate that registered a kernel, held through one pointer: each
/// signature carries 8 bytes for it instead of a 16-byte `&str` (all of a crate's
/// signatures point at one copy of the name). Reads as a `str`.
#[derive(Clone, Copy)]
pub struct CrateName(pub &'static &'static str);

impl CrateName {
    /// The name.
    pub const fn as_str(self) -> &'static str {
        self.0
    }
}

impl core::ops::Deref for CrateName {
    type Target = str;

    fn deref(&self) -> &str {
        self.0
    }
}

impl core::fmt::Display for CrateName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.0)
    }
}

impl core::fmt::Debug for CrateName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::Debug::fmt(self.0, f)
    }
}

impl PartialEq<str> for CrateName {
    fn eq(&self, other: &str) -> bool {
        *self.0 == other
    }
}

impl PartialEq<&str> for CrateName {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq for CrateName {
    fn eq(&self, other: &CrateName) -> bool {
        self.0 == other.0
    }
}

/// How a call's values fail to fit a kernel's [`KernelSignature`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mismatch {
    /// The call passes `found` values; the kernel takes `expected` (parameters plus the
    /// return slot).
    Count { expected: usize, found: usize },
    /// The value for parameter `position` has kind `found`, which `expected` refuses.
    Kind {
        position: usize,
        expected: ArgKind,
        found: Tag,
    },
}

impl KernelSignature {
    /// Checks a call's values (parameters, then the return slot) against the declared
    /// parameters, so that a generated wrapper never meets a value of the wrong kind.
    /// `load_method` runs this once per KernelCall: inline, so that where the code
    /// generation units happen to split the crate does not decide whether the
    /// instruction decoder calls it.
    #[inline]
    pub(crate) fn check_call<'v>(
        &self,
        values: impl ExactSizeIterator<Item = &'v Value>,
    ) -> Result<(), Mismatch> {
        let found = values.len();
        let expected = self.args.len() + 1;
        // Out variants may omit the return slot (it would alias the out anyway).
        let omitted_return = self.returns == ReturnKind::Outs && found == self.args.len();
        if found != expected && !omitted_return {
            return Err(Mismatch::Count { expected, found });
        }
        for (position, (&kind, v)) in self.args.iter().zip(values).enumerate() {
            if !kind.accepts(v) {
                return Err(Mismatch::Kind {
                    position,
                    expected: kind,
                    found: v.tag(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use core::ptr::NonNull;

    use super::{ArgKind, ALL_KINDS};
    use crate::tensor::Tensor;
    use crate::value::{BoxedList, Value};

    /// The load-time signature check's table against the rule it encodes.
    #[test]
    fn argument_kinds_accept_exactly_their_values() {
        use ArgKind as K;
        let list = NonNull::<BoxedList<i64>>::dangling();
        let tlist = NonNull::<BoxedList<*const Tensor>>::dangling();
        let values = [
            Value::None,
            Value::Int(1),
            Value::Double(1.0),
            Value::Bool(true),
            Value::String(NonNull::dangling(), 0),
            Value::Tensor(NonNull::dangling()),
            Value::IntList(list),
            Value::DoubleList(NonNull::dangling(), 0),
            Value::BoolList(NonNull::dangling(), 0),
            Value::TensorList(tlist),
            Value::OptionalTensorList(tlist),
        ];
        for kind in ALL_KINDS {
            for v in &values {
                let none = matches!(v, Value::None);
                let want = match kind {
                    K::Tensor | K::TensorMut => matches!(v, Value::Tensor(_)),
                    K::OptionalTensor => none || matches!(v, Value::Tensor(_)),
                    K::TensorList | K::TensorListMut => matches!(v, Value::TensorList(_)),
                    K::OptionalTensorList => {
                        matches!(v, Value::OptionalTensorList(_) | Value::TensorList(_))
                    }
                    K::Scalar => v.as_scalar().is_some(),
                    K::OptionalScalar => none || v.as_scalar().is_some(),
                    K::Int | K::ScalarType => matches!(v, Value::Int(_)),
                    K::OptionalInt | K::OptionalScalarType => none || matches!(v, Value::Int(_)),
                    K::Double => matches!(v, Value::Double(_) | Value::Int(_)),
                    K::OptionalDouble => none || matches!(v, Value::Double(_) | Value::Int(_)),
                    K::Bool => matches!(v, Value::Bool(_)),
                    K::OptionalBool => none || matches!(v, Value::Bool(_)),
                    K::IntList => matches!(v, Value::IntList(_)),
                    K::OptionalIntList => none || matches!(v, Value::IntList(_)),
                    K::DoubleList => matches!(v, Value::DoubleList(..)),
                    K::OptionalDoubleList => none || matches!(v, Value::DoubleList(..)),
                    K::BoolList => matches!(v, Value::BoolList(..)),
                    K::String => matches!(v, Value::String(..)),
                    K::OptionalString => none || matches!(v, Value::String(..)),
                };
                assert_eq!(kind.accepts(v), want, "{kind:?} {:?}", v.tag());
            }
        }
    }
}
