//! Type promotion with PyTorch's rules: which dtype an operator computes in, and which
//! out dtypes may receive that result.
//!
//! PyTorch decides the result dtype of `a op b` in two steps:
//!
//! 1. [`promote_types`] is the lattice of dtypes: bool < integers < floats, wider wins,
//!    and the mixed cases `uint8 + int8 = int16`, `float16 + bfloat16 = float32`.
//! 2. [`ResultType`] applies it over an operator's operands by *category*: operands with
//!    dims outrank 0-dim tensors, which outrank `Scalar` arguments, unless a lower-ranked
//!    operand is of a higher category (bool < integral < floating). So `int32 [n] + int64
//!    0-dim` stays int32, `int32 [n] + 2.5` is float32 (a float `Scalar` promotes to the
//!    default dtype, float32), `float16 [n] + float32 0-dim` stays float16, and an int
//!    `Scalar` never widens an integer tensor.
//!
//! Kernels then compute in [`compute_dtype`] of the result (float16 in float32, integers in
//! int64 with wrap-around at the store) and check [`can_cast`] into the out dtype.

use et_runtime::{DtypeSet, KernelError, KernelResult, Scalar, ScalarType, Tensor};

use ScalarType::{BFloat16, Bool, Byte, Char, Double, Float, Half, Int, Long, Short};

/// The dtype of a binary operation between tensors of dtypes `a` and `b` (PyTorch's
/// `promote_types`), or `None` when PyTorch has no promotion for the pair (unsigned
/// 16/32/64-bit integers with signed ones, complex, quantized and bit types).
pub const fn promote_types(a: ScalarType, b: ScalarType) -> Option<ScalarType> {
    let (ka, kb) = (kind(a), kind(b));
    if matches!(ka, Kind::Other) || matches!(kb, Kind::Other) {
        return None;
    }
    if a as u8 == b as u8 {
        return Some(a);
    }
    Some(match (ka, kb) {
        (Kind::Bool, _) => b,
        (_, Kind::Bool) => a,
        (Kind::Float(ra), Kind::Float(rb)) => {
            // float16 and bfloat16 share rank 1; neither holds the other, so they meet at
            // float32.
            if ra == rb {
                Float
            } else if ra > rb {
                a
            } else {
                b
            }
        }
        (Kind::Float(_), _) => a,
        (_, Kind::Float(_)) => b,
        (Kind::Signed(ra), Kind::Signed(rb)) => {
            if ra > rb {
                a
            } else {
                b
            }
        }
        // uint8 with a signed type: int16 holds every uint8, so the result is the wider of
        // int16 and the signed type.
        (Kind::Unsigned(1), Kind::Signed(r)) | (Kind::Signed(r), Kind::Unsigned(1)) => {
            if r > 2 {
                if ka_is_signed(ka) {
                    a
                } else {
                    b
                }
            } else {
                Short
            }
        }
        (Kind::Unsigned(ra), Kind::Unsigned(rb)) => {
            if ra > rb {
                a
            } else {
                b
            }
        }
        _ => return None,
    })
}

const fn ka_is_signed(k: Kind) -> bool {
    matches!(k, Kind::Signed(_))
}

/// Promotion categories with a width rank inside each.
#[derive(Clone, Copy)]
enum Kind {
    Bool,
    /// Rank by width: 1 = 8-bit, 2 = 16, 3 = 32, 4 = 64.
    Unsigned(u8),
    Signed(u8),
    /// 1 = float16/bfloat16, 2 = float32, 3 = float64.
    Float(u8),
    Other,
}

const fn kind(t: ScalarType) -> Kind {
    match t {
        Bool => Kind::Bool,
        Byte => Kind::Unsigned(1),
        ScalarType::UInt16 => Kind::Unsigned(2),
        ScalarType::UInt32 => Kind::Unsigned(3),
        ScalarType::UInt64 => Kind::Unsigned(4),
        Char => Kind::Signed(1),
        Short => Kind::Signed(2),
        Int => Kind::Signed(3),
        Long => Kind::Signed(4),
        Half | BFloat16 => Kind::Float(1),
        Float => Kind::Float(2),
        Double => Kind::Float(3),
        _ => Kind::Other,
    }
}

