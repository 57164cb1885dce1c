#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

use core::sync::atomic::{AtomicUsize, Ordering};

use et_runtime::register_rewrite;
use et_runtime::registry::{find_kernel, KernelEntry};
use et_runtime::rewrite::{RewriteRule, Rewriter, ValueRef};
use et_runtime::{kernel, KernelContext, KernelError, KernelResult, Scalar, ScalarType, Tensor};

/// How many times [`add_relu_out`] has run, so tests can tell that the rule fired.
pub static ADD_RELU_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `mytest::add_relu.out(Tensor self, Tensor other, Scalar alpha, *, Tensor(a!) out)`:
/// `out = relu(self + alpha * other)` for same-shaped contiguous f32 tensors, with
/// `aten::add.out`'s and `aten::relu.out`'s roundings (the sum rounded to f32, then the
/// clamp; NaN stays NaN).
#[kernel(
    "mytest::add_relu.out",
    dtype = f32,
    replaces = ["aten::add.out", "aten::relu.out"]
)]
pub fn add_relu_out(
    _ctx: &KernelContext<'_>,
    a: &Tensor,
    b: &Tensor,
    alpha: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    ADD_RELU_CALLS.fetch_add(1, Ordering::Relaxed);
    if a.sizes() != b.sizes() {
        return Err(KernelError::invalid(
            "mytest::add_relu: inputs must have the same shape",
        ));
    }
    if !(a.is_contiguous() && b.is_contiguous() && out.is_contiguous()) {
        return Err(KernelError::unsupported(
            "mytest::add_relu: only contiguous tensors",
        ));
    }
    out.resize(a.sizes())?;
    let alpha = alpha.to_f64() as f32;
    let (x, y) = (a.data::<f32>()?, b.data::<f32>()?);
    for ((o, &x), &y) in out.data_mut::<f32>()?.iter_mut().zip(x).zip(y) {
        let sum = if alpha == 1.0 { x + y } else { x + alpha * y };
        *o = if sum < 0.0 { 0.0 } else { sum };
    }
    Ok(())
}

register_rewrite! {
    // Kept in a selective build only with the operators it rewrites (the fused kernel's
    // `replaces` keeps the kernel on the same condition).
    #[et_runtime::link::selected(operators = ["aten::add.out", "aten::relu.out"])]
    static ADD_RELU = RewriteRule {
        name: "custom_fusion::add_relu",
        // The fused call takes the add's four arguments; an add call has four or more.
        max_args: 4,
        min_call_args: 4,
        apply: fuse_add_relu,
    };
}

/// et-ops' kernel of `aten::<name>.out` for f32 calls: the only one whose behaviour this
/// rule knows (another crate's kernel of the same name is left alone).
fn et_ops_kernel(name: &str) -> Option<&'static KernelEntry> {
    find_kernel(name, "out", Some(ScalarType::Float))
        .filter(|e| e.signature.crate_name.as_str() == "et-ops")
}

/// Turns `add(a, b, alpha, t)` then `relu(t, out)` into `add_relu(a, b, alpha, out)` when
/// `t` is read by nothing else, the tensors are f32 of one shape and `out` does not
/// overlap `a` or `b`.
fn fuse_add_relu(rw: &mut Rewriter<'_>) {
    // Consecutive calls always run together, on the tensors they were built with.
    if rw.rebinds_memory() || rw.jumps() {
        return;
    }
    let (Some(add_op), Some(relu_op)) = (
        rw.operator("aten::add", "out"),
        rw.operator("aten::relu", "out"),
    ) else {
        return;
    };
    let (Some(add), Some(relu)) = (et_ops_kernel("aten::add"), et_ops_kernel("aten::relu")) else {
        return;
    };
    let chains: Vec<_> = rw.chains().collect();
    for chain in chains {
        for at in chain.start..chain.end.saturating_sub(1) {
            let (Some(first), Some(second)) = (rw.call(at), rw.call(at + 1)) else {
                continue;
            };
            if first.operator() != add_op
                || !first.runs(add)
                || second.operator() != relu_op
                || !second.runs(relu)
            {
                continue;
            }
            let &[a, b, alpha, sum, ref add_returns @ ..] = first.args() else {
                continue;
            };
            let &[input, out, ref relu_returns @ ..] = second.args() else {
                continue;
            };
            let named_in_run = |v: u32| {
                first
                    .args()
                    .iter()
                    .chain(second.args())
                    .filter(|&&x| x == v)
                    .count()
            };
            let fits = input == sum
                && add_returns.iter().all(|&r| r == sum)
                && relu_returns.iter().all(|&r| r == out)
                // Nothing else (no instruction, list, input or output) sees the sum.
                && rw.uses(sum) == named_in_run(sum)
                && same_shape(rw, &[a, b, sum, out]);
            if !fits {
                continue;
            }
            let args = [a, b, alpha, out];
            let Some(fused) = rw.kernel("mytest::add_relu", "out", &args) else {
                continue;
            };
            if rw.replace(at, fused, &args).is_ok() {
                // A call, read above.
                let _ = rw.run_nothing(at + 1);
            }
        }
    }
}

/// Whether every value of `values` is a contiguous f32 tensor of one shape.
fn same_shape(rw: &Rewriter<'_>, values: &[u32]) -> bool {
    let tensors = values.iter().map(|&v| match rw.value(v) {
        Some(ValueRef::Tensor(t)) => Some(t),
        _ => None,
    });
    let mut sizes = None;
    for t in tensors {
        let Some(t) = t else {
            return false;
        };
        if t.dtype() != ScalarType::Float || !t.is_contiguous() {
            return false;
        }
        match sizes {
            None => sizes = Some(t.sizes()),
            Some(s) if s == t.sizes() => {}
            Some(_) => return false,
        }
    }
    true
}
