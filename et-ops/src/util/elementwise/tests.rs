//! The drivers' paths, broadcasting and the walk, against hand-computed results.

extern crate std;
use super::*;
use et_runtime::{f16, Bool, Element, ShapeDynamism, TensorBuf};
use std::vec;
use std::vec::Vec;

use et_runtime::AllDtypes;

fn vals<T: Element>(t: &Tensor) -> Vec<T> {
    t.data::<T>().unwrap().to_vec()
}

#[test]
fn broadcast_shapes_rules() {
    let s = broadcast_shapes(&[&[3, 1, 5], &[4, 1]]).unwrap();
    assert_eq!(s.as_slice(), &[3, 4, 5]);
    assert_eq!(broadcast_shapes(&[&[], &[2]]).unwrap().as_slice(), &[2]);
    assert_eq!(broadcast_shapes(&[&[0], &[1]]).unwrap().as_slice(), &[0]);
    assert!(broadcast_shapes(&[&[3], &[4]]).is_err());
}

#[test]
fn walk_coalesces_and_visits_memory_order() {
    // Same layout: one run.
    let w = RunWalk::<2>::new(&[2, 3, 4], &[0, 1, 2], [(&[2, 3, 4], &[12, 4, 1]); 2]).unwrap();
    assert_eq!((w.run_len(), w.inner_strides()), (24, [1, 1]));
    // Broadcast a [3, 1] operand over [3, 4].
    let w = RunWalk::<2>::new(&[3, 4], &[0, 1], [(&[3, 4], &[4, 1]), (&[3, 1], &[1, 1])]).unwrap();
    let mut runs = Vec::new();
    w.for_each_run(|o, n| {
        runs.push((o, n));
        Ok(())
    })
    .unwrap();
    assert_eq!(w.inner_strides(), [1, 0]);
    assert_eq!(runs, [([0, 0], 4), ([4, 1], 4), ([8, 2], 4)]);
    // Channels-last out, contiguous input: runs follow the out's memory.
    let w = RunWalk::<2>::new(
        &[1, 2, 2, 3],
        &[0, 2, 3, 1],
        [
            (&[1, 2, 2, 3], &[12, 1, 6, 2]),
            (&[1, 2, 2, 3], &[12, 6, 3, 1]),
        ],
    )
    .unwrap();
    assert_eq!(w.inner_strides(), [1, 6]);
    assert_eq!(w.run_len(), 2);
    let mut offs = Vec::new();
    w.for_each_run(|o, _| {
        offs.push(o);
        Ok(())
    })
    .unwrap();
    assert_eq!(offs, [[0, 0], [2, 1], [4, 2], [6, 3], [8, 4], [10, 5]]);
    assert!(RunWalk::<2>::new(&[3], &[0], [(&[3], &[1]), (&[2], &[1])]).is_err());
}

#[test]
fn binary_fast_and_broadcast_paths() {
    {
        let a = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2., 3., 4., 5., 6.]).unwrap();
        let b = TensorBuf::from_slice(&[2, 3], &[10.0f32, 20., 30., 40., 50., 60.]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Float, &[2, 3]).unwrap();
        binary::<f32, f32, AllDtypes>(&a, &b, &mut out, ScalarType::Float, |x, y| x + y).unwrap();
        assert_eq!(vals::<f32>(&out), [11., 22., 33., 44., 55., 66.]);
        let row = TensorBuf::from_slice(&[3], &[1.0f32, 2., 3.]).unwrap();
        binary::<f32, f32, AllDtypes>(&a, &row, &mut out, ScalarType::Float, |x, y| x * y).unwrap();
        assert_eq!(vals::<f32>(&out), [1., 4., 9., 4., 10., 18.]);
        let col = TensorBuf::from_slice(&[2, 1], &[1.0f32, -1.]).unwrap();
        binary::<f32, f32, AllDtypes>(&col, &a, &mut out, ScalarType::Float, |x, y| x * y).unwrap();
        assert_eq!(vals::<f32>(&out), [1., 2., 3., -4., -5., -6.]);
    }
}

