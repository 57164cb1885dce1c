//! Accuracy against the f64 functions, over dense sweeps of each function's range, for
//! every instruction set this machine runs; saturation and special values; and that a
//! split slice gives the same bits as one call.

extern crate std;
use std::vec::Vec;

use super::functions::{Elu, Exp, Function, Gelu, GeluTanh, Hardswish, Sigmoid, Silu, Tanh};
use super::Isa;

/// ELU's `alpha` in the tests.
const ALPHA: f32 = 1.5;

/// One function under test: its f64 reference, the input range where it is not constant
/// in f32, and its stated bounds in ULP (without and with fused multiply-adds).
struct Case<F> {
    name: &'static str,
    f: F,
    reference: fn(f64) -> f64,
    range: (f32, f32),
    /// The error's unit is the ULP of `max(|reference|, floor(x))`: an absolute floor where
    /// the formula itself loses the relative accuracy of small results.
    floor: fn(f64) -> f64,
    portable_bound: f64,
    fused_bound: f64,
}

fn no_floor(_: f64) -> f64 {
    0.0
}

/// GELU's results below `|x| / 2` in magnitude (negative `x`) come from `1 + erf` or
/// `sigmoid` of a rounded argument: their error is measured against `|x| / 2`.
fn half_x(x: f64) -> f64 {
    x.abs() / 2.0
}

/// SiLU's results where the sigmoid factor is subnormal carry its absolute error times
/// `x`: measured against `|x|` times the smallest normal float.
fn x_min_normal(x: f64) -> f64 {
    x.abs() * f64::from(f32::MIN_POSITIVE)
}

