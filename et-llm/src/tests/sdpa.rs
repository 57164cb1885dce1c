//! The SDPA operators against the f64 reference.

use std::prelude::rust_2021::*;

use et_runtime::{Arena, Error, KernelContext, Parallel, ScalarType, TensorBuf};

use super::reference::{assert_close, attention, Case, Rng};
use crate::ops::{custom_quantized_sdpa_out, custom_sdpa_out, sdpa_with_kv_cache_out};

/// Float attention agrees with the f64 reference to this, relative to max|want|: f32
/// products and sums over head_dim 12..16 and up to ~150 keys, plus expf, stay within a
/// few 1e-7 of it; 1e-5 leaves room without hiding a wrong key or weight (those move
/// outputs by ~1e-1).
const TOL: f64 = 1e-5;

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn buf(sizes: &[usize], v: &[f32]) -> TensorBuf {
    TensorBuf::from_slice(sizes, v).unwrap()
}

/// Runs `f` with a context without a pool.
fn with_ctx<R>(f: impl FnOnce(&KernelContext<'_>) -> R) -> R {
    let mut scratch = [0u8; 64];
    let arena = Arena::new(&mut scratch);
    f(&KernelContext::new(&arena))
}

struct Shape {
    batch: usize,
    seq: usize,
    heads: usize,
    kv_heads: usize,
    dim: usize,
    cache: usize,
}

/// One custom_sdpa call against the reference. Unmasked, the cache past the filled
/// prefix holds NaN: reading any of it would poison the output.
fn check_custom_sdpa(rng: &mut Rng, s: &Shape, start_pos: usize, masked: bool, causal: bool) {
    let q = rng.vec(s.batch * s.seq * s.heads * s.dim);
    let row = s.kv_heads * s.dim;
    let mut k = rng.vec(s.batch * s.cache * row);
    let mut v = rng.vec(s.batch * s.cache * row);
    if !masked {
        for b in 0..s.batch {
            let tail = (b * s.cache + start_pos + s.seq) * row..(b + 1) * s.cache * row;
            k[tail.clone()].fill(f32::NAN);
            v[tail].fill(f32::NAN);
        }
    }
    // Finite additive values and some -inf; column 0 stays finite so no row is empty.
    let mask: Vec<f32> = (0..s.seq * s.cache)
        .map(|i| match (i % s.cache, rng.below(4)) {
            (0, _) | (_, 1..) => rng.f32() * 2.0,
            _ => f32::NEG_INFINITY,
        })
        .collect();
    let scale = if causal { None } else { Some(0.3) };
    let (q64, k64, v64, m64) = (f64s(&q), f64s(&k), f64s(&v), f64s(&mask));
    let want = attention(&Case {
        q: &q64,
        k: &k64,
        v: &v64,
        batch: s.batch,
        seq: s.seq,
        heads: s.heads,
        kv_heads: s.kv_heads,
        dim: s.dim,
        cache: s.cache,
        start_pos,
        mask: masked.then_some((&m64[..], s.cache)),
        causal,
        scale: scale.unwrap_or(1.0 / (s.dim as f64).sqrt()),
    });
    let qs = [s.batch, s.seq, s.heads, s.dim];
    let cs = [s.batch, s.cache, s.kv_heads, s.dim];
    let (qt, kt, vt) = (buf(&qs, &q), buf(&cs, &k), buf(&cs, &v));
    let mt = buf(&[s.seq, s.cache], &mask);
    let mut out = TensorBuf::zeros(ScalarType::Float, &qs).unwrap();
    with_ctx(|ctx| {
        let m = masked.then_some(&*mt);
        custom_sdpa_out(
            ctx,
            &qt,
            &kt,
            &vt,
            start_pos as i64,
            m,
            0.0,
            causal,
            scale,
            &mut out,
        )
    })
    .unwrap();
    let what = std::format!(
        "seq {} heads {}/{} start_pos {start_pos} masked {masked} causal {causal}",
        s.seq,
        s.heads,
        s.kv_heads
    );
    assert_close(out.data::<f32>().unwrap(), &want, TOL, &what);
}

#[test]
fn custom_sdpa_matches_the_reference_at_every_start_pos() {
    let mut rng = Rng(0x5eed);
    for kv_heads in [4, 2, 1] {
        for seq in [1, 3] {
            for dim in [12, 16] {
                let s = Shape {
                    batch: 2,
                    seq,
                    heads: 4,
                    kv_heads,
                    dim,
                    cache: 10,
                };
                for start_pos in 0..=s.cache - seq {
                    for (masked, causal) in [(false, false), (false, true), (true, false)] {
                        check_custom_sdpa(&mut rng, &s, start_pos, masked, causal);
                    }
                }
            }
        }
    }
}

/// More keys than one block (64): the online softmax rescales across blocks.
#[test]
fn custom_sdpa_over_several_key_blocks() {
    let mut rng = Rng(7);
    let s = Shape {
        batch: 1,
        seq: 5,
        heads: 4,
        kv_heads: 2,
        dim: 16,
        cache: 160,
    };
    for start_pos in [0, 59, 60, 64, 130, 155] {
        for (masked, causal) in [(false, false), (false, true), (true, false)] {
            check_custom_sdpa(&mut rng, &s, start_pos, masked, causal);
        }
    }
}

/// Runs every task on its own scoped thread.
struct Scoped(usize);

impl Parallel for Scoped {
    fn workers(&self) -> usize {
        self.0
    }

    fn run(&self, tasks: usize, task: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|s| {
            for i in 0..tasks {
                s.spawn(move || task(i));
            }
        });
    }
}

