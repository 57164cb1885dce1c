//! Throughput of each function on every instruction set this machine runs, against the
//! per-element libm loop it replaces:
//! `cargo test -p et-ops --release --lib -- --ignored --nocapture bench_vmath`.

extern crate std;
use std::time::Instant;
use std::vec::Vec;

use super::functions::{Elu, Exp, Gelu, Sigmoid, Tanh};
use super::Isa;

/// An EfficientNet-B0 stage's activation: 112 x 112 x 96 floats.
const ELEMENTS: usize = 112 * 112 * 96;

/// Nanoseconds per element of `f` over `x`, the best of a few runs.
fn ns_per_element(x: &[f32], out: &mut [f32], f: &dyn Fn(&[f32], &mut [f32])) -> f64 {
    (0..5)
        .map(|_| {
            let start = Instant::now();
            f(x, out);
            start.elapsed().as_secs_f64() * 1e9 / x.len() as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn each(x: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

/// Softmax over rows of 1000 (a classifier's logits).
fn rows(x: &[f32], out: &mut [f32], row: impl Fn(&[f32], &mut [f32])) {
    for (r, w) in x.chunks(1000).zip(out.chunks_mut(1000)) {
        row(r, w);
    }
}

fn libm_softmax(r: &[f32], w: &mut [f32]) {
    let max = r.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for (d, &v) in w.iter_mut().zip(r) {
        *d = libm::expf(v - max);
        sum += *d;
    }
    w.iter_mut().for_each(|d| *d /= sum);
}

type Vectorized = fn(Isa, &[f32], &mut [f32]);
type Scalar = fn(&[f32], &mut [f32]);

#[test]
#[ignore = "timing"]
fn bench_vmath() {
    let x: Vec<f32> = (0..ELEMENTS)
        .map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0)
        .collect();
    let mut out = std::vec![0.0f32; ELEMENTS];
    let cases: [(&str, Vectorized, Scalar); 6] = [
        (
            "exp",
            |i, x, o| i.map(Exp, Some(x), o),
            |x, o| each(x, o, libm::expf),
        ),
        (
            "sigmoid",
            |i, x, o| i.map(Sigmoid, Some(x), o),
            |x, o| each(x, o, |v| 1.0 / (1.0 + libm::expf(-v))),
        ),
        (
            "tanh",
            |i, x, o| i.map(Tanh, Some(x), o),
            |x, o| each(x, o, libm::tanhf),
        ),
        (
            "gelu",
            |i, x, o| i.map(Gelu, Some(x), o),
            |x, o| {
                each(x, o, |v| {
                    0.5 * v * (1.0 + libm::erff(v * core::f32::consts::FRAC_1_SQRT_2))
                })
            },
        ),
        (
            "elu",
            |i, x, o| i.map(Elu(1.0), Some(x), o),
            |x, o| each(x, o, |v| if v > 0.0 { v } else { libm::expm1f(v) }),
        ),
        (
            "softmax",
            |i, x, o| rows(x, o, |r, w| i.softmax(r, w)),
            |x, o| rows(x, o, libm_softmax),
        ),
    ];
    for (name, vectorized, scalar) in cases {
        let old = ns_per_element(&x, &mut out, &scalar);
        std::eprint!("{name:>8}: libm {old:.2} ns/element;");
        for isa in Isa::available() {
            let new = ns_per_element(&x, &mut out, &|x, o| vectorized(isa, x, o));
            std::eprint!(" {isa:?} {new:.2} ({:.0}x)", old / new);
        }
        std::eprintln!();
    }
}