#[test]
fn mixed_dtypes_promote_and_round() {
    // int32 + float32 -> float32.
    let a = TensorBuf::from_slice(&[3], &[1i32, 2, 3]).unwrap();
    let b = TensorBuf::from_slice(&[3], &[0.5f32, 0.25, -1.0]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
    binary::<f32, f32, AllDtypes>(&a, &b, &mut out, ScalarType::Float, |x, y| x + y).unwrap();
    assert_eq!(vals::<f32>(&out), [1.5, 2.25, 2.0]);
    // int8 results wrap.
    let a = TensorBuf::from_slice(&[2], &[100i8, -100]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Char, &[2]).unwrap();
    binary::<i64, i64, AllDtypes>(&a, &a, &mut out, ScalarType::Char, |x, y| x.add(y)).unwrap();
    assert_eq!(vals::<i8>(&out), [-56, 56]);
    // int8 result widened into an int32 out: wrapped first, as PyTorch computes in int8.
    let mut out32 = TensorBuf::zeros(ScalarType::Int, &[2]).unwrap();
    binary::<i64, i64, AllDtypes>(&a, &a, &mut out32, ScalarType::Char, |x, y| x.add(y)).unwrap();
    assert_eq!(vals::<i32>(&out32), [-56, 56]);
    // float16: computed in f32, rounded once.
    let h = TensorBuf::from_slice(&[2], &[f16::from_f32(1.0), f16::from_f32(2048.0)]).unwrap();
    let mut outh = TensorBuf::zeros(ScalarType::Half, &[2]).unwrap();
    binary::<f32, f32, AllDtypes>(&h, &h, &mut outh, ScalarType::Half, |x, y| x + y * 0.5).unwrap();
    assert_eq!(
        vals::<f16>(&outh),
        [f16::from_f32(1.5), f16::from_f32(3072.0)]
    );
    // Float result into an int out is rejected.
    let mut bad = TensorBuf::zeros(ScalarType::Int, &[3]).unwrap();
    let b3 = TensorBuf::from_slice(&[3], &[0.5f32, 0.25, -1.0]).unwrap();
    assert!(
        binary::<f32, f32, AllDtypes>(&b3, &b3, &mut bad, ScalarType::Float, |x, y| x + y).is_err()
    );
}

#[test]
fn comparison_results_and_layouts() {
    let a = TensorBuf::from_slice(&[2, 2], &[1.0f64, 5., 3., 4.]).unwrap();
    let b = TensorBuf::from_slice(&[], &[3.0f64]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Bool, &[2, 2]).unwrap();
    binary::<f64, Bool, AllDtypes>(&a, &b, &mut out, ScalarType::Double, |x, y| {
        Bool::from(x < y)
    })
    .unwrap();
    assert_eq!(vals::<Bool>(&out), [Bool(1), Bool(0), Bool(0), Bool(0)]);
    // A channels-last out from contiguous inputs: values land at the out's strides.
    let x = TensorBuf::from_slice(&[1, 2, 1, 2], &[1i32, 2, 3, 4]).unwrap();
    let mut cl = TensorBuf::with_layout(
        ScalarType::Int,
        &[1, 2, 1, 2],
        &[0, 2, 3, 1],
        ShapeDynamism::Static,
    )
    .unwrap();
    unary::<i64, i64, AllDtypes>(&x, &mut cl, ScalarType::Int, |v| v.mul(10)).unwrap();
    // Memory order (n, h, w, c): (w0,c0)=10, (w0,c1)=30, (w1,c0)=20, (w1,c1)=40.
    assert_eq!(vals::<i32>(&cl), [10, 30, 20, 40]);
}

#[test]
fn resize_and_empty() {
    let a = TensorBuf::from_slice(&[2], &[1.0f32, 2.0]).unwrap();
    let b = TensorBuf::from_slice(&[3, 1], &[1.0f32, 2.0, 3.0]).unwrap();
    let mut out =
        TensorBuf::with_layout(ScalarType::Float, &[4, 4], &[0, 1], ShapeDynamism::Bound).unwrap();
    binary::<f32, f32, AllDtypes>(&a, &b, &mut out, ScalarType::Float, |x, y| x - y).unwrap();
    assert_eq!(out.sizes(), &[3, 2]);
    assert_eq!(vals::<f32>(&out), [0., 1., -1., 0., -2., -1.]);
    let mut wrong = TensorBuf::zeros(ScalarType::Float, &[3, 3]).unwrap();
    assert!(
        binary::<f32, f32, AllDtypes>(&a, &b, &mut wrong, ScalarType::Float, |x, y| x - y).is_err()
    );
    let e = TensorBuf::zeros(ScalarType::Float, &[0, 2]).unwrap();
    let mut eo = TensorBuf::zeros(ScalarType::Float, &[0, 2]).unwrap();
    binary::<f32, f32, AllDtypes>(&e, &a, &mut eo, ScalarType::Float, |x, y| x + y).unwrap();
}

#[test]
fn ternary_where_with_bool_condition() {
    let c = TensorBuf::from_slice(&[3], &[Bool(1), Bool(0), Bool(1)]).unwrap();
    let x = TensorBuf::from_slice(&[3], &[1.0f32, 2., 3.]).unwrap();
    let y = TensorBuf::from_slice(&[], &[-1.0f32]).unwrap();
    let mut out = TensorBuf::zeros(ScalarType::Float, &[3]).unwrap();
    ternary::<f32, f32, AllDtypes>(&c, &x, &y, &mut out, ScalarType::Float, |c, x, y| {
        if c != 0.0 {
            x
        } else {
            y
        }
    })
    .unwrap();
    assert_eq!(vals::<f32>(&out), [1., -1., 3.]);
}

/// A deterministic xorshift generator for the randomized layout test.
struct Rng(u64);
impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Element at logical index `idx` (right-aligned broadcasting against `idx`'s rank).
fn logical_f64(t: &Tensor, idx: &[usize]) -> f64 {
    let lead = idx.len() - t.dim();
    let off: usize = (0..t.dim())
        .map(|d| {
            if t.size(d) == 1 {
                0
            } else {
                idx[lead + d] * t.strides()[d]
            }
        })
        .sum();
    match t.dtype() {
        ScalarType::Int => t.data::<i32>().unwrap()[off] as f64,
        ScalarType::Char => t.data::<i8>().unwrap()[off] as f64,
        ScalarType::Float => t.data::<f32>().unwrap()[off] as f64,
        _ => t.data::<f64>().unwrap()[off],
    }
}

fn random_tensor(rng: &mut Rng, shape: &[usize], dtype: ScalarType) -> TensorBuf {
    // Broadcast some dims (size 1), maybe drop leading dims, random dim order.
    let drop = rng.next(shape.len() + 1).min(shape.len());
    let sizes: Vec<usize> = shape[drop..]
        .iter()
        .map(|&n| if rng.next(3) == 0 { 1 } else { n })
        .collect();
    let mut order: Vec<u8> = (0..sizes.len() as u8).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.next(i + 1));
    }
    let mut t = TensorBuf::with_layout(dtype, &sizes, &order, ShapeDynamism::Static).unwrap();
    let n = t.numel();
    let vals: Vec<i32> = (0..n).map(|_| rng.next(200) as i32 - 100).collect();
    match dtype {
        ScalarType::Int => t.data_mut::<i32>().unwrap().copy_from_slice(&vals),
        ScalarType::Char => {
            for (d, v) in t.data_mut::<i8>().unwrap().iter_mut().zip(&vals) {
                *d = *v as i8;
            }
        }
        ScalarType::Float => {
            for (d, v) in t.data_mut::<f32>().unwrap().iter_mut().zip(&vals) {
                *d = *v as f32 * 0.5;
            }
        }
        _ => {
            for (d, v) in t.data_mut::<f64>().unwrap().iter_mut().zip(&vals) {
                *d = *v as f64 * 0.25;
            }
        }
    }
    t
}