/// A call big enough to split over a pool gives the one-thread bits.
#[test]
fn custom_sdpa_on_a_pool_is_bit_identical() {
    let mut rng = Rng(99);
    let (seq, heads, kv, dim, cache) = (16, 8, 2, 64, 256);
    let qs = [1, seq, heads, dim];
    let cs = [1, cache, kv, dim];
    let q = buf(&qs, &rng.vec(seq * heads * dim));
    let k = buf(&cs, &rng.vec(cache * kv * dim));
    let v = buf(&cs, &rng.vec(cache * kv * dim));
    let run = |workers: usize| {
        let mut scratch = [0u8; 64];
        let arena = Arena::new(&mut scratch);
        let pool = Scoped(workers);
        let ctx = KernelContext::new(&arena).with_parallel((workers > 1).then_some(&pool as _));
        let mut out = TensorBuf::zeros(ScalarType::Float, &qs).unwrap();
        custom_sdpa_out(&ctx, &q, &k, &v, 200, None, 0.0, true, None, &mut out).unwrap();
        out.data::<f32>().unwrap().to_vec()
    };
    let one = run(1);
    for workers in [2, 3, 5] {
        let many = run(workers);
        assert!(
            one.iter()
                .zip(&many)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{workers} workers"
        );
    }
}

#[test]
fn sdpa_with_kv_cache_updates_then_attends() {
    let mut rng = Rng(3);
    let (seq, heads, kv, dim, cache) = (2, 4, 2, 8, 9);
    let start = 4;
    let q = rng.vec(seq * heads * dim);
    let (kn, vn) = (rng.vec(seq * kv * dim), rng.vec(seq * kv * dim));
    let (k0, v0) = (rng.vec(cache * kv * dim), rng.vec(cache * kv * dim));
    let mut kc = buf(&[1, cache, kv, dim], &k0);
    let mut vc = buf(&[1, cache, kv, dim], &v0);
    let mut out = TensorBuf::zeros(ScalarType::Float, &[1, seq, heads, dim]).unwrap();
    let (qt, kt, vt) = (
        buf(&[1, seq, heads, dim], &q),
        buf(&[1, seq, kv, dim], &kn),
        buf(&[1, seq, kv, dim], &vn),
    );
    with_ctx(|ctx| {
        sdpa_with_kv_cache_out(
            ctx,
            &qt,
            &kt,
            &vt,
            &mut kc,
            &mut vc,
            start as i64,
            seq as i64,
            None,
            0.0,
            true,
            None,
            &mut out,
        )
    })
    .unwrap();
    let (mut k1, mut v1) = (k0.clone(), v0.clone());
    let at = start * kv * dim..(start + seq) * kv * dim;
    k1[at.clone()].copy_from_slice(&kn);
    v1[at].copy_from_slice(&vn);
    assert_eq!(kc.data::<f32>().unwrap(), &k1[..]);
    assert_eq!(vc.data::<f32>().unwrap(), &v1[..]);
    let (q64, k64, v64) = (f64s(&q), f64s(&k1), f64s(&v1));
    let want = attention(&Case {
        q: &q64,
        k: &k64,
        v: &v64,
        batch: 1,
        seq,
        heads,
        kv_heads: kv,
        dim,
        cache,
        start_pos: start,
        mask: None,
        causal: true,
        scale: 1.0 / (dim as f64).sqrt(),
    });
    assert_close(out.data::<f32>().unwrap(), &want, TOL, "sdpa_with_kv_cache");

    // seq_len must be the query's; a bad call leaves the caches as they were.
    let before = kc.data::<f32>().unwrap().to_vec();
    let err = with_ctx(|ctx| {
        sdpa_with_kv_cache_out(
            ctx, &qt, &kt, &vt, &mut kc, &mut vc, 0, 1, None, 0.0, true, None, &mut out,
        )
    })
    .unwrap_err();
    assert!(err.message().contains("seq_len"), "{err}");
    let err = with_ctx(|ctx| {
        sdpa_with_kv_cache_out(
            ctx, &qt, &kt, &vt, &mut kc, &mut vc, 8, 2, None, 0.0, true, None, &mut out,
        )
    })
    .unwrap_err();
    assert!(err.message().contains("exceeds"), "{err}");
    assert_eq!(kc.data::<f32>().unwrap(), &before[..]);
}

