//! The `k` largest (or smallest) elements along a dim, with their indices.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, DtypeSet, KernelContext, KernelError, KernelResult, ScalarType,
    Tensor, MAX_DIM,
};

use crate::util::accumulate::Accumulator;
use crate::util::convert::Val;
use crate::util::element::Num;
use crate::util::layout::{check_same_dtype, istrides, normalize_dim, Walk};
use crate::util::reduction::unsupported_dtype;

/// `values, indices = self.topk(k, dim, largest, sorted)`.
///
/// NaN counts as larger than every number (first for `largest`, last otherwise), as in
/// PyTorch. Which of several equal elements is picked, and the order of an unsorted
/// result, follow PyTorch's CPU kernel exactly: it runs `std::partial_sort` when
/// `64 * k <= size`, else `std::nth_element` followed (if `sorted`) by `std::sort` of the
/// first `k - 1` entries, all from libstdc++; the private `stl` module reproduces those
/// algorithms step for step, so ties resolve to the same indices.
#[kernel("aten::topk.values", accepts = [reals])]
#[allow(clippy::too_many_arguments, reason = "the operator's schema")]
pub fn topk_values<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    input: &Tensor,
    k: i64,
    dim: i64,
    largest: bool,
    sorted: bool,
    values: &mut Tensor,
    indices: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, values)?;
    if indices.dtype() != et_runtime::ScalarType::Long {
        return Err(KernelError::invalid("topk indices must be int64"));
    }
    let n = input.dim();
    let d = normalize_dim(dim, n)?;
    let size = if n == 0 { 1 } else { input.size(d) };
    let k = usize::try_from(k)
        .ok()
        .filter(|&k| k <= size)
        .ok_or(KernelError::invalid("topk k out of range for the dim"))?;
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    if n > 0 {
        sizes[d] = k;
    }
    values.resize(&sizes[..n])?;
    indices.resize(&sizes[..n])?;
    if k == 0 || input.numel() == 0 {
        return Ok(());
    }
    let order = ctx.alloc_temp::<i64>(size)?;
    let dt = input.dtype();
    if native_set(Sel::SET).contains(dt) {
        return et_switch!(in native_set(Sel::SET), dt, @reals, T => {
            let x = input.data::<T>()?;
            select(input, d, k, largest, sorted, order, values, indices, |i| x[i])
        });
    }
    if dt == ScalarType::Bool {
        return Err(unsupported_dtype());
    }
    // The other dtypes compare exactly as f64 (floats) or i64 (integers), read through
    // one loader; the values are copied as bytes.
    let acc = Accumulator::new::<Sel>(dt)?;
    let x = input.bytes()?;
    if dt.is_floating() {
        select(input, d, k, largest, sorted, order, values, indices, |i| {
            acc.get_f64(x, i)
        })
    } else {
        select(
            input,
            d,
            k,
            largest,
            sorted,
            order,
            values,
            indices,
            |i| match acc.get(x, i) {
                Val::Int(v) => v,
                Val::Float(f) => f as i64,
            },
        )
    }
}

/// The dtypes whose selection loop is instantiated for the element type itself: every
/// selected one when the selection keeps at most four dtypes (as the elementwise
/// `fast_set`), else float32 alone. In a build of every dtype the others share two loops
/// (f64 and i64 comparisons through a loader), which cut about 12 KB from
/// `size_test_all_ops`; the sort is the same code either way.
const fn native_set(sel: DtypeSet) -> DtypeSet {
    if sel.0.count_ones() <= 4 {
        sel
    } else {
        DtypeSet(sel.0 & ScalarType::Float.bit())
    }
}