fn sigmoid64(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn gelu_tanh64(x: f64) -> f64 {
    let u = (2.0 / core::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
    x * sigmoid64(2.0 * u)
}

/// The unit in the last place of f32 at `v`'s magnitude (subnormals included).
fn ulp(v: f64) -> f64 {
    let a = v.abs();
    if a < f64::from(f32::MIN_POSITIVE) {
        return 2f64.powi(-149);
    }
    2f64.powi(a.log2().floor() as i32 - 23)
}

/// The error of `got` for input `x` in ULP, or `None` where a special value is wrong
/// (NaN-ness, infinities, where the reference overflows f32).
fn error(got: f32, x: f32, reference: fn(f64) -> f64, floor: fn(f64) -> f64) -> Option<f64> {
    let want = reference(f64::from(x));
    if want.is_nan() || got.is_nan() {
        return (want.is_nan() && got.is_nan()).then_some(0.0);
    }
    if (want as f32).is_infinite() || got.is_infinite() {
        return (got == want as f32).then_some(0.0);
    }
    let unit = ulp(want.abs().max(floor(f64::from(x))));
    Some((f64::from(got) - want).abs() / unit)
}

/// Every `step`-th f32 from `lo` up to `hi` (both signs handled), then both ends.
fn sweep(lo: f32, hi: f32, step: u32) -> impl Iterator<Item = f32> {
    // Order the floats by their integer images: negative ones are mirrored below zero.
    let key = |v: f32| {
        let b = v.to_bits() as i64;
        if b & 0x8000_0000 != 0 {
            -(b & 0x7fff_ffff)
        } else {
            b
        }
    };
    let unkey = |k: i64| {
        if k < 0 {
            f32::from_bits((-k) as u32 | 0x8000_0000)
        } else {
            f32::from_bits(k as u32)
        }
    };
    (key(lo)..=key(hi))
        .step_by(step as usize)
        .map(unkey)
        .chain([lo, hi])
}

/// The worst error of `case` on `isa` over the sweep, and where.
fn worst<F: Function>(isa: Isa, case: &Case<F>, step: u32) -> (f64, f32) {
    let mut worst = (0.0, 0.0);
    let mut xs = Vec::with_capacity(4096);
    let mut out = std::vec![0.0f32; 4096];
    let mut check = |xs: &[f32], out: &mut [f32]| {
        let out = &mut out[..xs.len()];
        isa.map(case.f, Some(xs), out);
        for (&x, &y) in xs.iter().zip(out.iter()) {
            let e = error(y, x, case.reference, case.floor)
                .unwrap_or_else(|| panic!("{} on {isa:?}: f({x:e}) = {y:e}", case.name));
            if e > worst.0 {
                worst = (e, x);
            }
        }
    };
    for x in sweep(case.range.0, case.range.1, step) {
        xs.push(x);
        if xs.len() == 4096 {
            check(&xs, &mut out);
            xs.clear();
        }
    }
    check(&xs, &mut out);
    worst
}

/// Calls `check(args.., case)` for every function's case.
macro_rules! each_case {
    ($check:ident($($arg:expr),*)) => {{
        $check($($arg,)* Case {
            name: "exp",
            f: Exp,
            reference: f64::exp,
            range: (-104.0, 89.0),
            floor: no_floor,
            portable_bound: 1.05,
            fused_bound: 1.05,
        });
        $check($($arg,)* Case {
            name: "sigmoid",
            f: Sigmoid,
            reference: sigmoid64,
            range: (-104.0, 17.0),
            floor: no_floor,
            portable_bound: 2.5,
            fused_bound: 2.5,
        });
        $check($($arg,)* Case {
            name: "silu",
            f: Silu,
            reference: |x| x * sigmoid64(x),
            range: (-104.0, 17.0),
            floor: x_min_normal,
            portable_bound: 3.5,
            fused_bound: 3.5,
        });
        $check($($arg,)* Case {
            name: "tanh",
            f: Tanh,
            reference: f64::tanh,
            range: (-10.0, 10.0),
            floor: no_floor,
            portable_bound: 3.0,
            fused_bound: 3.0,
        });
        $check($($arg,)* Case {
            name: "gelu",
            f: Gelu,
            reference: |x| x * 0.5 * libm::erfc(-x * core::f64::consts::FRAC_1_SQRT_2),
            range: (-6.0, 6.0),
            floor: half_x,
            portable_bound: 6.5,
            fused_bound: 5.5,
        });
        $check($($arg,)* Case {
            name: "gelu_tanh",
            f: GeluTanh,
            reference: gelu_tanh64,
            range: (-10.0, 10.0),
            floor: half_x,
            portable_bound: 2.5,
            fused_bound: 2.5,
        });
        $check($($arg,)* Case {
            name: "hardswish",
            f: Hardswish,
            reference: |x| x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
            range: (-4.0, 4.0),
            floor: no_floor,
            portable_bound: 2.0,
            fused_bound: 2.0,
        });
        $check($($arg,)* Case {
            name: "elu",
            f: Elu(ALPHA),
            reference: |x| if x > 0.0 { x } else { f64::from(ALPHA) * x.exp_m1() },
            range: (-18.0, 1.0),
            floor: no_floor,
            portable_bound: 2.0,
            fused_bound: 2.0,
        });
    }};
}

fn within_bound<F: Function>(isa: Isa, step: u32, case: Case<F>) {
    let (err, at) = worst(isa, &case, step);
    let bound = if isa == Isa::Portable {
        case.portable_bound
    } else {
        case.fused_bound
    };
    std::eprintln!("{:>10} {isa:?}: {err:.3} ulp at {at:e}", case.name);
    assert!(
        err <= bound,
        "{} on {isa:?}: {err} ulp at x = {at:e}",
        case.name
    );
}

/// Every 401st float of each range (a prime step, so that the sweep lands on all
/// mantissa patterns) keeps the test short; `dense_sweep` is the one behind the numbers
/// in the module docs.
#[test]
fn within_the_stated_bounds_on_every_instruction_set() {
    for isa in Isa::available() {
        each_case!(within_bound(isa, 401));
    }
}

/// Every 7th float of each range: the maxima in the module docs (run with `--release
/// --ignored --nocapture`; a minute or two).
#[test]
#[ignore = "slow: the dense sweep behind the documented maxima"]
fn dense_sweep() {
    for isa in Isa::available() {
        each_case!(within_bound(isa, 7));
    }
}

/// Results at the special values and saturation points, on every instruction set.
#[test]
fn special_values_and_saturation() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    let tiny = f32::from_bits(1);
    #[allow(clippy::type_complexity, reason = "a table of cases")]
    let cases: &[(&str, &dyn Fn(Isa, &[f32], &mut [f32]), &[(f32, f32)])] = &[
        (
            "exp",
            &|i, x, o| i.map(Exp, Some(x), o),
            &[
                (0.0, 1.0),
                (-0.0, 1.0),
                (inf, inf),
                (-inf, 0.0),
                (89.0, inf),
                (88.8, inf),
                (1e30, inf),
                (-104.0, 0.0),
                (-1e30, 0.0),
                (-103.0, tiny),
                (-87.5, 9.982_351e-39),
            ],
        ),
        (
            "sigmoid",
            &|i, x, o| i.map(Sigmoid, Some(x), o),
            &[
                (0.0, 0.5),
                (-0.0, 0.5),
                (inf, 1.0),
                (-inf, 0.0),
                (100.0, 1.0),
                (17.0, 1.0),
                (-200.0, 0.0),
            ],
        ),
        (
            "tanh",
            &|i, x, o| i.map(Tanh, Some(x), o),
            &[
                (0.0, 0.0),
                (inf, 1.0),
                (-inf, -1.0),
                (9.1, 1.0),
                (-50.0, -1.0),
                (tiny, tiny),
            ],
        ),
        (
            "gelu",
            &|i, x, o| i.map(Gelu, Some(x), o),
            &[
                (0.0, 0.0),
                (inf, inf),
                (6.0, 6.0),
                (-6.0, -0.0),
                (1e30, 1e30),
            ],
        ),
        (
            "gelu_tanh",
            &|i, x, o| i.map(GeluTanh, Some(x), o),
            &[
                (0.0, 0.0),
                (inf, inf),
                (10.0, 10.0),
                (1e30, 1e30),
                (-1e30, -0.0),
            ],
        ),
        (
            "elu",
            &|i, x, o| i.map(Elu(ALPHA), Some(x), o),
            &[
                (0.0, 0.0),
                (inf, inf),
                (-inf, -ALPHA),
                (-30.0, -ALPHA),
                (2.5, 2.5),
            ],
        ),
        (
            "hardswish",
            &|i, x, o| i.map(Hardswish, Some(x), o),
            &[
                (0.0, 0.0),
                (-3.0, 0.0),
                (3.0, 3.0),
                (inf, inf),
                (10.0, 10.0),
            ],
        ),
    ];
    for isa in Isa::available() {
        for &(name, f, pairs) in cases {
            let x: Vec<f32> = pairs.iter().map(|p| p.0).chain([nan]).collect();
            let mut out = std::vec![0.0f32; x.len()];
            f(isa, &x, &mut out);
            for (&(x, want), &got) in pairs.iter().zip(&out) {
                // Exact, but for the two results of `exp` near the subnormals: an ulp.
                let close = got == want || (got - want).abs() <= want.abs() * 2.4e-7;
                assert!(close, "{name}({x:e}) = {got:e} on {isa:?}, want {want:e}");
            }
            assert!(out[pairs.len()].is_nan(), "{name}(NaN) on {isa:?}");
        }
    }
}

/// Splitting a slice anywhere (as threads do) gives the same bits as one call, on every
/// instruction set; in-place calls give the same bits too.
#[test]
fn split_slices_give_the_same_bits() {
    let x: Vec<f32> = (0..77)
        .map(|i| (i as f32 * 0.731).sin() * 12.0 - 1.0)
        .collect();
    fn check<F: Function>(isa: Isa, f: F, x: &[f32]) {
        let mut whole = std::vec![0.0f32; x.len()];
        isa.map(f, Some(x), &mut whole);
        for at in 0..=x.len() {
            let mut parts = std::vec![0.0f32; x.len()];
            let (a, b) = parts.split_at_mut(at);
            isa.map(f, Some(&x[..at]), a);
            isa.map(f, Some(&x[at..]), b);
            let same = whole
                .iter()
                .zip(&parts)
                .all(|(p, q)| p.to_bits() == q.to_bits());
            assert!(same, "{f:?} on {isa:?} split at {at}");
        }
        let mut in_place = x.to_vec();
        isa.map(f, None, &mut in_place);
        assert!(whole
            .iter()
            .zip(&in_place)
            .all(|(p, q)| p.to_bits() == q.to_bits()));
    }
    for isa in Isa::available() {
        check(isa, Exp, &x);
        check(isa, Sigmoid, &x);
        check(isa, Silu, &x);
        check(isa, Tanh, &x);
        check(isa, Gelu, &x);
        check(isa, GeluTanh, &x);
        check(isa, Hardswish, &x);
        check(isa, Elu(ALPHA), &x);
    }
}

/// Softmax and log-softmax rows against f64, with their edge rows.
#[test]
fn softmax_rows() {
    for isa in Isa::available() {
        for n in [1usize, 3, 8, 15, 16, 17, 100, 1000] {
            let x: Vec<f32> = (0..n)
                .map(|i| ((i * 7919 % 101) as f32 - 50.0) * 0.37)
                .collect();
            // The reference takes `x - max` as the kernel rounds it, in f32: with the
            // exponential's condition number `|x - max|`, that rounding alone is more
            // than an ulp of the result.
            let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let shifted: Vec<f64> = x.iter().map(|&v| f64::from(v - max)).collect();
            let sum: f64 = shifted.iter().map(|d| d.exp()).sum();
            let mut out = std::vec![0.0f32; n];
            isa.softmax(&x, &mut out);
            let sum_error = (n - 1) as f64 / 2.0;
            for (&d, &y) in shifted.iter().zip(&out) {
                let want = d.exp() / sum;
                // Three roundings (the exponential, the reciprocal, the product) and
                // the f32 sum's worst case, `n - 1` roundings of up to half an ulp.
                let err = (f64::from(y) - want).abs() / ulp(want);
                assert!(
                    err <= 3.0 + sum_error,
                    "softmax {n} on {isa:?}: {y} vs {want}"
                );
            }
            isa.log_softmax(&x, &mut out);
            for (&d, &y) in shifted.iter().zip(&out) {
                // The f32 sum's relative error is an absolute error of `ln(sum)`:
                // measured against `|x - max| + 1`, not a result that cancels to near 0.
                let want = d - sum.ln();
                let err = (f64::from(y) - want).abs() / ulp(d.abs() + 1.0);
                assert!(
                    err <= 2.0 + sum_error,
                    "log_softmax {n} on {isa:?}: {y} vs {want}"
                );
            }
        }
        let mut out = [0.0f32; 3];
        isa.softmax(&[1000.0, 1000.0, f32::NEG_INFINITY], &mut out);
        assert_eq!(out, [0.5, 0.5, 0.0]);
        isa.softmax(&[f32::NAN, 0.0, 1.0], &mut out);
        assert!(out.iter().all(|v| v.is_nan()), "{out:?}");
        isa.softmax(&[f32::NEG_INFINITY; 3], &mut out);
        assert!(out.iter().all(|v| v.is_nan()), "{out:?}");
        isa.softmax(&[], &mut []);
    }
}