/// Int8 operands with a scale and zero point per token and head, in both layouts.
#[test]
fn custom_quantized_sdpa_matches_the_dequantized_reference() {
    let mut rng = Rng(11);
    let (seq, heads, kv, dim, cache) = (3, 4, 2, 16, 12);
    for seq_at_2 in [false, true] {
        for start in [0, 5, 9] {
            // Logical [b, pos, head, d] values, stored in the call's layout.
            let quant = |rng: &mut Rng, n_pos: usize, n_heads: usize| {
                let data: Vec<i8> = (0..n_pos * n_heads * dim)
                    .map(|_| rng.next() as i8)
                    .collect();
                let zps: Vec<i8> = (0..n_pos * n_heads)
                    .map(|_| (rng.below(21) as i8) - 10)
                    .collect();
                let scales: Vec<f32> = (0..n_pos * n_heads)
                    .map(|_| 0.01 + 0.02 * rng.f32().abs())
                    .collect();
                let deq: Vec<f64> = (0..n_pos * n_heads * dim)
                    .map(|i| (data[i] as f64 - zps[i / dim] as f64) * scales[i / dim] as f64)
                    .collect();
                // Stored layout: [1, pos, heads, d] or [1, heads, pos, d].
                let idx = |p: usize, h: usize| {
                    if seq_at_2 {
                        h * n_pos + p
                    } else {
                        p * n_heads + h
                    }
                };
                let mut sd = std::vec![0i8; data.len()];
                let (mut sz, mut ss) = (std::vec![0i8; zps.len()], std::vec![0f32; scales.len()]);
                for p in 0..n_pos {
                    for h in 0..n_heads {
                        let (l, s) = (p * n_heads + h, idx(p, h));
                        sd[s * dim..(s + 1) * dim].copy_from_slice(&data[l * dim..(l + 1) * dim]);
                        sz[s] = zps[l];
                        ss[s] = scales[l];
                    }
                }
                let sizes = if seq_at_2 {
                    [1, n_heads, n_pos, dim]
                } else {
                    [1, n_pos, n_heads, dim]
                };
                let psizes = [sizes[0], sizes[1], sizes[2], 1];
                (
                    buf_i8(&sizes, &sd),
                    buf_i8(&psizes, &sz),
                    buf(&psizes, &ss),
                    deq,
                )
            };
            let (q, qz, qs, q64) = quant(&mut rng, seq, heads);
            let (k, kz, ks, k64) = quant(&mut rng, cache, kv);
            let (v, vz, vs, v64) = quant(&mut rng, cache, kv);
            let want = attention(&Case {
                q: &q64,
                k: &k64,
                v: &v64,
                batch: 1,
                seq,
                heads,
                kv_heads: kv,
                dim,
                cache,
                start_pos: start,
                mask: None,
                causal: true,
                scale: 1.0 / (dim as f64).sqrt(),
            });
            let out_sizes = if seq_at_2 {
                [1, heads, seq, dim]
            } else {
                [1, seq, heads, dim]
            };
            let mut out = TensorBuf::zeros(ScalarType::Float, &out_sizes).unwrap();
            with_ctx(|ctx| {
                custom_quantized_sdpa_out(
                    ctx,
                    &q,
                    &k,
                    &v,
                    start as i64,
                    None,
                    0.0,
                    true,
                    None,
                    Some(&qz),
                    Some(&qs),
                    Some(&kz),
                    Some(&ks),
                    Some(&vz),
                    Some(&vs),
                    seq_at_2,
                    &mut out,
                )
            })
            .unwrap();
            // Back to [1, seq, heads, d] for the comparison.
            let got = out.data::<f32>().unwrap();
            let mut logical = std::vec![0f32; got.len()];
            for p in 0..seq {
                for h in 0..heads {
                    let s = if seq_at_2 { h * seq + p } else { p * heads + h };
                    let l = p * heads + h;
                    logical[l * dim..(l + 1) * dim].copy_from_slice(&got[s * dim..(s + 1) * dim]);
                }
            }
            assert_close(
                &logical,
                &want,
                TOL,
                &std::format!("seq_at_2 {seq_at_2} start {start}"),
            );

            // Every operand needs its parameters.
            let err = with_ctx(|ctx| {
                custom_quantized_sdpa_out(
                    ctx,
                    &q,
                    &k,
                    &v,
                    start as i64,
                    None,
                    0.0,
                    true,
                    None,
                    Some(&qz),
                    Some(&qs),
                    Some(&kz),
                    Some(&ks),
                    None,
                    Some(&vs),
                    seq_at_2,
                    &mut out,
                )
            })
            .unwrap_err();
            assert!(err.message().contains("v_zero_points"), "{err}");
        }
    }
}

