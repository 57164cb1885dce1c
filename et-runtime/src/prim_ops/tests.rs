//! The prim ops called the way a method calls them, through the registry.

use core::ptr::NonNull;

use crate::error::{Error, KernelError};
use crate::kernel::{call_entry, CallArg, KernelArgs, KernelContext};
use crate::memory::Arena;
use crate::tensor::{ShapeDynamism, ShapeStorage, Tensor};
use crate::value::Value;
use et_schema::scalar_type::ScalarType;

/// Calls prim op `name` with `values` (the last one is the return slot); returns the
/// result and the return slot afterwards.
fn call(name: &str, values: &mut [Value]) -> (Result<(), KernelError>, Value) {
    let (op, overload) = name.split_once('.').unwrap_or((name, ""));
    let entry = crate::registry::find_kernel(op, overload, None).expect("registered");
    let idx: [u32; 4] = [0, 1, 2, 3];
    let n = values.len();
    let temp = Arena::empty();
    let ctx = KernelContext::new(&temp);
    // SAFETY: the indices are in range of `values`, which outlives the call.
    let args = unsafe { KernelArgs::new(NonNull::from(&mut *values).cast(), &idx[..n], n - 1) };
    let r = (entry.function)(&ctx, &args);
    (r, values[n - 1])
}

fn int(name: &str, a: Value, b: Value) -> i64 {
    match call(name, &mut [a, b, Value::None]) {
        (Ok(()), Value::Int(v)) => v,
        (r, _) => panic!("{name}: {r:?}"),
    }
}

fn double(name: &str, a: Value, b: Value) -> f64 {
    match call(name, &mut [a, b, Value::None]) {
        (Ok(()), Value::Double(v)) => v,
        (r, _) => panic!("{name}: {r:?}"),
    }
}

fn boolean(name: &str, a: Value, b: Value) -> bool {
    match call(name, &mut [a, b, Value::None]) {
        (Ok(()), Value::Bool(v)) => v,
        (r, _) => panic!("{name}: {r:?}"),
    }
}

fn unary(name: &str, a: Value) -> Value {
    match call(name, &mut [a, Value::None]) {
        (Ok(()), v) => v,
        (r, _) => panic!("{name}: {r:?}"),
    }
}

fn unary_err(name: &str, a: Value) -> KernelError {
    call(name, &mut [a, Value::None]).0.unwrap_err()
}

use Value::{Bool as B, Double as D, Int as I};

