//! The primitive operators ExecuTorch always registers: symbolic-shape arithmetic on
//! scalars, `sym_size`/`sym_numel`, `et_view` and `et_copy_index`. They live in the same
//! registry slice as library kernels.

use crate::error::{Error, KernelError, KernelResult};
use crate::kernel::{
    op_hash, ArgKind, DtypeKey, KernelArgs, KernelContext, KernelEntry, KernelSignature, ReturnKind,
};
use crate::scalar::Scalar;
use crate::scalar_type::{Bool, ScalarType};
use crate::tensor::MAX_DIM;

macro_rules! prim {
    ($id:ident, $name:literal, [$($kind:ident),*], $ret:ident, $f:path) => {
        #[linkme::distributed_slice(crate::__private::KERNELS)]
        #[linkme(crate = linkme)]
        static $id: KernelEntry = KernelEntry {
            name: $name,
            hash: op_hash($name),
            dtype: DtypeKey::FALLBACK,
            function: $f,
            signature: &KernelSignature {
                args: &[$(ArgKind::$kind),*],
                returns: ReturnKind::$ret,
                crate_name: "et-runtime",
                dtypes: crate::DtypeSet::ALL,
            },
        };
    };
}

fn normalize_dim(dim: i64, rank: usize) -> KernelResult<usize> {
    let r = rank as i64;
    let d = if dim < 0 { dim + r } else { dim };
    if d < 0 || d >= r.max(1) {
        return Err(KernelError::invalid("dimension out of range"));
    }
    Ok(d as usize)
}

fn size_as_int(v: usize) -> KernelResult<i64> {
    i64::try_from(v).map_err(|_| KernelError::invalid("size does not fit in an int"))
}

fn sym_size(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let t = args.tensor(0)?;
    let d = normalize_dim(args.int(1)?, t.dim())?;
    let size = t.sizes().get(d).copied().unwrap_or(1);
    args.set_return_int(size_as_int(size)?)
}
prim!(SYM_SIZE, "aten::sym_size.int", [Tensor, Int], Int, sym_size);

fn sym_numel(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let n = args.tensor(0)?.numel();
    args.set_return_int(size_as_int(n)?)
}
prim!(SYM_NUMEL, "aten::sym_numel", [Tensor], Int, sym_numel);

