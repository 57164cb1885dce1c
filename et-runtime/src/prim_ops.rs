//! The primitive operators ExecuTorch always registers: symbolic-shape arithmetic on
//! scalars, `sym_size`/`sym_numel`, `et_view` and `et_copy_index`. They live in the same
//! registry slice as library kernels.

use crate::error::{Error, KernelError, KernelResult};
use crate::kernel::{
    op_hash, ArgKind, DtypeKey, KernelArgs, KernelContext, KernelEntry, KernelSignature, ReturnKind,
};
use crate::scalar::Scalar;
use crate::scalar_type::ScalarType;
use crate::tensor::MAX_DIM;

macro_rules! prim {
    ($id:ident, $name:literal, $sig:expr, $f:path) => {
        #[linkme::distributed_slice(crate::__private::KERNELS)]
        #[linkme(crate = linkme)]
        pub(crate) static $id: KernelEntry = KernelEntry {
            name: $name,
            hash: op_hash($name),
            dtype: DtypeKey::FALLBACK,
            function: $f,
            signature: $sig,
        };
    };
}

/// The signatures prim ops share (one static each, however many entries use it).
macro_rules! signatures {
    ($($sig:ident: [$($kind:ident),*] -> $ret:ident;)*) => {$(
        static $sig: KernelSignature = KernelSignature {
            args: &[$(ArgKind::$kind),*],
            returns: ReturnKind::$ret,
            crate_name: "et-runtime",
            dtypes: crate::DtypeSet::ALL,
        };
    )*};
}

signatures! {
    TENSOR_INT_TO_INT: [Tensor, Int] -> Int;
    TENSOR_TO_INT: [Tensor] -> Int;
    TENSOR_TO_SCALAR: [Tensor] -> Scalar;
    SCALARS_TO_SCALAR: [Scalar, Scalar] -> Scalar;
    SCALARS_TO_DOUBLE: [Scalar, Scalar] -> Double;
    SCALARS_TO_BOOL: [Scalar, Scalar] -> Bool;
    INTS_TO_INT: [Int, Int] -> Int;
    SCALAR_TO_SCALAR: [Scalar] -> Scalar;
    SCALAR_TO_DOUBLE: [Scalar] -> Double;
    SCALAR_TO_INT: [Scalar] -> Int;
    SCALAR_TO_BOOL: [Scalar] -> Bool;
    TERNARY: [Scalar, Scalar, Scalar] -> Scalar;
    VIEW: [Tensor, IntList, TensorMut] -> Outs;
    COPY_INDEX: [TensorMut, Tensor, Int] -> Outs;
}

/// The scalar prim ops (and `sym_size`/`sym_numel`), all run by [`scalar_prim`]: each
/// registered function is a two-instruction thunk naming its operation, so the shared
/// argument unboxing and result boxing exist once.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    // Binary on scalars, result by promotion (int when both are integral).
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Max,
    Min,
    // Binary on scalars, other results.
    TrueDiv,
    Eq,
    Gt,
    Lt,
    Ge,
    Le,
    // Binary on ints.
    FloorDivInt,
    ModInt,
    // Unary on a scalar.
    Neg,
    SymFloat,
    SymInt,
    SymNot,
    Ceil,
    Round,
    Trunc,
    // Ternary.
    SymIte,
    // On a tensor.
    SymSize,
    SymNumel,
}