#[test]
fn scalar_arithmetic() {
    assert_eq!(int("executorch_prim::add.Scalar", I(2), I(3)), 5);
    assert_eq!(int("executorch_prim::add.Scalar", B(true), I(3)), 4);
    assert_eq!(double("executorch_prim::add.Scalar", I(2), D(0.5)), 2.5);
    assert_eq!(int("executorch_prim::sub.Scalar", I(2), I(3)), -1);
    assert_eq!(int("executorch_prim::mul.Scalar", I(i64::MAX), I(2)), -2);
    assert_eq!(double("executorch_prim::mul.Scalar", D(1.5), I(2)), 3.0);
    assert_eq!(int("executorch_prim::floordiv.Scalar", I(-7), I(2)), -4);
    assert_eq!(int("executorch_prim::floordiv.Scalar", I(7), I(2)), 3);
    assert_eq!(
        double("executorch_prim::floordiv.Scalar", D(-7.0), I(2)),
        -4.0
    );
    assert_eq!(int("executorch_prim::mod.Scalar", I(-7), I(2)), 1);
    assert_eq!(int("executorch_prim::mod.Scalar", I(7), I(-2)), -1);
    assert_eq!(double("executorch_prim::mod.Scalar", D(-7.5), I(2)), 0.5);
    assert_eq!(int("executorch_prim::sym_max.Scalar", I(1), I(2)), 2);
    assert_eq!(int("executorch_prim::sym_min.Scalar", I(1), I(2)), 1);
    assert_eq!(double("executorch_prim::sym_max.Scalar", D(1.5), I(1)), 1.5);
    assert_eq!(double("executorch_prim::sym_min.Scalar", D(1.5), I(1)), 1.0);
    assert!(double("executorch_prim::sym_max.Scalar", D(f64::NAN), I(1)).is_nan());
    assert!(double("executorch_prim::sym_min.Scalar", I(1), D(f64::NAN)).is_nan());
    assert!(double("executorch_prim::sym_max.Scalar", I(1), D(f64::NAN)).is_nan());
    assert!(double("executorch_prim::sym_min.Scalar", D(f64::NAN), I(1)).is_nan());
    let max = double("executorch_prim::sym_max.Scalar", D(-0.0), D(0.0));
    assert!(max == 0.0 && max.is_sign_negative());
    let min = double("executorch_prim::sym_min.Scalar", D(0.0), D(-0.0));
    assert!(min == 0.0 && min.is_sign_positive());
    assert_eq!(double("executorch_prim::truediv.Scalar", I(1), I(2)), 0.5);
    assert_eq!(int("executorch_prim::floordiv.int", I(-7), I(2)), -4);
    assert_eq!(int("executorch_prim::mod.int", I(-7), I(2)), 1);
    for name in [
        "executorch_prim::floordiv.Scalar",
        "executorch_prim::mod.Scalar",
        "executorch_prim::floordiv.int",
        "executorch_prim::mod.int",
    ] {
        let (r, slot) = call(name, &mut [I(1), I(0), Value::None]);
        assert_eq!(r.unwrap_err().error, Error::InvalidArgument, "{name}");
        assert!(matches!(slot, Value::None));
    }
    // Int-only ops refuse doubles and bools: their signature does, before the shared
    // `mod.Scalar` / `floordiv.Scalar` function runs.
    for name in ["executorch_prim::mod", "executorch_prim::floordiv"] {
        let entry = crate::registry::find_kernel(name, "int", None).expect("registered");
        let temp = Arena::empty();
        let ctx = KernelContext::new(&temp);
        for bad in [CallArg::Double(1.0), CallArg::Bool(true)] {
            let r = call_entry(entry, &ctx, &mut [bad, CallArg::Int(2)]);
            assert_eq!(r.unwrap_err().error, Error::InvalidProgram, "{name}");
        }
    }
    let (r, _) = call(
        "executorch_prim::add.Scalar",
        &mut [I(1), Value::None, Value::None],
    );
    assert_eq!(r.unwrap_err().error, Error::InvalidProgram);
}

#[test]
fn scalar_comparisons() {
    assert!(boolean("executorch_prim::eq.Scalar", I(1), D(1.0)));
    assert!(!boolean("executorch_prim::eq.Scalar", I(1), I(2)));
    assert!(boolean("executorch_prim::lt.Scalar", I(1), I(2)));
    assert!(boolean("executorch_prim::le.Scalar", I(2), I(2)));
    assert!(boolean("executorch_prim::gt.Scalar", D(2.5), I(2)));
    assert!(boolean("executorch_prim::ge.Scalar", B(true), I(1)));
    assert!(!boolean("executorch_prim::gt.Scalar", D(f64::NAN), I(1)));
    assert!(!boolean("executorch_prim::le.Scalar", D(f64::NAN), I(1)));
    assert!(!boolean(
        "executorch_prim::eq.Scalar",
        D(f64::NAN),
        D(f64::NAN)
    ));
}