fn local_scalar_dense(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let t = args.tensor(0)?;
    if t.numel() != 1 {
        return Err(KernelError::invalid(
            "_local_scalar_dense needs a one-element tensor",
        ));
    }
    let v = match t.dtype() {
        ScalarType::Bool => Scalar::Bool(t.data::<Bool>()?[0].get()),
        ScalarType::Byte => Scalar::Int(t.data::<u8>()?[0] as i64),
        ScalarType::Char => Scalar::Int(t.data::<i8>()?[0] as i64),
        ScalarType::Short => Scalar::Int(t.data::<i16>()?[0] as i64),
        ScalarType::Int => Scalar::Int(t.data::<i32>()?[0] as i64),
        ScalarType::Long => Scalar::Int(t.data::<i64>()?[0]),
        ScalarType::Half => Scalar::Double(t.data::<half::f16>()?[0].to_f64()),
        ScalarType::Float => Scalar::Double(t.data::<f32>()?[0] as f64),
        ScalarType::Double => Scalar::Double(t.data::<f64>()?[0]),
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
    [Tensor],
    Scalar,
    local_scalar_dense
);

/// Python's floor division of integers (rounds toward negative infinity).
fn floor_div_int(a: i64, b: i64) -> KernelResult<i64> {
    if b == 0 {
        return Err(KernelError::invalid("integer division by zero"));
    }
    let q = a.wrapping_div(b);
    Ok(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

/// Python's modulo of integers (the result takes the divisor's sign).
fn mod_int(a: i64, b: i64) -> KernelResult<i64> {
    if b == 0 {
        return Err(KernelError::invalid("integer modulo by zero"));
    }
    let r = a.wrapping_rem(b);
    Ok(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

fn floor_f64(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Max,
    Min,
}

fn arith(op: Arith, a: Scalar, b: Scalar) -> KernelResult<Scalar> {
    if a.is_integral() && b.is_integral() {
        let (x, y) = (a.to_i64(), b.to_i64());
        return Ok(Scalar::Int(match op {
            Arith::Add => x.wrapping_add(y),
            Arith::Sub => x.wrapping_sub(y),
            Arith::Mul => x.wrapping_mul(y),
            Arith::FloorDiv => floor_div_int(x, y)?,
            Arith::Mod => mod_int(x, y)?,
            Arith::Max => x.max(y),
            Arith::Min => x.min(y),
        }));
    }
    let (x, y) = (a.to_f64(), b.to_f64());
    Ok(Scalar::Double(match op {
        Arith::Add => x + y,
        Arith::Sub => x - y,
        Arith::Mul => x * y,
        Arith::FloorDiv => floor_f64(x / y),
        Arith::Mod => x - floor_f64(x / y) * y,
        Arith::Max => {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.max(y)
            }
        }
        Arith::Min => {
            if x.is_nan() || y.is_nan() {
                f64::NAN
            } else {
                x.min(y)
            }
        }
    }))
}

macro_rules! binary_scalar {
    ($($id:ident, $fname:ident, $name:literal, $op:expr;)*) => {$(
        fn $fname(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
            let r = arith($op, args.scalar(0)?, args.scalar(1)?)?;
            args.set_return_scalar(r)
        }
        prim!($id, $name, [Scalar, Scalar], Scalar, $fname);
    )*};
}

binary_scalar! {
    ADD_SCALAR, add_scalar, "executorch_prim::add.Scalar", Arith::Add;
    SUB_SCALAR, sub_scalar, "executorch_prim::sub.Scalar", Arith::Sub;
    MUL_SCALAR, mul_scalar, "executorch_prim::mul.Scalar", Arith::Mul;
    FLOORDIV_SCALAR, floordiv_scalar, "executorch_prim::floordiv.Scalar", Arith::FloorDiv;
    MOD_SCALAR, mod_scalar, "executorch_prim::mod.Scalar", Arith::Mod;
    SYM_MAX_SCALAR, sym_max_scalar, "executorch_prim::sym_max.Scalar", Arith::Max;
    SYM_MIN_SCALAR, sym_min_scalar, "executorch_prim::sym_min.Scalar", Arith::Min;
}

fn truediv_scalar(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let (a, b) = (args.scalar(0)?, args.scalar(1)?);
    args.set_return_double(a.to_f64() / b.to_f64())
}
prim!(
    TRUEDIV_SCALAR,
    "executorch_prim::truediv.Scalar",
    [Scalar, Scalar],
    Double,
    truediv_scalar
);

fn floordiv_int(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    args.set_return_int(floor_div_int(args.int(0)?, args.int(1)?)?)
}
prim!(
    FLOORDIV_INT,
    "executorch_prim::floordiv.int",
    [Int, Int],
    Int,
    floordiv_int
);

fn mod_int_op(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    args.set_return_int(mod_int(args.int(0)?, args.int(1)?)?)
}
prim!(
    MOD_INT,
    "executorch_prim::mod.int",
    [Int, Int],
    Int,
    mod_int_op
);

fn compare(a: Scalar, b: Scalar) -> Option<core::cmp::Ordering> {
    if a.is_integral() && b.is_integral() {
        Some(a.to_i64().cmp(&b.to_i64()))
    } else {
        a.to_f64().partial_cmp(&b.to_f64())
    }
}

macro_rules! compare_scalar {
    ($($id:ident, $fname:ident, $name:literal, $pred:expr;)*) => {$(
        fn $fname(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
            let ord = compare(args.scalar(0)?, args.scalar(1)?);
            args.set_return_bool(ord.is_some_and($pred))
        }
        prim!($id, $name, [Scalar, Scalar], Bool, $fname);
    )*};
}

compare_scalar! {
    EQ_SCALAR, eq_scalar, "executorch_prim::eq.Scalar", |o: core::cmp::Ordering| o.is_eq();
    GT_SCALAR, gt_scalar, "executorch_prim::gt.Scalar", |o: core::cmp::Ordering| o.is_gt();
    LT_SCALAR, lt_scalar, "executorch_prim::lt.Scalar", |o: core::cmp::Ordering| o.is_lt();
    GE_SCALAR, ge_scalar, "executorch_prim::ge.Scalar", |o: core::cmp::Ordering| o.is_ge();
    LE_SCALAR, le_scalar, "executorch_prim::le.Scalar", |o: core::cmp::Ordering| o.is_le();
}

fn neg_scalar(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let r = match args.scalar(0)? {
        Scalar::Double(d) => Scalar::Double(-d),
        s => Scalar::Int(s.to_i64().wrapping_neg()),
    };
    args.set_return_scalar(r)
}
prim!(
    NEG_SCALAR,
    "executorch_prim::neg.Scalar",
    [Scalar],
    Scalar,
    neg_scalar
);

fn sym_float(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    args.set_return_double(args.scalar(0)?.to_f64())
}
prim!(
    SYM_FLOAT,
    "executorch_prim::sym_float.Scalar",
    [Scalar],
    Double,
    sym_float
);

fn sym_int(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    args.set_return_int(args.scalar(0)?.to_i64())
}
prim!(
    SYM_INT,
    "executorch_prim::sym_int.Scalar",
    [Scalar],
    Int,
    sym_int
);

fn sym_not(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    args.set_return_bool(!args.scalar(0)?.to_bool())
}
prim!(
    SYM_NOT,
    "executorch_prim::sym_not.Scalar",
    [Scalar],
    Bool,
    sym_not
);

fn sym_ite(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    let pick = if args.scalar(0)?.to_bool() {
        args.scalar(1)?
    } else {
        args.scalar(2)?
    };
    args.set_return_scalar(pick)
}
prim!(
    SYM_ITE,
    "executorch_prim::sym_ite.Scalar",
    [Scalar, Scalar, Scalar],
    Scalar,
    sym_ite
);

fn round_half_even(x: f64) -> f64 {
    let f = floor_f64(x);
    let diff = x - f;
    if diff > 0.5 || (diff == 0.5 && (f as i64) % 2 != 0) {
        f + 1.0
    } else {
        f
    }
}

macro_rules! rounding_scalar {
    ($($id:ident, $fname:ident, $name:literal, $f:expr;)*) => {$(
        fn $fname(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
            let v = match args.scalar(0)? {
                Scalar::Double(d) => {
                    if !d.is_finite() {
                        return Err(KernelError::invalid("cannot round a non-finite value to an int"));
                    }
                    let f: fn(f64) -> f64 = $f;
                    f(d) as i64
                }
                s => s.to_i64(),
            };
            args.set_return_int(v)
        }
        prim!($id, $name, [Scalar], Int, $fname);
    )*};
}

rounding_scalar! {
    CEIL_SCALAR, ceil_scalar, "executorch_prim::ceil.Scalar", |x| -floor_f64(-x);
    ROUND_SCALAR, round_scalar, "executorch_prim::round.Scalar", round_half_even;
    TRUNC_SCALAR, trunc_scalar, "executorch_prim::trunc.Scalar", |x| x as i64 as f64;
}

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
    let mut sizes = [0usize; MAX_DIM];
    let mut infer = None;
    let mut known = 1usize;
    for (i, &s) in size.iter().enumerate() {
        if s == -1 {
            if infer.replace(i).is_some() {
                return Err(KernelError::invalid(
                    "et_view: more than one -1 in the size",
                ));
            }
        } else {
            let s =
                usize::try_from(s).map_err(|_| KernelError::invalid("et_view: negative size"))?;
            sizes[i] = s;
            known = known
                .checked_mul(s)
                .ok_or(KernelError::invalid("et_view: size overflows"))?;
        }
    }
    if let Some(i) = infer {
        if known == 0 || src.numel() % known != 0 {
            return Err(KernelError::invalid(
                "et_view: cannot infer the -1 dimension",
            ));
        }
        sizes[i] = src.numel() / known;
    }
    let sizes = &sizes[..size.len()];
    if crate::tensor::checked_numel(sizes) != Some(src.numel()) {
        return Err(KernelError::invalid("et_view: element count differs"));
    }
    if src.numel() > out.numel_bound() {
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
prim!(
    ET_VIEW,
    "executorch_prim::et_view.default",
    [Tensor, IntList, TensorMut],
    Outs,
    et_view
);

/// `et_copy_index(copy_to, copy_from, index)`: writes `copy_from` into row `index` of
/// `copy_to`, growing its first dimension (within its bound) when needed.
fn et_copy_index(_: &KernelContext<'_>, args: &KernelArgs<'_>) -> KernelResult {
    // SAFETY: position 0 is taken once and checked against the other arguments.
    let to = unsafe { args.tensor_mut(0)? };
    let from = args.tensor(1)?;
    let index = usize::try_from(args.int(2)?)
        .map_err(|_| KernelError::invalid("et_copy_index: negative index"))?;
    if to.dim() != from.dim() + 1 || to.dtype() != from.dtype() {
        return Err(KernelError::invalid(
            "et_copy_index: shapes or dtypes do not fit",
        ));
    }
    if to.sizes()[1..] != *from.sizes() {
        return Err(KernelError::invalid("et_copy_index: row shape differs"));
    }
    if to.sizes()[0] <= index {
        let mut sizes = [0usize; MAX_DIM];
        sizes[..to.dim()].copy_from_slice(to.sizes());
        sizes[0] = index + 1;
        to.resize(&sizes[..to.dim()])?;
    }
    let row = from.nbytes();
    let src = from.bytes()?;
    let dst = to.bytes_mut()?;
    let start = index
        .checked_mul(row)
        .ok_or(KernelError::invalid("et_copy_index: index overflows"))?;
    dst.get_mut(start..start + row)
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
    [TensorMut, Tensor, Int],
    Outs,
    et_copy_index
);