/// Promotion category, ordered: bool < integral < floating.
const fn category(t: ScalarType) -> u8 {
    if t.is_floating() {
        2
    } else if t.is_integral(false) {
        1
    } else {
        0
    }
}

/// PyTorch's `result_type` over an operator's operands, fed one operand at a time.
///
/// ```ignore
/// let dtype = ResultType::new().tensor(a).tensor(b).finish()?;
/// let dtype = ResultType::new().tensor(a).scalar(other).finish()?;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct ResultType {
    dims: Option<ScalarType>,
    zero_dim: Option<ScalarType>,
    scalars: Option<ScalarType>,
    failed: bool,
}

impl ResultType {
    /// No operands yet.
    pub const fn new() -> Self {
        ResultType {
            dims: None,
            zero_dim: None,
            scalars: None,
            failed: false,
        }
    }

    /// Adds a tensor operand (a 0-dim tensor ranks below tensors with dims).
    pub fn tensor(self, t: &Tensor) -> Self {
        if t.dim() == 0 {
            self.zero_dim_dtype(t.dtype())
        } else {
            self.dtype(t.dtype())
        }
    }

    /// Adds an operand of dtype `t` that has dims.
    pub const fn dtype(mut self, t: ScalarType) -> Self {
        self.dims = self.join(self.dims, t);
        self
    }

    /// Adds a 0-dim tensor operand of dtype `t`.
    pub const fn zero_dim_dtype(mut self, t: ScalarType) -> Self {
        self.zero_dim = self.join(self.zero_dim, t);
        self
    }

    /// Adds a `Scalar` operand: an int counts as int64, a bool as bool and a double as the
    /// default float dtype (float32), the lowest priority of all.
    pub const fn scalar(mut self, s: Scalar) -> Self {
        let t = match s {
            Scalar::Bool(_) => Bool,
            Scalar::Int(_) => Long,
            Scalar::Double(_) => Float,
        };
        self.scalars = self.join(self.scalars, t);
        self
    }

    const fn join(&mut self, acc: Option<ScalarType>, t: ScalarType) -> Option<ScalarType> {
        match acc {
            None => {
                if matches!(kind(t), Kind::Other) {
                    self.failed = true;
                }
                Some(t)
            }
            Some(prev) => match promote_types(prev, t) {
                Some(p) => Some(p),
                None => {
                    self.failed = true;
                    Some(prev)
                }
            },
        }
    }

    /// The result dtype: the highest-priority operand group, unless a lower group is of a
    /// higher category (bool < integral < floating), in which case the lower group's dtype
    /// joins in.
    pub const fn finish(self) -> KernelResult<ScalarType> {
        if self.failed {
            return Err(KernelError::invalid("operand dtypes have no common type"));
        }
        let low = combine(self.zero_dim, self.scalars);
        match combine(self.dims, low) {
            Some(t) => Ok(t),
            None => Err(KernelError::invalid("operator has no operands")),
        }
    }
}

/// Joins a higher-priority group with a lower one (PyTorch's `combine_categories`).
const fn combine(higher: Option<ScalarType>, lower: Option<ScalarType>) -> Option<ScalarType> {
    match (higher, lower) {
        (None, l) => l,
        (h, None) => h,
        (Some(h), Some(l)) => {
            if category(l) > category(h) {
                // A float among integers, or an integer among bools: the lower group's
                // dtype wins its category (int32 [n] * 2.5 is float32, not float64).
                promote_types(h, l)
            } else {
                Some(h)
            }
        }
    }
}

/// The result dtype of two tensor operands.
// The common case always inline and the promotion out of line: left to the inliner, the
// whole function was sometimes outlined with its result returned through memory, a
// dozen instructions and a stack round trip on every elementwise call (dispatch on
// many_adds 9.5 -> 10.4 ns after an unrelated change moved code between units).
#[inline(always)]
pub fn result_type(a: &Tensor, b: &Tensor) -> KernelResult<ScalarType> {
    // Equal dtypes are the common case, and their result is that dtype whatever the ranks.
    let t = a.dtype();
    if t == b.dtype() && !matches!(kind(t), Kind::Other) {
        return Ok(t);
    }
    promoted(a, b)
}