#[test]
fn scalar_unary() {
    assert!(matches!(unary("executorch_prim::neg.Scalar", I(3)), I(-3)));
    assert!(matches!(
        unary("executorch_prim::neg.Scalar", B(true)),
        I(-1)
    ));
    assert!(matches!(unary("executorch_prim::neg.Scalar", D(1.5)), D(v) if v == -1.5));
    assert!(matches!(unary("executorch_prim::sym_float.Scalar", I(3)), D(v) if v == 3.0));
    assert!(matches!(
        unary("executorch_prim::sym_int.Scalar", D(-2.7)),
        I(-2)
    ));
    assert!(matches!(
        unary("executorch_prim::sym_not.Scalar", I(0)),
        B(true)
    ));
    assert!(matches!(
        unary("executorch_prim::sym_not.Scalar", D(0.5)),
        B(false)
    ));
    for (a, want) in [(D(-0.0), true), (D(f64::NAN), false), (B(true), false)] {
        let got = unary("executorch_prim::sym_not.Scalar", a);
        assert!(matches!(got, B(v) if v == want));
    }
    let ceil = "executorch_prim::ceil.Scalar";
    let round = "executorch_prim::round.Scalar";
    let trunc = "executorch_prim::trunc.Scalar";
    assert!(matches!(unary(ceil, D(2.1)), I(3)));
    assert!(matches!(unary(ceil, D(-2.1)), I(-2)));
    assert!(matches!(unary(ceil, I(5)), I(5)));
    assert!(matches!(unary(round, D(2.5)), I(2)));
    assert!(matches!(unary(round, D(3.5)), I(4)));
    assert!(matches!(unary(round, D(-2.5)), I(-2)));
    assert!(matches!(unary(round, D(-2.6)), I(-3)));
    assert!(matches!(unary(trunc, D(-2.7)), I(-2)));
    assert!(matches!(unary(trunc, B(true)), I(1)));
    for name in [ceil, round, trunc] {
        assert_eq!(
            unary_err(name, D(f64::INFINITY)).error,
            Error::InvalidArgument
        );
        assert_eq!(unary_err(name, D(f64::NAN)).error, Error::InvalidArgument);
    }
    // sym_int converts as Rust's `as` does: it saturates and never fails.
    let sym_int = "executorch_prim::sym_int.Scalar";
    for x in [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -1e300,
        -0.5,
    ] {
        assert!(matches!(unary(sym_int, D(x)), I(v) if v == x as i64), "{x}");
    }
    // Against the standard library, around integers, halves and the i64 range.
    #[cfg(feature = "std")]
    for base in [0.0f64, 1.0, 2.0, 3.0, 1e15, 4.5e15, 9.2e18, 1e300] {
        for delta in [0.0, 0.25, 0.5, 0.75, 1.0, -0.25, -0.5, -0.75] {
            for x in [base + delta, -(base + delta)] {
                let want = [x.ceil(), x.round_ties_even(), x.trunc(), x].map(|v| v as i64);
                for (name, want) in [ceil, round, trunc, sym_int].into_iter().zip(want) {
                    assert!(
                        matches!(unary(name, D(x)), I(v) if v == want),
                        "{name}({x})"
                    );
                }
            }
        }
    }
    let ite = "executorch_prim::sym_ite.Scalar";
    let (r, v) = call(ite, &mut [B(true), I(1), D(2.0), Value::None]);
    assert!(r.is_ok() && matches!(v, I(1)));
    let (r, v) = call(ite, &mut [I(0), I(1), D(2.0), Value::None]);
    assert!(r.is_ok() && matches!(v, D(x) if x == 2.0));
}

/// A tensor over `data` (row-major), shaped `sizes`.
fn tensor(
    dtype: ScalarType,
    sizes: &mut [usize],
    strides: &mut [usize],
    order: &mut [u8],
    data: *mut u8,
) -> Tensor {
    for (i, o) in order.iter_mut().enumerate() {
        *o = i as u8;
    }
    let storage = ShapeStorage {
        sizes: NonNull::from(&mut *sizes).cast(),
        strides: NonNull::from(&mut *strides).cast(),
        dim_order: NonNull::from(&mut *order).cast(),
    };
    // SAFETY: the arrays hold `sizes.len()` elements and outlive the tensor's use in
    // the test; `data` is valid for the tensor's bytes.
    unsafe {
        Tensor::from_raw_parts(
            dtype,
            sizes.len(),
            storage,
            data,
            ShapeDynamism::Static,
            false,
            false,
        )
    }
}

#[test]
fn f16_to_f64_matches_half() {
    for h in 0..=u16::MAX {
        let (got, want) = (
            super::tensor::f16_to_f64(h),
            half::f16::from_bits(h).to_f64(),
        );
        assert!(
            got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
            "{h:#06x}: {got} != {want}"
        );
    }
}