#[allow(
    clippy::too_many_arguments,
    reason = "one call site, all state explicit"
)]
fn select<C: Num>(
    input: &Tensor,
    d: usize,
    k: usize,
    largest: bool,
    sorted: bool,
    order: &mut [i64],
    values: &mut Tensor,
    indices: &mut Tensor,
    x: impl Fn(usize) -> C,
) -> KernelResult {
    let n = input.dim();
    let (xs, vs, is) = (istrides(input)?, istrides(values)?, istrides(indices)?);
    let (x_step, v_step, i_step) = if n == 0 {
        (0, 0, 0)
    } else {
        (xs[d], vs[d], is[d])
    };
    // Every offset of all three tensors is in range (each walks its own shape).
    let lens = [input.numel(), values.numel(), indices.numel()];
    Walk::new(values.sizes(), [&xs[..n], &vs[..n], &is[..n]])?.check([0, 0, 0], lens)?;
    Walk::new(input.sizes(), [&xs[..n]])?.check([0], [lens[0]])?;
    let mut line = [0usize; MAX_DIM];
    line[..n].copy_from_slice(input.sizes());
    if n > 0 {
        line[d] = 1;
    }
    let lines = Walk::new(&line[..n], [&xs[..n], &vs[..n], &is[..n]])?;
    let w = input.dtype().element_size();
    let xdata = input.bytes()?;
    let vdata = values.bytes_mut()?;
    let idata = indices.data_mut::<i64>()?;
    lines.for_each([0, 0, 0], lens, |[xb, vb, ib]| {
        let pos = |j: i64| (xb as isize + j as isize * x_step) as usize;
        let at = |j: i64| x(pos(j));
        for (j, o) in order.iter_mut().enumerate() {
            *o = j as i64;
        }
        if largest {
            // NaN first, then descending.
            let before = |a: i64, b: i64| {
                let (p, q) = (at(a), at(b));
                (p.is_nan() && !q.is_nan()) || p > q
            };
            pick(order, k, sorted, &before);
        } else {
            // Ascending, NaN last.
            let before = |a: i64, b: i64| {
                let (p, q) = (at(a), at(b));
                (!p.is_nan() && q.is_nan()) || p < q
            };
            pick(order, k, sorted, &before);
        }
        for (j, &o) in order[..k].iter().enumerate() {
            let (src, dst) = (pos(o) * w, (vb as isize + j as isize * v_step) as usize * w);
            vdata[dst..dst + w].copy_from_slice(&xdata[src..src + w]);
            idata[(ib as isize + j as isize * i_step) as usize] = o;
        }
    })?;
    Ok(())
}

/// Moves the `k` first entries of `q` under `before` to its front, as PyTorch does.
fn pick(q: &mut [i64], k: usize, sorted: bool, before: &dyn Fn(i64, i64) -> bool) {
    if k.saturating_mul(64) <= q.len() {
        stl::partial_sort(q, k, before);
    } else {
        stl::nth_element(q, k - 1, before);
        if sorted {
            stl::sort(&mut q[..k - 1], before);
        }
    }
}

/// libstdc++'s `sort`, `partial_sort` and `nth_element` (introsort/introselect with
/// median-of-three pivots, heap select, insertion sort below 16 elements), reproduced
/// move for move so equal elements end up where PyTorch's CPU kernels put them.
///
/// The C++ "unguarded" loops rely on sentinels that a strict weak order guarantees; the
/// versions here also stop at the slice ends, which never changes the result for such
/// an order and keeps any comparator from indexing out of bounds.
///
/// The comparator is a `&dyn Fn`: one copy of these algorithms serves every dtype and
/// both directions, where a generic comparator compiled them 16 times over (most of
/// topk's 41 KB in `size_test_all_ops`); an indirect call per comparison is cheap next
/// to the strided loads it compares.
mod stl {
    const THRESHOLD: usize = 16;

    fn lg(n: usize) -> usize {
        (usize::BITS - 1 - n.leading_zeros()) as usize
    }

    pub(super) fn sort(q: &mut [i64], before: &dyn Fn(i64, i64) -> bool) {
        if q.is_empty() {
            return;
        }
        introsort_loop(q, 2 * lg(q.len()), before);
        final_insertion_sort(q, before);
    }

    pub(super) fn partial_sort(q: &mut [i64], middle: usize, before: &dyn Fn(i64, i64) -> bool) {
        heap_select(q, middle, before);
        sort_heap(&mut q[..middle], before);
    }

    pub(super) fn nth_element(q: &mut [i64], nth: usize, before: &dyn Fn(i64, i64) -> bool) {
        if q.is_empty() || nth >= q.len() {
            return;
        }
        let depth = 2 * lg(q.len());
        introselect(q, nth, depth, before);
    }