/// Runs scalar prim op `op` on `args` and stores its result in the return slot.
#[inline(never)]
fn scalar_prim(op: Op, args: &KernelArgs<'_>) -> KernelResult {
    use Op::*;
    let r = if matches!(op, SymSize | SymNumel) {
        let t = args.tensor(0)?;
        let n = if op == SymNumel {
            t.numel()
        } else {
            let sizes = t.sizes();
            let r = sizes.len() as i64;
            let dim = args.int(1)?;
            let d = if dim < 0 { dim.wrapping_add(r) } else { dim };
            if d < 0 || d >= r.max(1) {
                return Err(KernelError::invalid("dimension out of range"));
            }
            sizes.get(d as usize).copied().unwrap_or(1)
        };
        Scalar::Int(
            i64::try_from(n).map_err(|_| KernelError::invalid("size does not fit in an int"))?,
        )
    } else {
        let a = args.scalar(0)?;
        // The second operand: the picked branch for `sym_ite`, none for unary ops.
        let second = match op {
            SymIte => Some(if a.to_bool() { 1 } else { 2 }),
            Neg | SymFloat | SymInt | SymNot | Ceil | Round | Trunc => None,
            _ => Some(1),
        };
        let b = match second {
            Some(i) => args.scalar(i)?,
            None => a,
        };
        match compute(op, a, b) {
            Some(r) => r,
            None => return Err(failure(op, a, b)),
        }
    };
    args.set_return_scalar(r)
}

/// The result of scalar op `op` on `a` and `b` (`b` is `a` for unary ops, the picked
/// branch for `sym_ite`); `None` when the op fails (see [`failure`]).
#[inline(never)]
fn compute(op: Op, a: Scalar, b: Scalar) -> Option<Scalar> {
    use Op::*;
    use Scalar::{Bool, Double, Int};
    let integral = a.is_integral() && b.is_integral();
    let (i, j) = (a.to_i64(), b.to_i64());
    let (x, y) = (a.to_f64(), b.to_f64());
    Some(match op {
        FloorDivInt | ModInt => match (a, b) {
            (Int(_), Int(_)) => Int(int_div(op == ModInt, i, j)?),
            _ => return None,
        },
        Eq | Gt | Lt | Ge | Le => {
            let ord = if integral {
                Some(i.cmp(&j))
            } else {
                x.partial_cmp(&y)
            };
            Bool(ord.is_some_and(|o| match op {
                Eq => o.is_eq(),
                Gt => o.is_gt(),
                Lt => o.is_lt(),
                Ge => o.is_ge(),
                _ => o.is_le(),
            }))
        }
        TrueDiv => Double(x / y),
        Add | Sub | Mul | FloorDiv | Mod | Max | Min if integral => Int(match op {
            Add => i.wrapping_add(j),
            Sub => i.wrapping_sub(j),
            Mul => i.wrapping_mul(j),
            Max => i.max(j),
            Min => i.min(j),
            _ => int_div(op == Mod, i, j)?,
        }),
        Add => Double(x + y),
        Sub => Double(x - y),
        Mul => Double(x * y),
        FloorDiv => Double(floor_f64(x / y)),
        Mod => Double(x - floor_f64(x / y) * y),
        Max | Min if x.is_nan() || y.is_nan() => Double(f64::NAN),
        Max => Double(x.max(y)),
        Min => Double(x.min(y)),
        Neg => match a {
            Double(d) => Double(-d),
            _ => Int(i.wrapping_neg()),
        },
        SymFloat => Double(x),
        SymInt => Int(i),
        SymNot => Bool(!a.to_bool()),
        SymIte => b,
        // Rounding an integral value keeps it; a double rounds (and must be finite).
        _ if a.is_integral() => Int(i),
        _ if !x.is_finite() => return None,
        Ceil => Int(-floor_f64(-x) as i64),
        Round => {
            // Half to even.
            let f = floor_f64(x);
            let diff = x - f;
            let odd = (f as i64) % 2 != 0;
            Int((if diff > 0.5 || (diff == 0.5 && odd) {
                f + 1.0
            } else {
                f
            }) as i64)
        }
        _ => Int(i),
    })
}

