//! Tests of `compute::lut`: every table entry against the reference written out per
//! element, ties and saturation, and LeakyReLU's fixed point against its i64 formula.

extern crate std;

use super::*;
use std::vec::Vec;

fn q(scale: f32, zero_point: i32) -> Quant {
    Quant { scale, zero_point }
}

const FULL: (i8, i8) = (-128, 127);

/// Round half to even, by hand: the nearest integer, and on an exact half the even one.
fn nearest_even(v: f64) -> f64 {
    let floor = v.floor();
    let frac = v - floor;
    if frac > 0.5 || (frac == 0.5 && floor % 2.0 != 0.0) {
        floor + 1.0
    } else {
        floor
    }
}

/// XNNPACK's reference for one int8 input: dequantize, apply `f` (in f32, as its
/// reference kernels), requantize with the reciprocal output scale, round half to even,
/// saturate.
fn reference(v: i8, x: Quant, y: Quant, f: impl Fn(f32) -> f32) -> i8 {
    let real = (v as f32 - x.zero_point as f32) * x.scale;
    let scaled = f(real) * (1.0 / y.scale) + y.zero_point as f32;
    nearest_even(f64::from(scaled)).clamp(-128.0, 127.0) as i8
}

fn check(op: LutOp, x: Quant, y: Quant, f: impl Fn(f32) -> f32) {
    let t = table(op, x, y, FULL);
    let inputs: Vec<i8> = (-128..=127).collect();
    let mut out = [0i8; 256];
    lookup(&t, &inputs, &mut out);
    for (&v, &got) in inputs.iter().zip(&out) {
        assert_eq!(got, reference(v, x, y, &f), "{op:?} at {v}");
    }
}

#[test]
fn lookup_reads_the_table_at_every_length() {
    let t: [i8; 256] = crate::compute::test_bytes(256, 31).try_into().unwrap();
    for len in (0..=70).chain([255, 256, 1000]) {
        let x = crate::compute::test_bytes(len, len as u32);
        let mut out = std::vec![0i8; len];
        lookup(&t, &x, &mut out);
        for (i, (&v, &got)) in x.iter().zip(&out).enumerate() {
            assert_eq!(got, t[usize::from(v as u8)], "length {len} at {i}");
        }
    }
    // Every index, through the vector blocks and the tail.
    let all: Vec<i8> = (0..=255u8).chain(0..=254u8).map(|b| b as i8).collect();
    let mut out = std::vec![0i8; all.len()];
    lookup(&t, &all, &mut out);
    for (&v, &got) in all.iter().zip(&out) {
        assert_eq!(got, t[usize::from(v as u8)], "index {}", v as u8);
    }
}

#[test]
fn tables_match_the_reference_on_all_256_inputs() {
    let elu = |a: f32| {
        move |v: f32| {
            if v < 0.0 {
                a * f64::from(v).exp_m1() as f32
            } else {
                v
            }
        }
    };
    let sigmoid = |v: f32| {
        let e = f64::from(v).exp();
        (e / (1.0 + e)) as f32
    };
    let hswish = |v: f32| v / 6.0 * (v + 3.0).clamp(0.0, 6.0);
    for (x, y) in [
        (q(0.05, -10), q(0.03, -60)),
        (q(0.1, 20), q(0.004, -128)),
        (q(0.02, 0), q(0.0078125, 0)),
    ] {
        check(LutOp::Elu(1.0), x, y, elu(1.0));
        check(LutOp::Elu(0.5), x, y, elu(0.5));
        check(LutOp::Sigmoid, x, y, sigmoid);
        check(LutOp::Tanh, x, y, |v| f64::from(v).tanh() as f32);
        check(LutOp::Hardswish, x, y, hswish);
    }
}

