//! The scalar interpreter behind every prim op with a scalar result (`sym_size`,
//! `sym_numel` and `_local_scalar_dense` included): one copy of the argument unboxing,
//! the arithmetic and the result boxing, selected by [`Op`].

use core::cmp::Ordering;

use crate::error::{KernelError, KernelResult};
use crate::kernel::KernelArgs;
use crate::scalar::Scalar;

use super::tensor::local_scalar;

/// What a scalar prim op computes; each thunk in `thunks` passes one to [`scalar_prim`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    // Binary on scalars, result by promotion (int when both are integral).
    Add,
    Sub,
    Mul,
    FloorDiv,
    Mod,
    Max,
    Min,
    // Comparisons of scalars (a bool).
    Eq,
    Gt,
    Lt,
    Ge,
    Le,
    // True division (a double).
    TrueDiv,
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
    // On a tensor (`LocalScalarDense` in `tensor::local_scalar`, so that it shares this
    // function's unboxing, boxing and frame).
    SymSize,
    SymNumel,
    LocalScalarDense,
}

/// Runs scalar prim op `op` on `args` and stores its result in the return slot.
#[inline(never)]
pub(super) fn scalar_prim(op: Op, args: &KernelArgs<'_>) -> KernelResult {
    use Op::*;
    let r = if matches!(op, SymSize | SymNumel | LocalScalarDense) {
        let t = args.tensor(0)?;
        if op == LocalScalarDense {
            local_scalar(t)?
        } else {
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
                i64::try_from(n)
                    .map_err(|_| KernelError::invalid("size does not fit in an int"))?,
            )
        }
    } else {
        let a = args.scalar(0)?;
        // The second operand: the picked branch for `sym_ite`, none for unary ops. The
        // value count tells them apart: the load-time signature check fixed it at the
        // parameters and the return slot (two values for a unary op, four for `sym_ite`,
        // the only ternary one).
        let b = if args.len() > 2 {
            args.scalar(if args.len() > 3 && !a.to_bool() { 2 } else { 1 })?
        } else {
            a
        };
        // `sym_ite`'s result is the picked branch as it is: returned here, `compute`
        // never hands back an operand (doing so cost a byte-wise copy of it).
        if op == SymIte {
            b
        } else {
            match compute(op, a, b) {
                Some(r) => r,
                None => return Err(failure(op)),
            }
        }
    };
    args.set_return_scalar(r)
}

/// For each comparison (`Eq`, `Gt`, `Lt`, `Ge`, `Le`, in `Op`'s order), 3 bits: whether
/// it holds when `a` is less than, equal to, greater than `b` (bits 0, 1, 2).
const COMPARISONS: u16 = 0b010 | 0b100 << 3 | 0b001 << 6 | 0b110 << 9 | 0b011 << 12;

// `compute` relies on `Op`'s order: the promoting binary ops first, Add and Sub at 0 and
// 1 (`m = 2k - 1`), Max then Min last of them; the comparisons right after, in
// `COMPARISONS`' order. Reordering the enum, or a wrong bit in the table, fails the build.
const _: () = {
    use Op::*;
    const fn at(op: Op) -> usize {
        op as usize
    }
    assert!(at(Add) == 0 && at(Sub) == 1);
    assert!(at(Mul) > at(Sub) && at(Mul) < at(Max));
    assert!(at(FloorDiv) > at(Sub) && at(FloorDiv) < at(Max));
    assert!(at(Mod) > at(Sub) && at(Mod) < at(Max));
    assert!(at(Min) == at(Max) + 1 && at(Eq) == at(Min) + 1);
    assert!(at(Gt) == at(Eq) + 1 && at(Lt) == at(Eq) + 2);
    assert!(at(Ge) == at(Eq) + 3 && at(Le) == at(Eq) + 4);
    assert!(at(TrueDiv) == at(Le) + 1);
    // Whether comparison `op` holds for `a` less than (0), equal to (1) or greater than
    // (2) `b`, read from the table as `compute` reads it.
    const fn holds(op: Op, order: usize) -> bool {
        COMPARISONS >> (3 * (at(op) - at(Eq)) + order) & 1 != 0
    }
    assert!(!holds(Eq, 0) && holds(Eq, 1) && !holds(Eq, 2));
    assert!(!holds(Gt, 0) && !holds(Gt, 1) && holds(Gt, 2));
    assert!(holds(Lt, 0) && !holds(Lt, 1) && !holds(Lt, 2));
    assert!(!holds(Ge, 0) && holds(Ge, 1) && holds(Ge, 2));
    assert!(holds(Le, 0) && holds(Le, 1) && !holds(Le, 2));
};