/// Why `compute` failed for these operands.
#[cold]
#[inline(never)]
fn failure(op: Op, a: Scalar, b: Scalar) -> KernelError {
    use Op::*;
    match op {
        FloorDivInt | ModInt if !matches!((a, b), (Scalar::Int(_), Scalar::Int(_))) => {
            KernelError::new(
                Error::InvalidProgram,
                "argument has the wrong type for this kernel",
            )
        }
        Mod | ModInt => KernelError::invalid("integer modulo by zero"),
        FloorDiv | FloorDivInt => KernelError::invalid("integer division by zero"),
        _ => KernelError::invalid("cannot round a non-finite value to an int"),
    }
}

/// Python's floor division (`modulo == false`, rounds toward negative infinity) or
/// modulo (`modulo == true`, the result takes the divisor's sign) of integers; `None`
/// for a zero divisor.
fn int_div(modulo: bool, a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let (q, r) = (a.wrapping_div(b), a.wrapping_rem(b));
    let adjust = r != 0 && ((r < 0) != (b < 0));
    Some(match (modulo, adjust) {
        (false, false) => q,
        (false, true) => q - 1,
        (true, false) => r,
        (true, true) => r + b,
    })
}

/// `x` rounded toward negative infinity (as an `i64` round trip, like ExecuTorch's
/// integer-valued floor).
#[inline(never)]
fn floor_f64(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

macro_rules! scalar_prims {
    ($($id:ident, $fname:ident, $name:literal, $sig:ident, $op:ident;)*) => {$(
        fn $fname(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
            scalar_prim(Op::$op, args)
        }
        prim!($id, $name, &$sig, $fname);
    )*};
}

scalar_prims! {
    SYM_SIZE, sym_size, "aten::sym_size.int", TENSOR_INT_TO_INT, SymSize;
    SYM_NUMEL, sym_numel, "aten::sym_numel", TENSOR_TO_INT, SymNumel;
    ADD_SCALAR, add_scalar, "executorch_prim::add.Scalar", SCALARS_TO_SCALAR, Add;
    SUB_SCALAR, sub_scalar, "executorch_prim::sub.Scalar", SCALARS_TO_SCALAR, Sub;
    MUL_SCALAR, mul_scalar, "executorch_prim::mul.Scalar", SCALARS_TO_SCALAR, Mul;
    FLOORDIV_SCALAR, floordiv_scalar, "executorch_prim::floordiv.Scalar", SCALARS_TO_SCALAR, FloorDiv;
    MOD_SCALAR, mod_scalar, "executorch_prim::mod.Scalar", SCALARS_TO_SCALAR, Mod;
    SYM_MAX_SCALAR, sym_max_scalar, "executorch_prim::sym_max.Scalar", SCALARS_TO_SCALAR, Max;
    SYM_MIN_SCALAR, sym_min_scalar, "executorch_prim::sym_min.Scalar", SCALARS_TO_SCALAR, Min;
    TRUEDIV_SCALAR, truediv_scalar, "executorch_prim::truediv.Scalar", SCALARS_TO_DOUBLE, TrueDiv;
    FLOORDIV_INT, floordiv_int, "executorch_prim::floordiv.int", INTS_TO_INT, FloorDivInt;
    MOD_INT, mod_int_op, "executorch_prim::mod.int", INTS_TO_INT, ModInt;
    EQ_SCALAR, eq_scalar, "executorch_prim::eq.Scalar", SCALARS_TO_BOOL, Eq;
    GT_SCALAR, gt_scalar, "executorch_prim::gt.Scalar", SCALARS_TO_BOOL, Gt;
    LT_SCALAR, lt_scalar, "executorch_prim::lt.Scalar", SCALARS_TO_BOOL, Lt;
    GE_SCALAR, ge_scalar, "executorch_prim::ge.Scalar", SCALARS_TO_BOOL, Ge;
    LE_SCALAR, le_scalar, "executorch_prim::le.Scalar", SCALARS_TO_BOOL, Le;
    NEG_SCALAR, neg_scalar, "executorch_prim::neg.Scalar", SCALAR_TO_SCALAR, Neg;
    SYM_FLOAT, sym_float, "executorch_prim::sym_float.Scalar", SCALAR_TO_DOUBLE, SymFloat;
    SYM_INT, sym_int, "executorch_prim::sym_int.Scalar", SCALAR_TO_INT, SymInt;
    SYM_NOT, sym_not, "executorch_prim::sym_not.Scalar", SCALAR_TO_BOOL, SymNot;
    SYM_ITE, sym_ite, "executorch_prim::sym_ite.Scalar", TERNARY, SymIte;
    CEIL_SCALAR, ceil_scalar, "executorch_prim::ceil.Scalar", SCALAR_TO_INT, Ceil;
    ROUND_SCALAR, round_scalar, "executorch_prim::round.Scalar", SCALAR_TO_INT, Round;
    TRUNC_SCALAR, trunc_scalar, "executorch_prim::trunc.Scalar", SCALAR_TO_INT, Trunc;
}

/// `_local_scalar_dense(self)`: the one element of a tensor as a scalar.
fn local_scalar_dense(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let t = args.tensor(0)?;
    if t.numel() != 1 {
        return Err(KernelError::invalid(
            "_local_scalar_dense needs a one-element tensor",
        ));
    }
    // The element's bytes, little-endian, widened to 8 bytes (element sizes are 1..=8).
    let mut raw = [0u8; 8];
    for (d, s) in raw.iter_mut().zip(t.bytes()?) {
        *d = *s;
    }
    let raw = u64::from_le_bytes(raw);
    let v = match t.dtype() {
        ScalarType::Bool => Scalar::Bool(raw != 0),
        ScalarType::Byte => Scalar::Int(raw as u8 as i64),
        ScalarType::Char => Scalar::Int(raw as i8 as i64),
        ScalarType::Short => Scalar::Int(raw as i16 as i64),
        ScalarType::Int => Scalar::Int(raw as i32 as i64),
        ScalarType::Long => Scalar::Int(raw as i64),
        ScalarType::Half => Scalar::Double(half::f16::from_bits(raw as u16).to_f64()),
        ScalarType::Float => Scalar::Double(f32::from_bits(raw as u32) as f64),
        ScalarType::Double => Scalar::Double(f64::from_bits(raw)),
        _ => {
            return Err(KernelError::unsupported(
                "_local_scalar_dense: unsupported dtype",
            ))
        }
    };
    args.set_return_scalar(v)
}
prim!(
    LOCAL_SCALAR_DENSE,
    "aten::_local_scalar_dense",
    &TENSOR_TO_SCALAR,
    local_scalar_dense
);

/// `et_view(self, size, out)`: `out` becomes a view of `self`'s data with new sizes
/// (one may be -1 and is inferred).
fn et_view(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let src = args.tensor(0)?;
    let size = args.int_list(1)?;
    // SAFETY: position 2 is taken once and only its shape and data pointer are changed;
    // the planner may place a view's output on its input's memory, which is the point.
    let out = unsafe { args.tensor_mut_for_view(2)? };
    if size.len() != out.dim() || size.len() > MAX_DIM {
        return Err(KernelError::invalid(
            "et_view: size list does not match the output rank",
        ));
    }
    if src.dtype() != out.dtype() {
        return Err(KernelError::invalid("et_view: dtype mismatch"));
    }
    let numel = src.numel();
    let mut sizes = [0usize; MAX_DIM];
    let mut infer = None;
    let mut known = 1usize;
    for (&s, slot) in size.iter().zip(sizes.iter_mut()) {
        if s == -1 {
            if infer.replace(slot).is_some() {
                return Err(KernelError::invalid(
                    "et_view: more than one -1 in the size",
                ));
            }
            continue;
        }
        *slot = usize::try_from(s).map_err(|_| KernelError::invalid("et_view: negative size"))?;
        known = known
            .checked_mul(*slot)
            .ok_or(KernelError::invalid("et_view: size overflows"))?;
    }
    if let Some(slot) = infer {
        if known == 0 || numel % known != 0 {
            return Err(KernelError::invalid(
                "et_view: cannot infer the -1 dimension",
            ));
        }
        *slot = numel / known;
    }
    let sizes = sizes.get(..size.len()).unwrap_or_default();
    if crate::tensor::checked_numel(sizes) != Some(numel) {
        return Err(KernelError::invalid("et_view: element count differs"));
    }
    if numel > out.numel_bound() {
        return Err(KernelError::invalid(
            "et_view: view is larger than the output's bound",
        ));
    }
    out.resize(sizes)?;
    // SAFETY: `src`'s data is valid for its `numel` elements (== out's new numel) for the
    // method's lifetime; a read-only source stays read-only through the view.
    unsafe { out.set_data(src.data_ptr() as *mut u8, src.is_read_only()) };
    Ok(())
}
prim!(ET_VIEW, "executorch_prim::et_view.default", &VIEW, et_view);

/// `et_copy_index(copy_to, copy_from, index)`: writes `copy_from` into row `index` of
/// `copy_to`, growing its first dimension (within its bound) when needed.
fn et_copy_index(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    // SAFETY: position 0 is taken once and checked against the other arguments.
    let to = unsafe { args.tensor_mut(0)? };
    let from = args.tensor(1)?;
    let index = usize::try_from(args.int(2)?)
        .map_err(|_| KernelError::invalid("et_copy_index: negative index"))?;
    let (rows, row_shape) = match to.sizes().split_first() {
        Some((&rows, rest)) if to.dtype() == from.dtype() && rest.len() == from.dim() => {
            (rows, rest)
        }
        _ => {
            return Err(KernelError::invalid(
                "et_copy_index: shapes or dtypes do not fit",
            ))
        }
    };
    if row_shape != from.sizes() {
        return Err(KernelError::invalid("et_copy_index: row shape differs"));
    }
    let overflow = KernelError::invalid("et_copy_index: index overflows");
    if rows <= index {
        let mut sizes = [0usize; MAX_DIM];
        for (d, s) in sizes.iter_mut().zip(to.sizes()) {
            *d = *s;
        }
        sizes[0] = index.checked_add(1).ok_or(overflow)?;
        to.resize(sizes.get(..to.dim()).unwrap_or_default())?;
    }
    let src = from.bytes()?;
    let dst = to.bytes_mut()?;
    let start = index.checked_mul(src.len()).ok_or(overflow)?;
    let end = start.checked_add(src.len()).ok_or(overflow)?;
    dst.get_mut(start..end)
        .ok_or(KernelError::new(
            Error::InvalidArgument,
            "et_copy_index: index out of range",
        ))?
        .copy_from_slice(src);
    Ok(())
}
prim!(
    ET_COPY_INDEX,
    "executorch_prim::et_copy_index.tensor",
    &COPY_INDEX,
    et_copy_index
);

#[cfg(test)]
mod tests {
    use core::ptr::NonNull;

    use crate::error::{Error, KernelError};
    use crate::kernel::{KernelArgs, KernelContext};
    use crate::memory::Arena;
    use crate::scalar_type::ScalarType;
    use crate::tensor::{ShapeDynamism, ShapeStorage, Tensor};
    use crate::value::Value;

    /// Calls prim op `name` with `values` (the last one is the return slot); returns the
    /// result and the return slot afterwards.
    fn call(name: &str, values: &mut [Value]) -> (Result<(), KernelError>, Value) {
        let (op, overload) = name.split_once('.').unwrap_or((name, ""));
        let entry = crate::registry::find_kernel(op, overload, None).expect("registered");
        let idx: [u32; 4] = [0, 1, 2, 3];
        let n = values.len();
        let temp = Arena::empty();
        let ctx = KernelContext::new(&temp);
        // SAFETY: the indices are in range of `values`, which outlives the call.
        let args = unsafe { KernelArgs::new(NonNull::from(&mut *values).cast(), &idx[..n], n - 1) };
        let r = (entry.function)(&ctx, &args);
        (r, values[n - 1])
    }

    fn int(name: &str, a: Value, b: Value) -> i64 {
        match call(name, &mut [a, b, Value::None]) {
            (Ok(()), Value::Int(v)) => v,
            (r, _) => panic!("{name}: {r:?}"),
        }
    }

    fn double(name: &str, a: Value, b: Value) -> f64 {
        match call(name, &mut [a, b, Value::None]) {
            (Ok(()), Value::Double(v)) => v,
            (r, _) => panic!("{name}: {r:?}"),
        }
    }

    fn boolean(name: &str, a: Value, b: Value) -> bool {
        match call(name, &mut [a, b, Value::None]) {
            (Ok(()), Value::Bool(v)) => v,
            (r, _) => panic!("{name}: {r:?}"),
        }
    }

    fn unary(name: &str, a: Value) -> Value {
        match call(name, &mut [a, Value::None]) {
            (Ok(()), v) => v,
            (r, _) => panic!("{name}: {r:?}"),
        }
    }

    fn unary_err(name: &str, a: Value) -> KernelError {
        call(name, &mut [a, Value::None]).0.unwrap_err()
    }

    use Value::{Bool as B, Double as D, Int as I};

    #[test]
    fn scalar_arithmetic() {
        assert_eq!(int("executorch_prim::add.Scalar", I(2), I(3)), 5);
        assert_eq!(int("executorch_prim::add.Scalar", B(true), I(3)), 4);
        assert_eq!(double("executorch_prim::add.Scalar", I(2), D(0.5)), 2.5);
        assert_eq!(int("executorch_prim::sub.Scalar", I(2), I(3)), -1);
        assert_eq!(int("executorch_prim::mul.Scalar", I(i64::MAX), I(2)), -2);
        assert_eq!(double("executorch_prim::mul.Scalar", D(1.5), I(2)), 3.0);
        assert_eq!(int("executorch_prim::floordiv.Scalar", I(-7), I(2)), -4);
        assert_eq!(int("executorch_prim::floordiv.Scalar", I(7), I(2)), 3);
        assert_eq!(
            double("executorch_prim::floordiv.Scalar", D(-7.0), I(2)),
            -4.0
        );
        assert_eq!(int("executorch_prim::mod.Scalar", I(-7), I(2)), 1);
        assert_eq!(int("executorch_prim::mod.Scalar", I(7), I(-2)), -1);
        assert_eq!(double("executorch_prim::mod.Scalar", D(-7.5), I(2)), 0.5);
        assert_eq!(int("executorch_prim::sym_max.Scalar", I(1), I(2)), 2);
        assert_eq!(int("executorch_prim::sym_min.Scalar", I(1), I(2)), 1);
        assert_eq!(double("executorch_prim::sym_max.Scalar", D(1.5), I(1)), 1.5);
        assert_eq!(double("executorch_prim::sym_min.Scalar", D(1.5), I(1)), 1.0);
        assert!(double("executorch_prim::sym_max.Scalar", D(f64::NAN), I(1)).is_nan());
        assert!(double("executorch_prim::sym_min.Scalar", I(1), D(f64::NAN)).is_nan());
        assert_eq!(double("executorch_prim::truediv.Scalar", I(1), I(2)), 0.5);
        assert_eq!(int("executorch_prim::floordiv.int", I(-7), I(2)), -4);
        assert_eq!(int("executorch_prim::mod.int", I(-7), I(2)), 1);
        for name in [
            "executorch_prim::floordiv.Scalar",
            "executorch_prim::mod.Scalar",
            "executorch_prim::floordiv.int",
            "executorch_prim::mod.int",
        ] {
            let (r, slot) = call(name, &mut [I(1), I(0), Value::None]);
            assert_eq!(r.unwrap_err().error, Error::InvalidArgument, "{name}");
            assert!(matches!(slot, Value::None));
        }
        // Int-only ops refuse doubles.
        let (r, _) = call("executorch_prim::mod.int", &mut [D(1.0), I(2), Value::None]);
        assert_eq!(r.unwrap_err().error, Error::InvalidProgram);
        let (r, _) = call(
            "executorch_prim::add.Scalar",
            &mut [I(1), Value::None, Value::None],
        );
        assert_eq!(r.unwrap_err().error, Error::InvalidProgram);
    }

    #[test]
    fn scalar_comparisons() {
        assert!(boolean("executorch_prim::eq.Scalar", I(1), D(1.0)));
        assert!(!boolean("executorch_prim::eq.Scalar", I(1), I(2)));
        assert!(boolean("executorch_prim::lt.Scalar", I(1), I(2)));
        assert!(boolean("executorch_prim::le.Scalar", I(2), I(2)));
        assert!(boolean("executorch_prim::gt.Scalar", D(2.5), I(2)));
        assert!(boolean("executorch_prim::ge.Scalar", B(true), I(1)));
        assert!(!boolean("executorch_prim::gt.Scalar", D(f64::NAN), I(1)));
        assert!(!boolean("executorch_prim::le.Scalar", D(f64::NAN), I(1)));
        assert!(!boolean(
            "executorch_prim::eq.Scalar",
            D(f64::NAN),
            D(f64::NAN)
        ));
    }

    #[test]
    fn scalar_unary() {
        assert!(matches!(unary("executorch_prim::neg.Scalar", I(3)), I(-3)));
        assert!(matches!(
            unary("executorch_prim::neg.Scalar", B(true)),
            I(-1)
        ));
        assert!(matches!(unary("executorch_prim::neg.Scalar", D(1.5)), D(v) if v == -1.5));
        assert!(matches!(unary("executorch_prim::sym_float.Scalar", I(3)), D(v) if v == 3.0));
        assert!(matches!(
            unary("executorch_prim::sym_int.Scalar", D(-2.7)),
            I(-2)
        ));
        assert!(matches!(
            unary("executorch_prim::sym_not.Scalar", I(0)),
            B(true)
        ));
        assert!(matches!(
            unary("executorch_prim::sym_not.Scalar", D(0.5)),
            B(false)
        ));
        let ceil = "executorch_prim::ceil.Scalar";
        let round = "executorch_prim::round.Scalar";
        let trunc = "executorch_prim::trunc.Scalar";
        assert!(matches!(unary(ceil, D(2.1)), I(3)));
        assert!(matches!(unary(ceil, D(-2.1)), I(-2)));
        assert!(matches!(unary(ceil, I(5)), I(5)));
        assert!(matches!(unary(round, D(2.5)), I(2)));
        assert!(matches!(unary(round, D(3.5)), I(4)));
        assert!(matches!(unary(round, D(-2.5)), I(-2)));
        assert!(matches!(unary(round, D(-2.6)), I(-3)));
        assert!(matches!(unary(trunc, D(-2.7)), I(-2)));
        assert!(matches!(unary(trunc, B(true)), I(1)));
        for name in [ceil, round, trunc] {
            assert_eq!(
                unary_err(name, D(f64::INFINITY)).error,
                Error::InvalidArgument
            );
            assert_eq!(unary_err(name, D(f64::NAN)).error, Error::InvalidArgument);
        }
        let ite = "executorch_prim::sym_ite.Scalar";
        let (r, v) = call(ite, &mut [B(true), I(1), D(2.0), Value::None]);
        assert!(r.is_ok() && matches!(v, I(1)));
        let (r, v) = call(ite, &mut [I(0), I(1), D(2.0), Value::None]);
        assert!(r.is_ok() && matches!(v, D(x) if x == 2.0));
    }

    /// A tensor over `data` (row-major), shaped `sizes`.
    fn tensor(
        dtype: ScalarType,
        sizes: &mut [usize],
        strides: &mut [usize],
        order: &mut [u8],
        data: *mut u8,
    ) -> Tensor {
        for (i, o) in order.iter_mut().enumerate() {
            *o = i as u8;
        }
        let storage = ShapeStorage {
            sizes: NonNull::from(&mut *sizes).cast(),
            strides: NonNull::from(&mut *strides).cast(),
            dim_order: NonNull::from(&mut *order).cast(),
        };
        // SAFETY: the arrays hold `sizes.len()` elements and outlive the tensor's use in
        // the test; `data` is valid for the tensor's bytes.
        unsafe {
            Tensor::from_raw_parts(
                dtype,
                sizes.len(),
                storage,
                data,
                ShapeDynamism::Static,
                false,
                false,
            )
        }
    }

    #[test]
    fn tensor_prims() {
        let mut data = [0u8; 24];
        let (mut sizes, mut strides, mut order) = ([2usize, 3], [0usize; 2], [0u8; 2]);
        let mut t = tensor(
            ScalarType::Float,
            &mut sizes,
            &mut strides,
            &mut order,
            data.as_mut_ptr(),
        );
        let tv = Value::Tensor(NonNull::from(&mut t));
        assert_eq!(int("aten::sym_size.int", tv, I(1)), 3);
        assert_eq!(int("aten::sym_size.int", tv, I(-2)), 2);
        let (r, _) = call("aten::sym_size.int", &mut [tv, I(2), Value::None]);
        assert_eq!(r.unwrap_err().error, Error::InvalidArgument);
        assert!(matches!(unary("aten::sym_numel", tv), I(6)));
        assert_eq!(
            unary_err("aten::_local_scalar_dense", tv).error,
            Error::InvalidArgument
        );

        let cases: [(ScalarType, [u8; 8], Value); 9] = [
            (ScalarType::Bool, [2, 0, 0, 0, 0, 0, 0, 0], B(true)),
            (ScalarType::Byte, [200, 0, 0, 0, 0, 0, 0, 0], I(200)),
            (ScalarType::Char, [0xfe, 0, 0, 0, 0, 0, 0, 0], I(-2)),
            (ScalarType::Short, [0xfe, 0xff, 0, 0, 0, 0, 0, 0], I(-2)),
            (ScalarType::Int, [0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0], I(-2)),
            (ScalarType::Long, (-5i64).to_le_bytes(), I(-5)),
            (ScalarType::Half, [0x00, 0x3e, 0, 0, 0, 0, 0, 0], D(1.5)),
            (ScalarType::Float, [0, 0, 0xc0, 0x3f, 0, 0, 0, 0], D(1.5)),
            (ScalarType::Double, 2.25f64.to_le_bytes(), D(2.25)),
        ];
        for (dtype, bytes, want) in cases {
            let mut cell = [0u64; 1];
            cell[0] = u64::from_le_bytes(bytes);
            let (mut sizes, mut strides, mut order) = ([1usize], [0usize; 1], [0u8; 1]);
            let mut t = tensor(
                dtype,
                &mut sizes,
                &mut strides,
                &mut order,
                cell.as_mut_ptr().cast(),
            );
            let got = unary(
                "aten::_local_scalar_dense",
                Value::Tensor(NonNull::from(&mut t)),
            );
            let same = match (got, want) {
                (B(a), B(b)) => a == b,
                (I(a), I(b)) => a == b,
                (D(a), D(b)) => a == b,
                _ => false,
            };
            assert!(same, "{dtype:?}");
        }
        let mut cell = [0u64; 1];
        let (mut sizes, mut strides, mut order) = ([1usize], [0usize; 1], [0u8; 1]);
        let mut t = tensor(
            ScalarType::ComplexFloat,
            &mut sizes,
            &mut strides,
            &mut order,
            cell.as_mut_ptr().cast(),
        );
        let tv = Value::Tensor(NonNull::from(&mut t));
        assert_eq!(
            unary_err("aten::_local_scalar_dense", tv).error,
            Error::NotSupported
        );
    }
}