#[test]
fn tables_round_ties_to_even_and_saturate() {
    // Hardswish is the identity from 3 on: inputs 3.5, 4.5, 5.5 at output scale 1.
    let t = table(LutOp::Hardswish, q(0.5, 0), q(1.0, 0), FULL);
    assert_eq!((t[7], t[9], t[11]), (4, 4, 6));
    // Below -3 it is 0: the output zero point.
    assert_eq!(t[(-20i8) as u8 as usize], 0);
    // ELU's floor of -alpha at a fine output scale saturates at -128; large positive
    // inputs saturate at 127.
    let t = table(LutOp::Elu(1.0), q(0.1, 0), q(0.001, 0), FULL);
    assert_eq!((t[(-128i8) as u8 as usize], t[127]), (-128, 127));
    // Sigmoid beyond ±100 is exactly 0 and 1.
    let t = table(LutOp::Sigmoid, q(1.0, 0), q(1.0 / 256.0, -128), FULL);
    assert_eq!((t[(-128i8) as u8 as usize], t[127]), (-128, 127));
    assert_eq!(t[0], 0); // 0.5 * 256 - 128
                         // The node's output range clamps the entries.
    let t = table(LutOp::Tanh, q(0.05, 0), q(0.01, 0), (-50, 60));
    assert!(t.iter().all(|&v| (-50..=60).contains(&v)));
    assert_eq!((t[(-128i8) as u8 as usize], t[127]), (-50, 60));
}

/// The qs8-vlrelu formula in i64, its multipliers computed here from the scales.
fn leaky_reference(v: i8, x: Quant, y: Quant, slope: f32) -> i8 {
    let ratio = x.scale / y.scale;
    let mult = |s: f32| nearest_even(f64::from(256.0 * s)) as i64;
    let d = i64::from(v) - i64::from(x.zero_point);
    let m = if d >= 0 {
        mult(ratio)
    } else {
        mult(ratio * slope)
    };
    let out = (d * m + 128).div_euclid(256) + i64::from(y.zero_point);
    out.clamp(-128, 127) as i8
}

#[test]
fn leaky_relu_matches_its_fixed_point_formula() {
    for (x, y, slope) in [
        (q(0.05, -10), q(0.04, 3), 0.01),
        (q(0.1, 20), q(0.02, -100), 0.2),
        (q(0.02, 0), q(0.05, 0), -0.5),
    ] {
        let p = LeakyParams::new(x, y, slope, FULL).unwrap();
        let inputs: Vec<i8> = (-128..=127).collect();
        let mut out = std::vec![0i8; 256];
        leaky_relu(&p, &inputs, &mut out);
        for (&v, &got) in inputs.iter().zip(&out) {
            assert_eq!(got, leaky_reference(v, x, y, slope), "{v} slope {slope}");
        }
        #[cfg(target_arch = "x86_64")]
        if et_ops::gemm::avx2_fma_available() {
            let mut wide = std::vec![0i8; 256];
            // SAFETY: the CPU supports AVX2 and FMA (checked just above).
            unsafe { leaky_relu_avx2(&p, &inputs, &mut wide) };
            assert_eq!(wide, out);
        }
    }
}

#[test]
fn leaky_relu_rounds_halves_up_and_saturates() {
    // Ratio 0.5 (multiplier 128) both sides: x / 2 with halves toward +inf.
    let p = LeakyParams::new(q(0.5, 0), q(1.0, 0), 1.0, FULL).unwrap();
    assert_eq!((p.positive_multiplier, p.negative_multiplier), (128, 128));
    assert_eq!(
        (p.apply(1), p.apply(-1), p.apply(3), p.apply(-3)),
        (1, 0, 2, -1)
    );
    // A large ratio and output zero point saturate both ways.
    let p = LeakyParams::new(q(1.0, 0), q(0.25, 100), 0.5, FULL).unwrap();
    assert_eq!((p.apply(127), p.apply(-128)), (127, -128));
    // The output range clamps.
    let p = LeakyParams::new(q(1.0, 0), q(1.0, 0), 0.5, (-10, 10)).unwrap();
    assert_eq!((p.apply(50), p.apply(-50)), (10, -10));
    // Outside XNNPACK's ranges: a tiny slope, a ratio too large.
    assert!(LeakyParams::new(q(1.0, 0), q(1.0, 0), 1e-4, FULL).is_none());
    assert!(LeakyParams::new(q(1.0, 0), q(1e-3, 0), 0.1, FULL).is_none());
}