#[test]
fn tensor_prims() {
    let mut data = [0u8; 24];
    let (mut sizes, mut strides, mut order) = ([2usize, 3], [0usize; 2], [0u8; 2]);
    let mut t = tensor(
        ScalarType::Float,
        &mut sizes,
        &mut strides,
        &mut order,
        data.as_mut_ptr(),
    );
    let tv = Value::Tensor(NonNull::from(&mut t));
    assert_eq!(int("aten::sym_size.int", tv, I(1)), 3);
    assert_eq!(int("aten::sym_size.int", tv, I(-2)), 2);
    let (r, _) = call("aten::sym_size.int", &mut [tv, I(2), Value::None]);
    assert_eq!(r.unwrap_err().error, Error::InvalidArgument);
    assert!(matches!(unary("aten::sym_numel", tv), I(6)));
    assert_eq!(
        unary_err("aten::_local_scalar_dense", tv).error,
        Error::InvalidArgument
    );

    let cases: [(ScalarType, [u8; 8], Value); 9] = [
        (ScalarType::Bool, [2, 0, 0, 0, 0, 0, 0, 0], B(true)),
        (ScalarType::Byte, [200, 0, 0, 0, 0, 0, 0, 0], I(200)),
        (ScalarType::Char, [0xfe, 0, 0, 0, 0, 0, 0, 0], I(-2)),
        (ScalarType::Short, [0xfe, 0xff, 0, 0, 0, 0, 0, 0], I(-2)),
        (ScalarType::Int, [0xfe, 0xff, 0xff, 0xff, 0, 0, 0, 0], I(-2)),
        (ScalarType::Long, (-5i64).to_le_bytes(), I(-5)),
        (ScalarType::Half, [0x00, 0x3e, 0, 0, 0, 0, 0, 0], D(1.5)),
        (ScalarType::Float, [0, 0, 0xc0, 0x3f, 0, 0, 0, 0], D(1.5)),
        (ScalarType::Double, 2.25f64.to_le_bytes(), D(2.25)),
    ];
    for (dtype, bytes, want) in cases {
        let mut cell = [0u64; 1];
        cell[0] = u64::from_le_bytes(bytes);
        let (mut sizes, mut strides, mut order) = ([1usize], [0usize; 1], [0u8; 1]);
        let mut t = tensor(
            dtype,
            &mut sizes,
            &mut strides,
            &mut order,
            cell.as_mut_ptr().cast(),
        );
        let got = unary(
            "aten::_local_scalar_dense",
            Value::Tensor(NonNull::from(&mut t)),
        );
        let same = match (got, want) {
            (B(a), B(b)) => a == b,
            (I(a), I(b)) => a == b,
            (D(a), D(b)) => a == b,
            _ => false,
        };
        assert!(same, "{dtype:?}");
    }
    let mut cell = [0u64; 1];
    let (mut sizes, mut strides, mut order) = ([1usize], [0usize; 1], [0u8; 1]);
    let mut t = tensor(
        ScalarType::ComplexFloat,
        &mut sizes,
        &mut strides,
        &mut order,
        cell.as_mut_ptr().cast(),
    );
    let tv = Value::Tensor(NonNull::from(&mut t));
    assert_eq!(
        unary_err("aten::_local_scalar_dense", tv).error,
        Error::NotSupported
    );
}

/// `et_view` of a 2x3 float tensor to `size` (given as a 2-element int list), into a
/// 2-dim output bounded by 6 elements; the result and the output's sizes.
fn view(size: [i64; 2]) -> (Result<(), KernelError>, [usize; 2]) {
    let mut data = [0f32; 6];
    let (mut sizes, mut strides, mut order) = ([2usize, 3], [0usize; 2], [0u8; 2]);
    let mut src = tensor(
        ScalarType::Float,
        &mut sizes,
        &mut strides,
        &mut order,
        data.as_mut_ptr().cast(),
    );
    let (mut out_sizes, mut out_strides, mut out_order) = ([6usize, 1], [0usize; 2], [0u8, 1]);
    let storage = ShapeStorage {
        sizes: NonNull::from(&mut out_sizes).cast(),
        strides: NonNull::from(&mut out_strides).cast(),
        dim_order: NonNull::from(&mut out_order).cast(),
    };
    // SAFETY: the arrays hold 2 elements and outlive the tensor; no data is bound.
    let mut out = unsafe {
        Tensor::from_raw_parts(
            ScalarType::Float,
            2,
            storage,
            core::ptr::null_mut(),
            ShapeDynamism::Bound,
            false,
            false,
        )
    };
    let (mut indices, mut items) = ([4u32, 5], [0i64; 2]);
    let mut list = crate::value::BoxedList {
        indices: NonNull::from(&mut indices).cast(),
        items: NonNull::from(&mut items).cast(),
        len: 2,
    };
    let mut values = [
        Value::Tensor(NonNull::from(&mut src)),
        Value::IntList(NonNull::from(&mut list)),
        Value::Tensor(NonNull::from(&mut out)),
        Value::None,
        Value::Int(size[0]),
        Value::Int(size[1]),
    ];
    let entry = crate::registry::find_kernel("executorch_prim::et_view", "default", None)
        .expect("registered");
    let temp = Arena::empty();
    let ctx = KernelContext::new(&temp);
    let idx = [0u32, 1, 2];
    // SAFETY: the indices (and the list's) are in range of `values`, which outlives the
    // call.
    let args = unsafe { KernelArgs::new(NonNull::from(&mut values).cast(), &idx, 3) };
    let r = (entry.function)(&ctx, &args);
    (r, [out.sizes()[0], out.sizes()[1]])
}

