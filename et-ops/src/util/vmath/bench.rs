//! Throughput of each function against the per-element libm loop it replaces:
//! `cargo test -p et-ops --release --lib -- --ignored --nocapture bench_vmath`.

extern crate std;
use std::time::Instant;
use std::vec::Vec;

/// An EfficientNet-B0 stage's activation: 112 x 112 x 96 floats.
const ELEMENTS: usize = 112 * 112 * 96;

/// Nanoseconds per element of `f` over `x`, the best of a few runs.
fn ns_per_element(x: &[f32], out: &mut [f32], mut f: impl FnMut(&[f32], &mut [f32])) -> f64 {
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

#[test]
#[ignore = "timing"]
fn bench_vmath() {
    let x: Vec<f32> = (0..ELEMENTS)
        .map(|i| ((i * 7919) % 2001) as f32 / 100.0 - 10.0)
        .collect();
    let mut out = std::vec![0.0f32; ELEMENTS];
    type Pair = (&'static str, fn(&[f32], &mut [f32]), fn(&[f32], &mut [f32]));
    let pairs: [Pair; 5] = [
        ("exp", super::exp, |x, o| each(x, o, libm::expf)),
        ("sigmoid", super::sigmoid, |x, o| {
            each(x, o, |v| 1.0 / (1.0 + libm::expf(-v)))
        }),
        ("tanh", super::tanh, |x, o| each(x, o, libm::tanhf)),
        ("gelu", super::gelu, |x, o| {
            each(x, o, |v| {
                0.5 * v * (1.0 + libm::erff(v * core::f32::consts::FRAC_1_SQRT_2))
            })
        }),
        (
            "elu",
            |x, o| super::elu(x, 1.0, o),
            |x, o| each(x, o, |v| if v > 0.0 { v } else { libm::expm1f(v) }),
        ),
    ];
    for (name, fast, libm) in pairs {
        let new = ns_per_element(&x, &mut out, fast);
        let old = ns_per_element(&x, &mut out, libm);
        std::eprintln!(
            "{name:>8}: {new:.3} ns/element, libm {old:.3} ({:.1}x)",
            old / new
        );
    }
    let rows = 1000;
    let new = ns_per_element(&x, &mut out, |x, o| {
        for (r, w) in x.chunks(rows).zip(o.chunks_mut(rows)) {
            super::softmax(r, w);
        }
    });
    let old = ns_per_element(&x, &mut out, |x, o| {
        for (r, w) in x.chunks(rows).zip(o.chunks_mut(rows)) {
            let max = r.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let mut sum = 0.0;
            for (d, &v) in w.iter_mut().zip(r) {
                *d = libm::expf(v - max);
                sum += *d;
            }
            w.iter_mut().for_each(|d| *d /= sum);
        }
    });
    std::eprintln!(
        " softmax: {new:.3} ns/element, libm {old:.3} ({:.1}x)",
        old / new
    );
}