/// [`result_type`] of operands that need promotion.
#[inline(never)]
fn promoted(a: &Tensor, b: &Tensor) -> KernelResult<ScalarType> {
    ResultType::new().tensor(a).tensor(b).finish()
}

/// The result dtype of a tensor and a `Scalar` operand.
#[inline]
pub fn result_type_scalar(a: &Tensor, b: Scalar) -> KernelResult<ScalarType> {
    // A scalar never changes the dtype of a tensor of its category or above.
    let t = a.dtype();
    let keeps = match b {
        Scalar::Double(_) => t.is_floating(),
        Scalar::Int(_) => t.is_floating() || t.is_integral(false),
        Scalar::Bool(_) => !matches!(kind(t), Kind::Other),
    };
    if keeps && !matches!(kind(t), Kind::Other) {
        return Ok(t);
    }
    ResultType::new().tensor(a).scalar(b).finish()
}

/// Whether PyTorch lets a result of dtype `from` be written to an out tensor of dtype
/// `to`: never float to integral, never a number to bool (bool to anything is fine).
pub const fn can_cast(from: ScalarType, to: ScalarType) -> bool {
    if from.is_floating() && to.is_integral(true) {
        return false;
    }
    if !matches!(from, Bool) && matches!(to, Bool) {
        return false;
    }
    true
}

/// The dtype an elementwise kernel computes a result of dtype `t` in: float16, bfloat16
/// and float32 in float32 (rounded once, at the store), float64 in float64, and bool and
/// integers in int64. Integer results wrap when stored, which equals computing in the
/// narrow type for `+ - *`, division and remainder of in-range operands.
pub const fn compute_dtype(t: ScalarType) -> ScalarType {
    match t {
        Double => Double,
        Half | BFloat16 | Float => Float,
        _ => Long,
    }
}

/// `t`, or float32 when `t` is bool or integral: the result dtype of operators that
/// promote integer inputs to the default float dtype (`div`, `exp`, `sigmoid`, ...).
pub const fn to_float(t: ScalarType) -> ScalarType {
    if t.is_floating() {
        t
    } else {
        Float
    }
}

/// The compute dtypes ([`compute_dtype`]) of a kernel's selected dtypes: the set to
/// `et_switch!` over when the switch picks a compute type.
pub const fn compute_set(sel: DtypeSet) -> DtypeSet {
    let mut out = DtypeSet::EMPTY;
    let mut i = 0;
    while i < ScalarType::ALL.len() {
        let t = ScalarType::ALL[i];
        if sel.contains(t) && !matches!(kind(t), Kind::Other) {
            out = out.with(compute_dtype(t));
        }
        i += 1;
    }
    out
}

/// The compute dtypes of a kernel that promotes integer inputs to float
/// ([`to_float`]): bool and integers select float32.
pub const fn float_compute_set(sel: DtypeSet) -> DtypeSet {
    let mut out = DtypeSet::EMPTY;
    let mut i = 0;
    while i < ScalarType::ALL.len() {
        let t = ScalarType::ALL[i];
        if sel.contains(t) && !matches!(kind(t), Kind::Other) {
            out = out.with(compute_dtype(to_float(t)));
        }
        i += 1;
    }
    out
}