fn buf_i8(sizes: &[usize], v: &[i8]) -> TensorBuf {
    TensorBuf::from_slice(sizes, v).unwrap()
}

/// Float operands: custom_quantized_sdpa is custom_sdpa.
#[test]
fn custom_quantized_sdpa_on_floats_is_custom_sdpa() {
    let mut rng = Rng(5);
    let q = buf(&[1, 2, 4, 8], &rng.vec(64));
    let k = buf(&[1, 6, 2, 8], &rng.vec(96));
    let v = buf(&[1, 6, 2, 8], &rng.vec(96));
    let mut a = TensorBuf::zeros(ScalarType::Float, &[1, 2, 4, 8]).unwrap();
    let mut b = TensorBuf::zeros(ScalarType::Float, &[1, 2, 4, 8]).unwrap();
    with_ctx(|ctx| custom_sdpa_out(ctx, &q, &k, &v, 3, None, 0.0, true, None, &mut a)).unwrap();
    with_ctx(|ctx| {
        custom_quantized_sdpa_out(
            ctx, &q, &k, &v, 3, None, 0.0, true, None, None, None, None, None, None, None, false,
            &mut b,
        )
    })
    .unwrap();
    assert_eq!(a.data::<f32>().unwrap(), b.data::<f32>().unwrap());
}

#[test]
fn custom_sdpa_refuses_bad_arguments_with_a_reason() {
    let mut rng = Rng(1);
    let q = buf(&[1, 2, 4, 8], &rng.vec(64));
    let k = buf(&[1, 6, 2, 8], &rng.vec(96));
    let v = buf(&[1, 6, 2, 8], &rng.vec(96));
    let k3 = buf(&[1, 6, 3, 8], &rng.vec(144));
    let k_dim = buf(&[1, 6, 2, 4], &rng.vec(48));
    let mask = buf(&[2, 6], &rng.vec(12));
    let mask_rows = buf(&[3, 6], &rng.vec(18));
    let mask_wide = buf(&[2, 7], &rng.vec(14));
    let q_i64 = TensorBuf::zeros(ScalarType::Long, &[1, 2, 4, 8]).unwrap();
    let q3 = buf(&[2, 4, 8], &rng.vec(64));
    let mut out = TensorBuf::zeros(ScalarType::Float, &[1, 2, 4, 8]).unwrap();
    let mut call = |q: &TensorBuf,
                    k: &TensorBuf,
                    v: &TensorBuf,
                    pos: i64,
                    m: Option<&TensorBuf>,
                    causal: bool| {
        with_ctx(|ctx| {
            custom_sdpa_out(
                ctx,
                q,
                k,
                v,
                pos,
                m.map(|m| &**m),
                0.0,
                causal,
                None,
                &mut out,
            )
        })
    };
    let cases: [(&str, Result<(), et_runtime::KernelError>); 9] = [
        ("exceeds", call(&q, &k, &v, 5, None, true)),
        ("negative", call(&q, &k, &v, -1, None, true)),
        ("multiple", call(&q, &k3, &k3, 0, None, true)),
        ("same shape", call(&q, &k, &k3, 0, None, true)),
        ("head_dim", call(&q, &k_dim, &k_dim, 0, None, true)),
        ("cannot both", call(&q, &k, &v, 0, Some(&mask), true)),
        ("one row per", call(&q, &k, &v, 0, Some(&mask_rows), false)),
        ("more columns", call(&q, &k, &v, 0, Some(&mask_wide), false)),
        ("4-D", call(&q3, &k, &v, 0, None, true)),
    ];
    for (want, got) in cases {
        let err = got.expect_err(want);
        assert_eq!(err.error, Error::InvalidArgument, "{want}: {err}");
        assert!(err.message().contains(want), "wanted {want:?} in {err}");
    }
    let err = call(&q_i64, &k, &v, 0, None, true).unwrap_err();
    assert!(err.message().contains("float32"), "{err}");
}