#[test]
fn random_layouts_match_a_logical_reference() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let dtypes = [
        ScalarType::Int,
        ScalarType::Char,
        ScalarType::Float,
        ScalarType::Double,
    ];
    for _ in 0..400 {
        let rank = rng.next(5);
        let shape: Vec<usize> = (0..rank).map(|_| 1 + rng.next(4)).collect();
        let (da, db) = (dtypes[rng.next(4)], dtypes[rng.next(4)]);
        let a = random_tensor(&mut rng, &shape, da);
        let b = random_tensor(&mut rng, &shape, db);
        let common = crate::util::promote::result_type(&a, &b).unwrap();
        let bshape = broadcast_shapes(&[a.sizes(), b.sizes()]).unwrap();
        let bshape = bshape.as_slice();
        let mut order: Vec<u8> = (0..bshape.len() as u8).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.next(i + 1));
        }
        let mut out =
            TensorBuf::with_layout(ScalarType::Double, bshape, &order, ShapeDynamism::Static)
                .unwrap();
        if common.is_floating() {
            binary::<f64, f64, AllDtypes>(&a, &b, &mut out, ScalarType::Double, |x, y| x * 3.0 - y)
                .unwrap();
        } else {
            binary::<i64, i64, AllDtypes>(&a, &b, &mut out, common, |x, y| x.mul(3).sub(y))
                .unwrap();
        }
        // Visit every logical index of the broadcast shape.
        let n: usize = bshape.iter().product();
        for lin in 0..n {
            let mut idx = vec![0usize; bshape.len()];
            let mut r = lin;
            for d in (0..bshape.len()).rev() {
                idx[d] = r % bshape[d];
                r /= bshape[d];
            }
            let mut want = logical_f64(&a, &idx) * 3.0 - logical_f64(&b, &idx);
            if common == ScalarType::Char {
                want = (want as i64 as i8) as f64;
            } else if common == ScalarType::Int {
                want = (want as i64 as i32) as f64;
            }
            let got = logical_f64(&out, &idx);
            assert_eq!(got, want, "{:?} {:?} -> {:?} at {idx:?}", a, b, out);
        }
    }
}