    fn introselect(q: &mut [i64], nth: usize, mut depth: usize, before: &dyn Fn(i64, i64) -> bool) {
        let (mut first, mut last) = (0usize, q.len());
        while last - first > 3 {
            if depth == 0 {
                let w = &mut q[first..last];
                heap_select(w, nth - first + 1, before);
                w.swap(0, nth - first);
                return;
            }
            depth -= 1;
            let cut = first + partition_pivot(&mut q[first..last], before);
            if cut <= nth {
                first = cut;
            } else {
                last = cut;
            }
        }
        insertion_sort(&mut q[first..last], before);
    }

    fn introsort_loop(q: &mut [i64], mut depth: usize, before: &dyn Fn(i64, i64) -> bool) {
        let mut last = q.len();
        while last > THRESHOLD {
            if depth == 0 {
                partial_sort(&mut q[..last], last, before);
                return;
            }
            depth -= 1;
            let cut = partition_pivot(&mut q[..last], before);
            introsort_loop(&mut q[cut..last], depth, before);
            last = cut;
        }
    }

    fn final_insertion_sort(q: &mut [i64], before: &dyn Fn(i64, i64) -> bool) {
        if q.len() > THRESHOLD {
            insertion_sort(&mut q[..THRESHOLD], before);
            for i in THRESHOLD..q.len() {
                linear_insert(q, i, before);
            }
        } else {
            insertion_sort(q, before);
        }
    }

    fn insertion_sort(q: &mut [i64], before: &dyn Fn(i64, i64) -> bool) {
        for i in 1..q.len() {
            let v = q[i];
            if before(v, q[0]) {
                q.copy_within(0..i, 1);
                q[0] = v;
            } else {
                linear_insert(q, i, before);
            }
        }
    }

    /// Shifts `q[i]` left past every entry it goes before.
    fn linear_insert(q: &mut [i64], mut i: usize, before: &dyn Fn(i64, i64) -> bool) {
        let v = q[i];
        while i > 0 && before(v, q[i - 1]) {
            q[i] = q[i - 1];
            i -= 1;
        }
        q[i] = v;
    }

    /// Median of three to the front, then Hoare partition around it; returns the cut.
    fn partition_pivot(q: &mut [i64], before: &dyn Fn(i64, i64) -> bool) -> usize {
        let len = q.len();
        let mid = len / 2;
        move_median_to_first(q, 1, mid, len - 1, before);
        let (mut first, mut last) = (1usize, len);
        loop {
            while first < len && before(q[first], q[0]) {
                first += 1;
            }
            last -= 1;
            while last > 0 && before(q[0], q[last]) {
                last -= 1;
            }
            if first >= last {
                return first;
            }
            q.swap(first, last);
            first += 1;
        }
    }

    fn move_median_to_first(
        q: &mut [i64],
        a: usize,
        b: usize,
        c: usize,
        before: &dyn Fn(i64, i64) -> bool,
    ) {
        let m = if before(q[a], q[b]) {
            if before(q[b], q[c]) {
                b
            } else if before(q[a], q[c]) {
                c
            } else {
                a
            }
        } else if before(q[a], q[c]) {
            a
        } else if before(q[b], q[c]) {
            c
        } else {
            b
        };
        q.swap(0, m);
    }

    /// Leaves the `middle` first entries (under `before`) in `q[..middle]` as a heap.
    fn heap_select(q: &mut [i64], middle: usize, before: &dyn Fn(i64, i64) -> bool) {
        make_heap(&mut q[..middle], before);
        for i in middle..q.len() {
            if before(q[i], q[0]) {
                pop_heap(q, middle, i, before);
            }
        }
    }

    fn make_heap(q: &mut [i64], before: &dyn Fn(i64, i64) -> bool) {
        let len = q.len();
        if len < 2 {
            return;
        }
        let mut parent = (len - 2) / 2;
        loop {
            let v = q[parent];
            adjust_heap(q, parent, len, v, before);
            if parent == 0 {
                return;
            }
            parent -= 1;
        }
    }

    fn sort_heap(q: &mut [i64], before: &dyn Fn(i64, i64) -> bool) {
        let mut last = q.len();
        while last > 1 {
            last -= 1;
            pop_heap(q, last, last, before);
        }
    }

    /// Moves the heap top (of `q[..len]`) to `result` and re-inserts `q[result]`.
    fn pop_heap(q: &mut [i64], len: usize, result: usize, before: &dyn Fn(i64, i64) -> bool) {
        let v = q[result];
        q[result] = q[0];
        adjust_heap(q, 0, len, v, before);
    }