/// The result of scalar op `op` on `a` and `b` (`b` is `a` for unary ops; `sym_ite` is
/// not computed here); `None` when the op fails (see [`failure`]).
///
/// The op groups are ranges of `Op` and their results are shared formulas, bit tables
/// or tested one by one, rather than `match` arms: in a non-PIE build every jump-table
/// entry is an 8-byte word, and this function had two tables (27 entries). (Arrays of
/// every candidate result, indexed by the op, cost more than the formulas.)
///
/// Inlined into its one caller, as are its helpers: out of line, the operands were
/// copied from where unboxing left them into argument slots, and each helper call
/// spilled the doubles live across it.
#[inline(always)]
fn compute(op: Op, a: Scalar, b: Scalar) -> Option<Scalar> {
    use Op::*;
    use Scalar::{Bool, Double, Int};
    let integral = a.is_integral() && b.is_integral();
    // Each operand as an integer and as a double, from one test of its kind. `b` as an
    // integer is only read when it is integral: a double's saturating conversion (as `a`
    // needs for SymInt and rounding) would be wasted code.
    let (i, x) = match a {
        Double(d) => (d as i64, d),
        _ => {
            let i = integral_value(a);
            (i, i as f64)
        }
    };
    let (j, y) = match b {
        Double(d) => (0, d),
        _ => {
            let j = integral_value(b);
            (j, j as f64)
        }
    };
    let k = op as usize;
    // Integer floor division and modulo, for FloorDiv and Mod on integral operands
    // (`floordiv.int` and `mod.int` among them): one copy of `int_div`.
    if integral && matches!(op, FloorDiv | Mod) {
        return Some(Int(int_div(op == Mod, i, j)?));
    }
    let ord = if integral {
        Some(i.cmp(&j))
    } else {
        x.partial_cmp(&y)
    };
    // Add, Sub, Mul, FloorDiv, Mod, Max, Min: an int when both are integral.
    if k <= Min as usize {
        // Max and Min keep `a` unless `b` compares past it or is NaN (a NaN `a`
        // compares past nothing): NaN propagates, and `max(-0.0, 0.0)` is `-0.0`, as
        // C++'s `std::max`.
        let past = if op == Max {
            Ordering::Less
        } else {
            Ordering::Greater
        };
        let take_b = ord == Some(past) || y.is_nan();
        let (extreme_int, extreme) = if take_b { (j, y) } else { (i, x) };
        // Add and Sub are `a - m * b` with `m` -1 and 1 (exact: only a sign changes).
        let m = 2 * k as i64 - 1;
        if integral {
            return Some(Int(if op == Mul {
                i.wrapping_mul(j)
            } else if k >= Max as usize {
                extreme_int
            } else {
                i.wrapping_sub(m.wrapping_mul(j))
            }));
        }
        // Mod is `a - q * b` as well, with the floored quotient `q`.
        let q = floor_f64(x / y);
        return Some(Double(if op == Mul {
            x * y
        } else if op == FloorDiv {
            q
        } else if k >= Max as usize {
            extreme
        } else {
            x - if op == Mod { q } else { m as f64 } * y
        }));
    }
    if (Eq as usize..=Le as usize).contains(&k) {
        let bit = |o: Ordering| 3 * (k - Eq as usize) + (o as i8 + 1) as usize;
        return Some(Bool(ord.is_some_and(|o| COMPARISONS >> bit(o) & 1 != 0)));
    }
    // The rest one by one: as a `match` they were a jump table of 11 words (the
    // compiler still makes one of 8 for the unary ops).
    Some(if op == TrueDiv {
        Double(x / y)
    } else if op == Neg {
        match a {
            Double(d) => Double(-d),
            _ => Int(i.wrapping_neg()),
        }
    } else if op == SymFloat {
        Double(x)
    } else if op == SymNot {
        // `x` is zero exactly when `a` is (and a NaN is true, as `Scalar::to_bool`).
        Bool(x == 0.0)
    } else if op == SymInt || a.is_integral() {
        // SymInt truncates (`i` is `x` truncated, saturating); rounding an integral value
        // keeps it.
        Int(i)
    } else if !x.is_finite() {
        // Ceil, Round and Trunc need a finite double.
        return None;
    } else {
        // What truncation dropped, exactly. Past the i64 range, where `i` saturated, it
        // is zero or has `x`'s sign, and the step below saturates too.
        let fraction = x - i as f64;
        let odd = i & 1 != 0;
        // Half to even: away from zero past a half, and at a half from an odd `i`.
        let round_up = fraction > 0.5 || (fraction == 0.5 && odd);
        let round_down = fraction < -0.5 || (fraction == -0.5 && odd);
        let step = match op {
            Ceil => (fraction > 0.0) as i64,
            Round => round_up as i64 - round_down as i64,
            // Trunc.
            _ => 0,
        };
        Int(i.saturating_add(step))
    })
}

/// The integer an `Int` or `Bool` holds (0 for a double, which nothing reads).
fn integral_value(s: Scalar) -> i64 {
    match s {
        Scalar::Bool(b) => b as i64,
        Scalar::Int(i) => i,
        Scalar::Double(_) => 0,
    }
}

/// Why `compute` failed for these operands.
fn failure(op: Op) -> KernelError {
    use Op::*;
    match op {
        Mod => KernelError::invalid("integer modulo by zero"),
        FloorDiv => KernelError::invalid("integer division by zero"),
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
fn floor_f64(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}