#[test]
fn et_view_checks_the_size() {
    assert_eq!(view([3, 2]), (Ok(()), [3, 2]));
    assert_eq!(view([-1, 2]), (Ok(()), [3, 2]));
    assert_eq!(view([6, -1]), (Ok(()), [6, 1]));
    for bad in [
        [4, 2],
        [2, 2],
        [-1, -1],
        [-1, 4],
        [0, -1],
        [-2, -3],
        [i64::MAX, 2],
    ] {
        let (r, _) = view(bad);
        assert_eq!(
            r.map_err(|e| e.error),
            Err(Error::InvalidArgument),
            "{bad:?}"
        );
    }
}

/// `et_copy_index(out, from, index)` copies `from` into row `index` of `out`; an out that
/// is the source, or shares data bytes with it, is refused, as is a row of another shape.
#[test]
fn et_copy_index_copies_rows_and_refuses_aliases() {
    let copy_index = "executorch_prim::et_copy_index.tensor";
    let mut out_data = [0f32; 6];
    // One base pointer for the out and, below, a tensor over its second row.
    let out_base = out_data.as_mut_ptr();
    let (mut out_sizes, mut out_strides, mut out_order) = ([2usize, 3], [0usize; 2], [0u8; 2]);
    let mut out = tensor(
        ScalarType::Float,
        &mut out_sizes,
        &mut out_strides,
        &mut out_order,
        out_base.cast(),
    );
    let mut row_data = [1f32, 2.0, 3.0];
    let (mut row_sizes, mut row_strides, mut row_order) = ([3usize], [0usize; 1], [0u8; 1]);
    let mut row = tensor(
        ScalarType::Float,
        &mut row_sizes,
        &mut row_strides,
        &mut row_order,
        row_data.as_mut_ptr().cast(),
    );
    let (ov, rv) = (
        Value::Tensor(NonNull::from(&mut out)),
        Value::Tensor(NonNull::from(&mut row)),
    );
    let (r, _) = call(copy_index, &mut [ov, rv, I(1), Value::None]);
    assert!(r.is_ok(), "{r:?}");
    // SAFETY: `out_base` points at the six floats of `out_data`, which the call wrote.
    let written = unsafe { core::slice::from_raw_parts(out_base, 6) };
    assert_eq!(written, [0.0, 0.0, 0.0, 1.0, 2.0, 3.0]);

    // The same tensor as out and source.
    let (r, _) = call(copy_index, &mut [ov, ov, I(0), Value::None]);
    assert_eq!(r.unwrap_err().error, Error::InvalidArgument);

    // A source over the out's own second row: shared bytes.
    let (mut alias_sizes, mut alias_strides, mut alias_order) = ([3usize], [0usize; 1], [0u8; 1]);
    let mut alias = tensor(
        ScalarType::Float,
        &mut alias_sizes,
        &mut alias_strides,
        &mut alias_order,
        // SAFETY: 3 floats into the 6 of `out_data`.
        unsafe { out_base.add(3) }.cast(),
    );
    let av = Value::Tensor(NonNull::from(&mut alias));
    let (r, _) = call(copy_index, &mut [ov, av, I(0), Value::None]);
    assert_eq!(r.unwrap_err().error, Error::InvalidArgument);

    // A row of two elements into rows of three.
    let mut short_data = [0f32; 2];
    let (mut short_sizes, mut short_strides, mut short_order) = ([2usize], [0usize; 1], [0u8; 1]);
    let mut short = tensor(
        ScalarType::Float,
        &mut short_sizes,
        &mut short_strides,
        &mut short_order,
        short_data.as_mut_ptr().cast(),
    );
    let sv = Value::Tensor(NonNull::from(&mut short));
    let (r, _) = call(copy_index, &mut [ov, sv, I(0), Value::None]);
    assert_eq!(r.unwrap_err().error, Error::InvalidArgument);
}