#[test]
fn integer_semantics() {
    assert_eq!(Compute::floor_div(-7i64, 2), -4);
    assert_eq!(Compute::trunc_div(-7i64, 2), -3);
    assert_eq!(Compute::remainder(-7i64, 3), 2);
    assert_eq!(Compute::remainder(7i64, -3), -2);
    assert_eq!(Compute::floor_div(i64::MIN, -1), i64::MIN);
    assert_eq!(Compute::power(3i64, 4), 81);
    assert_eq!(Compute::power(-1i64, -3), -1);
    assert_eq!(Compute::power(2i64, -1), 0);
    assert_eq!(Compute::absolute(i64::MIN), i64::MIN);
    assert_eq!(Compute::floor_div(-7.0f64, 2.0), -4.0);
    assert_eq!(Compute::remainder(-7.0f32, 3.0), 2.0);
    assert_eq!(Compute::remainder(5.0f32, -3.0), -1.0);
    assert!(Compute::max_nan(f32::NAN, 1.0).is_nan());
    assert!(Compute::min_nan(1.0, f64::NAN).is_nan());
    assert_eq!(Compute::sign(f32::NAN), 0.0);
    assert_eq!(Compute::floor_div(1.0f32, 0.0), f32::INFINITY);
}

/// A function with a vectorized f32 form runs that form whenever the compute type is f32
/// (in place on f32 storage, through converted chunks on float16 storage, longer than
/// one chunk here), and its per-element form on f64. The two forms differ on purpose.
#[test]
fn vectorized_form_runs_for_f32_compute() {
    let map = SliceMap1 {
        each: |x| x * 3.0,
        f32_slices: |x: &[f32], y: &mut [f32]| y.iter_mut().zip(x).for_each(|(y, x)| *y = x * 2.0),
    };
    let n = CHUNK * 2 + 5;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25).collect();
    let mut y = vec![0.0f32; n];
    MapK::<f32, f32, 1>::run::<f32, f32>(&map, [&x], &mut y);
    assert!(y.iter().zip(&x).all(|(y, x)| *y == x * 2.0));
    let h: Vec<f16> = x.iter().map(|&v| f16::from_f32(v)).collect();
    let mut hy = vec![f16::from_f32(0.0); n];
    MapK::<f32, f32, 1>::run::<f16, f16>(&map, [&h], &mut hy);
    assert!(hy.iter().zip(&x).all(|(y, x)| y.to_f32() == x * 2.0));
    let map64 = SliceMap1 {
        each: |x: f64| x * 3.0,
        f32_slices: |_: &[f32], _: &mut [f32]| unreachable!("f64 computes per element"),
    };
    let d: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let mut dy = vec![0.0f64; n];
    MapK::<f64, f64, 1>::run::<f64, f64>(&map64, [&d], &mut dy);
    assert!(dy.iter().zip(&d).all(|(y, x)| *y == x * 3.0));
}
