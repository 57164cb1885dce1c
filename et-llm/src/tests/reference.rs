//! The reference: attention as its definition reads, in f64, one score row at a time
//! (`softmax(q . K^T * scale + mask) V`), no blocking, no online rescaling. A small
//! deterministic PRNG for the inputs.

use std::prelude::rust_2021::*;

/// xorshift64*: deterministic, dependency-free inputs.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in [-1, 1).
    pub fn f32(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f32()).collect()
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One attention problem in ExecuTorch's layout: q [b, s, h, d], caches [b, c, hk, d],
/// an optional mask [s, keys].
pub struct Case<'a> {
    pub q: &'a [f64],
    pub k: &'a [f64],
    pub v: &'a [f64],
    pub batch: usize,
    pub seq: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub dim: usize,
    pub cache: usize,
    pub start_pos: usize,
    pub mask: Option<(&'a [f64], usize)>,
    pub causal: bool,
    pub scale: f64,
}

/// The attention output [b, s, h, d].
pub fn attention(c: &Case<'_>) -> Vec<f64> {
    let (d, hk_of) = (c.dim, |h: usize| h / (c.heads / c.kv_heads));
    let mut out = std::vec![0f64; c.batch * c.seq * c.heads * d];
    for b in 0..c.batch {
        for s in 0..c.seq {
            for h in 0..c.heads {
                let qo = ((b * c.seq + s) * c.heads + h) * d;
                let q = &c.q[qo..qo + d];
                let keys = match c.mask {
                    Some((_, cols)) => cols,
                    None => c.start_pos + c.seq,
                };
                let mut scores = Vec::new();
                for key in 0..keys {
                    let ko = ((b * c.cache + key) * c.kv_heads + hk_of(h)) * d;
                    let mut x: f64 = (0..d).map(|i| q[i] * c.k[ko + i]).sum::<f64>() * c.scale;
                    if let Some((m, cols)) = c.mask {
                        x += m[s * cols + key];
                    }
                    if c.causal && key > c.start_pos + s {
                        x = f64::NEG_INFINITY;
                    }
                    scores.push(x);
                }
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
                let sum: f64 = w.iter().sum();
                let o = &mut out[qo..qo + d];
                for (key, wk) in w.iter().enumerate() {
                    let vo = ((b * c.cache + key) * c.kv_heads + hk_of(h)) * d;
                    for (oi, vi) in o.iter_mut().zip(&c.v[vo..vo + d]) {
                        *oi += wk / sum * vi;
                    }
                }
            }
        }
    }
    out
}

/// The largest `|got - want|` relative to `max|want|`; panics past `tol`.
pub fn assert_close(got: &[f32], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want.iter().fold(1e-30f64, |m, w| m.max(w.abs()));
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let e = (g as f64 - w).abs() / scale;
        assert!(
            e <= tol,
            "{what}: element {i}: got {g}, want {w} (error {e:e} of max|want| > {tol:e})"
        );
    }
}