    fn adjust_heap(
        q: &mut [i64],
        mut hole: usize,
        len: usize,
        v: i64,
        before: &dyn Fn(i64, i64) -> bool,
    ) {
        let top = hole;
        let mut child = hole;
        while child < len.saturating_sub(1) / 2 {
            child = 2 * (child + 1);
            if before(q[child], q[child - 1]) {
                child -= 1;
            }
            q[hole] = q[child];
            hole = child;
        }
        if len.is_multiple_of(2) && len >= 2 && child == (len - 2) / 2 {
            child = 2 * (child + 1);
            q[hole] = q[child - 1];
            hole = child - 1;
        }
        // push_heap
        while hole > top {
            let parent = (hole - 1) / 2;
            if !before(q[parent], v) {
                break;
            }
            q[hole] = q[parent];
            hole = parent;
        }
        q[hole] = v;
    }
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec::Vec;

    fn run<T: et_runtime::Element>(
        x: &[T],
        shape: &[usize],
        k: i64,
        dim: i64,
        largest: bool,
        sorted: bool,
    ) -> (Vec<T>, Vec<i64>) {
        let mut scratch = std::vec![0u8; 1 << 14];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let t = TensorBuf::from_slice(shape, x).unwrap();
        let d = normalize_dim(dim, shape.len()).unwrap();
        let mut osh = shape.to_vec();
        osh[d] = k as usize;
        let mut v = TensorBuf::zeros(T::DTYPE, &osh).unwrap();
        let mut i = TensorBuf::zeros(ScalarType::Long, &osh).unwrap();
        topk_values::<AllDtypes>(&ctx, &t, k, dim, largest, sorted, &mut v, &mut i).unwrap();
        (
            v.data::<T>().unwrap().to_vec(),
            i.data::<i64>().unwrap().to_vec(),
        )
    }

    #[test]
    fn ties_resolve_like_pytorch() {
        // From the conformance suite (PyTorch's answers).
        let x = [
            -4i64, 1, 3, 0, 2, -1, 0, 1, -1, 1, 1, 3, -3, 4, -2, 2, -1, 3,
        ];
        let (v, i) = run(&x, &[3, 6], 2, 1, true, true);
        assert_eq!(v, [3, 2, 3, 1, 4, 3]);
        assert_eq!(i, [2, 4, 5, 3, 1, 5]);
        let x = [
            0i32, -3, -4, -2, -4, -4, -1, 4, -4, 3, -1, -2, -1, -3, 0, 0, 1, -1,
        ];
        let (v, i) = run(&x, &[3, 6], 2, 1, true, true);
        assert_eq!(v, [0, -2, 4, 3, 1, 0]);
        assert_eq!(i, [0, 3, 1, 3, 4, 2]);
    }

    #[test]
    fn nan_and_smallest() {
        let x = [1f32, f32::NAN, 3., -1., 2.];
        let (v, i) = run(&x, &[5], 2, 0, true, true);
        assert!(v[0].is_nan() && v[1] == 3.);
        assert_eq!(i, [1, 2]);
        let (v, i) = run(&x, &[5], 3, 0, false, true);
        assert_eq!(v, [-1., 1., 2.]);
        assert_eq!(i, [3, 0, 4]);
        let (v, _) = run(&x, &[5], 5, 0, false, true);
        assert!(v[4].is_nan());
    }

    #[test]
    fn long_rows_match_a_full_sort() {
        // Distinct values: any correct algorithm must agree with sorting.
        let x: Vec<f64> = (0..300).map(|j| ((j * 7919) % 300) as f64).collect();
        for k in [1, 4, 5, 40, 300] {
            let (v, i) = run(&x, &[300], k, 0, true, true);
            let want: Vec<f64> = (0..k).map(|j| (299 - j) as f64).collect();
            assert_eq!(v, want);
            for (a, b) in v.iter().zip(&i) {
                assert_eq!(x[*b as usize], *a);
            }
            let (v, _) = run(&x, &[300], k, 0, false, true);
            let want: Vec<f64> = (0..k).map(|j| j as f64).collect();
            assert_eq!(v, want);
        }
        // Along dim 0 of a 2-D tensor.
        let (v, i) = run(&[1i32, 9, 5, 2, 3, 7], &[3, 2], 1, 0, true, true);
        assert_eq!(v, [5, 9]);
        assert_eq!(i, [1, 0]);
    }
}
