//! update_cache and update_cache_with_indices: exact copies, and refusals that leave the
//! cache as it was.

use std::prelude::rust_2021::*;

use et_runtime::{Arena, Error, KernelContext, KernelResult, ScalarType, TensorBuf};

use crate::ops::{update_cache_out, update_cache_with_indices_out};

fn ctx_call(f: impl FnOnce(&KernelContext<'_>) -> KernelResult) -> KernelResult {
    let mut scratch = [0u8; 64];
    let arena = Arena::new(&mut scratch);
    f(&KernelContext::new(&arena))
}

fn placeholder() -> TensorBuf {
    TensorBuf::zeros(ScalarType::Float, &[1]).unwrap()
}

/// [b, c, h, d] with element (b, p, h, d) = distinct value.
fn iota(sizes: [usize; 4], base: f32) -> TensorBuf {
    let n: usize = sizes.iter().product();
    let v: Vec<f32> = (0..n).map(|i| base + i as f32).collect();
    TensorBuf::from_slice(&sizes, &v).unwrap()
}

#[test]
fn update_cache_writes_every_batch_at_start_pos_and_nothing_else() {
    let (b, c, h, d) = (2, 7, 3, 4);
    for seq in [1, 3] {
        for start in 0..=c - seq {
            let mut cache = iota([b, c, h, d], 1000.0);
            let value = iota([b, seq, h, d], -500.0);
            let before = cache.data::<f32>().unwrap().to_vec();
            ctx_call(|ctx| {
                update_cache_out(ctx, &value, &mut cache, start as i64, &mut placeholder())
            })
            .unwrap();
            let got = cache.data::<f32>().unwrap();
            let vals = value.data::<f32>().unwrap();
            let row = h * d;
            for bi in 0..b {
                for p in 0..c {
                    let at = (bi * c + p) * row;
                    let want = if (start..start + seq).contains(&p) {
                        let from = (bi * seq + p - start) * row;
                        &vals[from..from + row]
                    } else {
                        &before[at..at + row]
                    };
                    assert_eq!(
                        &got[at..at + row],
                        want,
                        "seq {seq} start {start} b {bi} p {p}"
                    );
                }
            }
        }
    }
}

#[test]
fn update_cache_is_bytewise_for_any_dtype() {
    let mut cache = TensorBuf::zeros(ScalarType::Char, &[1, 4, 1, 2]).unwrap();
    let value = TensorBuf::from_slice(&[1, 2, 1, 2], &[1i8, -2, 3, -4]).unwrap();
    ctx_call(|ctx| update_cache_out(ctx, &value, &mut cache, 1, &mut placeholder())).unwrap();
    assert_eq!(cache.data::<i8>().unwrap(), &[0, 0, 1, -2, 3, -4, 0, 0]);
}

#[test]
fn update_cache_refuses_out_of_bounds_and_mismatches_leaving_the_cache() {
    let value = iota([1, 3, 2, 4], 0.0);
    let cases: [(i64, [usize; 4], ScalarType, &str); 7] = [
        (5, [1, 7, 2, 4], ScalarType::Float, "exceeds"),
        (7, [1, 7, 2, 4], ScalarType::Float, "exceeds"),
        (i64::MAX, [1, 7, 2, 4], ScalarType::Float, "exceeds"),
        (-1, [1, 7, 2, 4], ScalarType::Float, "negative"),
        (0, [2, 7, 2, 4], ScalarType::Float, "batch"),
        (0, [1, 7, 3, 4], ScalarType::Float, "heads"),
        (0, [1, 7, 2, 4], ScalarType::Double, "dtype"),
    ];
    for (start, sizes, dtype, want) in cases {
        let mut cache = TensorBuf::zeros(dtype, &sizes).unwrap();
        let before = cache.bytes().unwrap().to_vec();
        let err =
            ctx_call(|ctx| update_cache_out(ctx, &value, &mut cache, start, &mut placeholder()))
                .unwrap_err();
        assert_eq!(err.error, Error::InvalidArgument, "{want}: {err}");
        assert!(err.message().contains(want), "wanted {want:?} in {err}");
        assert_eq!(
            cache.bytes().unwrap(),
            &before[..],
            "{want}: the cache changed"
        );
    }
    let flat = TensorBuf::zeros(ScalarType::Float, &[7, 8]).unwrap();
    let mut cache = iota([1, 7, 2, 4], 0.0);
    let err = ctx_call(|ctx| update_cache_out(ctx, &flat, &mut cache, 0, &mut placeholder()))
        .unwrap_err();
    assert!(err.message().contains("4-D"), "{err}");
}

#[test]
fn update_cache_with_indices_writes_each_position_where_its_index_says() {
    let (b, c, h, d, seq) = (2, 6, 2, 3, 3);
    let indices: [i64; 6] = [5, 0, 2, 1, 4, 3];
    let idx = TensorBuf::from_slice(&[b, seq], &indices).unwrap();
    let mut cache = iota([b, c, h, d], 1000.0);
    let before = cache.data::<f32>().unwrap().to_vec();
    let value = iota([b, seq, h, d], -100.0);
    ctx_call(|ctx| {
        update_cache_with_indices_out(ctx, &value, &mut cache, 99, &idx, &mut placeholder())
    })
    .unwrap();
    let (got, vals, row) = (
        cache.data::<f32>().unwrap(),
        value.data::<f32>().unwrap(),
        h * d,
    );
    let mut want = before.clone();
    for bi in 0..b {
        for s in 0..seq {
            let p = indices[bi * seq + s] as usize;
            let (to, from) = ((bi * c + p) * row, (bi * seq + s) * row);
            want[to..to + row].copy_from_slice(&vals[from..from + row]);
        }
    }
    assert_eq!(got, &want[..]);
}

#[test]
fn update_cache_with_indices_refuses_bad_indices_before_writing() {
    let value = iota([1, 3, 2, 2], 0.0);
    let mut cache = iota([1, 5, 2, 2], 100.0);
    let before = cache.data::<f32>().unwrap().to_vec();
    let bad: [(&[usize], &[i64], &str); 4] = [
        (&[1, 3], &[0, 1, 5], "outside"),
        (&[1, 3], &[0, -1, 2], "outside"),
        (&[1, 2], &[0, 1], "[batch, seq_len]"),
        (&[3], &[0, 1, 2], "2-D"),
    ];
    for (sizes, values, want) in bad {
        let idx = TensorBuf::from_slice(sizes, values).unwrap();
        let err = ctx_call(|ctx| {
            update_cache_with_indices_out(ctx, &value, &mut cache, 0, &idx, &mut placeholder())
        })
        .unwrap_err();
        assert!(err.message().contains(want), "wanted {want:?} in {err}");
        assert_eq!(
            cache.data::<f32>().unwrap(),
            &before[..],
            "{want}: the cache changed"
        );
    }
    let idx32 = TensorBuf::from_slice(&[1, 3], &[0i32, 1, 2]).unwrap();
    let err = ctx_call(|ctx| {
        update_cache_with_indices_out(ctx, &value, &mut cache, 0, &idx32, &mut placeholder())
    })
    .unwrap_err();
    assert!(err.message().contains("int64"), "{err}");
}