/// Checks `alpha` (of `add`/`sub`) against the result dtype as PyTorch does: a bool alpha
/// only for bool results, a float alpha only for floating results.
pub fn check_alpha(result: ScalarType, alpha: Scalar) -> KernelResult {
    match alpha {
        Scalar::Bool(_) if result != Bool => Err(KernelError::invalid(
            "a bool alpha is only supported for bool results",
        )),
        Scalar::Double(_) if !result.is_floating() => Err(KernelError::invalid(
            "alpha must not be a float for integral inputs",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use et_runtime::TensorBuf;

    const ALL: [ScalarType; 10] = [
        Bool, Byte, Char, Short, Int, Long, Half, BFloat16, Float, Double,
    ];

    #[test]
    fn promote_table_matches_pytorch() {
        // Rows and columns in the order of ALL, from torch.promote_types.
        let expected = [
            //  b1    u8    i8     i16    i32   i64   f16    bf16      f32    f64
            [
                Bool, Byte, Char, Short, Int, Long, Half, BFloat16, Float, Double,
            ],
            [
                Byte, Byte, Short, Short, Int, Long, Half, BFloat16, Float, Double,
            ],
            [
                Char, Short, Char, Short, Int, Long, Half, BFloat16, Float, Double,
            ],
            [
                Short, Short, Short, Short, Int, Long, Half, BFloat16, Float, Double,
            ],
            [Int, Int, Int, Int, Int, Long, Half, BFloat16, Float, Double],
            [
                Long, Long, Long, Long, Long, Long, Half, BFloat16, Float, Double,
            ],
            [
                Half, Half, Half, Half, Half, Half, Half, Float, Float, Double,
            ],
            [
                BFloat16, BFloat16, BFloat16, BFloat16, BFloat16, BFloat16, Float, BFloat16, Float,
                Double,
            ],
            [
                Float, Float, Float, Float, Float, Float, Float, Float, Float, Double,
            ],
            [
                Double, Double, Double, Double, Double, Double, Double, Double, Double, Double,
            ],
        ];
        for (i, &a) in ALL.iter().enumerate() {
            for (j, &b) in ALL.iter().enumerate() {
                assert_eq!(promote_types(a, b), Some(expected[i][j]), "{a} {b}");
            }
        }
        assert_eq!(promote_types(ScalarType::UInt16, Char), None);
        assert_eq!(promote_types(ScalarType::ComplexFloat, Float), None);
    }

    fn t(dtype: ScalarType, sizes: &[usize]) -> TensorBuf {
        TensorBuf::zeros(dtype, sizes).unwrap()
    }

    #[test]
    fn result_type_categories() {
        let i32v = t(Int, &[3]);
        let i64_0 = t(Long, &[]);
        let f32_0 = t(Float, &[]);
        let f16v = t(Half, &[3]);
        let f64v = t(Double, &[3]);
        let b = t(Bool, &[3]);
        let u8v = t(Byte, &[3]);
        let i8v = t(Char, &[3]);
        // A 0-dim tensor of the same category does not widen.
        assert_eq!(result_type(&i32v, &i64_0), Ok(Int));
        assert_eq!(result_type(&f16v, &f32_0), Ok(Half));
        // ... but one of a higher category does, at its own dtype.
        assert_eq!(result_type(&i32v, &f32_0), Ok(Float));
        assert_eq!(result_type(&b, &i64_0), Ok(Long));
        // Scalars: an int never widens an integer tensor, a float is float32.
        assert_eq!(result_type_scalar(&u8v, Scalar::Int(1000)), Ok(Byte));
        assert_eq!(result_type_scalar(&i32v, Scalar::Double(0.5)), Ok(Float));
        assert_eq!(result_type_scalar(&f64v, Scalar::Double(0.5)), Ok(Double));
        assert_eq!(result_type_scalar(&f16v, Scalar::Double(0.5)), Ok(Half));
        assert_eq!(result_type_scalar(&b, Scalar::Int(2)), Ok(Long));
        assert_eq!(result_type_scalar(&b, Scalar::Bool(true)), Ok(Bool));
        // Two dimensioned tensors promote normally.
        assert_eq!(result_type(&u8v, &i8v), Ok(Short));
        assert_eq!(result_type(&i32v, &f16v), Ok(Half));
        // 0-dim only.
        assert_eq!(result_type(&i64_0, &f32_0), Ok(Float));
        assert_eq!(
            ResultType::new()
                .tensor(&i64_0)
                .scalar(Scalar::Double(1.0))
                .finish(),
            Ok(Float)
        );
    }

    #[test]
    fn casts_and_sets() {
        assert!(can_cast(Int, Float));
        assert!(can_cast(Bool, Long));
        assert!(!can_cast(Float, Int));
        assert!(!can_cast(Float, Bool));
        assert!(!can_cast(Int, Bool));
        assert!(can_cast(Double, Half));
        let sel = DtypeSet::EMPTY.with(Half).with(Int);
        assert_eq!(compute_set(sel), DtypeSet::EMPTY.with(Float).with(Long));
        assert_eq!(float_compute_set(sel), DtypeSet::EMPTY.with(Float));
        assert!(check_alpha(Int, Scalar::Double(1.0)).is_err());
        assert!(check_alpha(Int, Scalar::Bool(true)).is_err());
        assert!(check_alpha(Float, Scalar::Int(2)).is_ok());
    }
}
