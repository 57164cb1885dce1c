//! The alias checks that lend out tensors as `&mut`: per call (`tensor_mut`,
//! `tensor_list_mut`) and at load (`outs_are_exclusive`), which must agree.

use core::ptr::NonNull;

use crate::kernel::{ArgKind, KernelArgs};
use crate::tensor::ShapeDynamism;
use crate::tensor_buf::TensorBuf;
use crate::value::{BoxedList, Value};
use et_schema::scalar_type::ScalarType;

/// Four f32 tensors of 4 elements: `a`, `b` (its own data), `a_tail` (a view of `a`'s
/// last two elements and past them: it shares bytes 8..16 with `a`) and `empty` (no
/// elements).
struct Tensors {
    a: TensorBuf,
    b: TensorBuf,
    a_tail: TensorBuf,
    empty: TensorBuf,
}

fn tensors() -> Tensors {
    let new = |n| TensorBuf::with_layout(ScalarType::Float, &[n], &[0], ShapeDynamism::Static);
    let mut t = Tensors {
        a: new(4).unwrap(),
        b: new(4).unwrap(),
        a_tail: new(4).unwrap(),
        empty: new(0).unwrap(),
    };
    // SAFETY: 8 bytes into `a`'s 16 leaves 8 in `a`; the test only compares ranges and
    // never touches the data through `a_tail`.
    unsafe {
        let p = t.a.data_ptr().cast_mut().add(8);
        t.a_tail.set_data(p, false);
    }
    t
}

fn tensor(t: &TensorBuf) -> Value {
    Value::Tensor(NonNull::from(&**t))
}

/// Calls `check` with `KernelArgs` over `values` passed as `args` (all parameters).
fn with_args<R>(values: &mut [Value], args: &[u32], check: impl FnOnce(&KernelArgs<'_>) -> R) -> R {
    // SAFETY: every index in `args` is in range of `values`, which outlives the call.
    let kargs = unsafe { KernelArgs::new(NonNull::from(&mut *values).cast(), args, args.len()) };
    check(&kargs)
}

/// Whether the out at position `out` (a `TensorMut`) is lent, per call and at load.
fn lent(values: &mut [Value], args: &[u32], out: usize) -> bool {
    let mut kinds = [ArgKind::Tensor; 4];
    kinds[out] = ArgKind::TensorMut;
    let kinds = &kinds[..args.len()];
    // SAFETY: position `out` is taken once.
    let per_call = with_args(values, args, |k| unsafe { k.tensor_mut(out) }.is_ok());
    let at_load = with_args(values, args, |k| k.outs_are_exclusive(kinds));
    assert_eq!(
        per_call, at_load,
        "the load-time proof and the per-call check disagree"
    );
    per_call
}

#[test]
fn an_out_tensor_is_lent_only_when_nothing_else_reaches_it_or_its_data() {
    let t = tensors();
    let mut values = [
        tensor(&t.a),
        tensor(&t.b),
        tensor(&t.a_tail),
        tensor(&t.empty),
    ];
    // Separate data: lent.
    assert!(lent(&mut values, &[0, 1], 1));
    // The same tensor twice: refused.
    assert!(!lent(&mut values, &[1, 1], 1));
    // Overlapping data: refused, whichever is the out.
    assert!(!lent(&mut values, &[0, 2], 1));
    assert!(!lent(&mut values, &[2, 0], 1));
    // An empty tensor clashes only with itself.
    assert!(lent(&mut values, &[0, 3], 1));
    assert!(!lent(&mut values, &[3, 3], 1));
}

#[test]
fn an_out_list_is_lent_only_with_distinct_items_that_nothing_else_reaches() {
    let t = tensors();
    // Room for each list's gathered items.
    let mut items = [[core::ptr::null::<crate::tensor::Tensor>(); 2]; 3];
    let mut indices = [[0u32, 1], [1, 1], [0, 2]];
    // Lists of `a` and `b` (distinct), `b` twice, `a` and `a_tail` (overlapping).
    let mut lists = [0, 1, 2].map(|k| BoxedList {
        indices: NonNull::from(&mut indices[k][0]),
        items: NonNull::from(&mut items[k][0]),
        len: 2,
    });
    let [distinct, twice, overlapping] = lists
        .each_mut()
        .map(|l| Value::TensorList(NonNull::from(l)));
    let mut values = [
        tensor(&t.a),
        tensor(&t.b),
        tensor(&t.a_tail),
        distinct,
        twice,
        overlapping,
    ];
    let kinds = [ArgKind::TensorListMut];
    let lent_list = |values: &mut [Value], at: u32| {
        // SAFETY: position 0 is taken once.
        let per_call = with_args(values, &[at], |k| unsafe { k.tensor_list_mut(0) }.is_ok());
        let at_load = with_args(values, &[at], |k| k.outs_are_exclusive(&kinds));
        assert_eq!(
            per_call, at_load,
            "the load-time proof and the per-call check disagree"
        );
        per_call
    };
    assert!(lent_list(&mut values, 3));
    assert!(!lent_list(&mut values, 4));
    assert!(!lent_list(&mut values, 5));
    // A list item also passed at another position: refused.
    let kinds = [ArgKind::Tensor, ArgKind::TensorListMut];
    let refused = |k: &KernelArgs<'_>| {
        // SAFETY: position 1 is taken once per call.
        unsafe { k.tensor_list_mut(1) }.is_err()
    };
    assert!(with_args(&mut values, &[2, 3], refused));
    assert!(!with_args(&mut values, &[2, 3], |k| k.outs_are_exclusive(&kinds)));
    assert!(with_args(&mut values, &[1, 5], refused));
}
