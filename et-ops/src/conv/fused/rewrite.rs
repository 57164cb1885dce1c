//! Epilogue fusion: a convolution absorbs the inference batch norm that follows it, and
//! the `hardtanh` (ReLU6) or `relu` after that.
//!
//! ExecuTorch's exporter keeps a model's batch norms (its portable path folds nothing),
//! so MobileNetV2 runs each of its 52 convolutions as three calls: the convolution, a
//! batch norm over its output, and for 35 of them a ReLU6 over that. The last two are
//! two more passes over every activation, a sixth of the execute, and memory-bound, so
//! they gain little from a second thread. At load, this crate's rewrite rule (applied by
//! et-runtime's [`rewrite`](et_runtime::rewrite) mechanism) turns such a run of calls into
//! one call of `etch::convolution_batch_norm[_hardtanh|_relu].out` ([`super`]), which
//! applies the batch norm and the clamp to each output tile as the convolution stores it.
//! Its values are those of the three calls, bit for bit (this crate's tests compare them).
//!
//! A run is fused only when all of this holds; anything else keeps its calls:
//!
//! - no instruction of the method can rebind memory (no MoveCall, no `et_view`), and
//!   none jumps: every call keeps the tensors it was built with, and the calls of a run
//!   always execute together;
//! - the calls are consecutive in one chain: `aten::convolution.out`, then
//!   `aten::_native_batch_norm_legit_no_training.out` of the convolution's out, then
//!   optionally `aten::hardtanh.out` or `aten::relu.out` of the batch norm's out; each
//!   served by this crate's own kernel of that name (a downstream crate's kernel is never
//!   replaced), each call's return slots naming its outs;
//! - the convolution's `transposed` is a bool value `false` that no instruction writes;
//! - the values the fused call no longer writes (the convolution's out, the batch norm's
//!   out when an activation follows, its two statistics outs) are read by no other
//!   instruction, are no method input or output nor an item of a tensor list, and are
//!   none of the fused call's own inputs: nothing can observe that they are not computed;
//! - the fused kernel serves the call's dtypes (f32 only) and accepts its values (its
//!   signature is checked as at any load), and its out is proved not to overlap any of
//!   its inputs: the memory plan may reuse a convolution's input bytes for the
//!   activation's out (their lifetimes do not overlap in the program, but do in the
//!   fused call). Then the run is tried without its activation, whose call stays (in
//!   mv2, 4 of 35 runs); if the batch norm's out overlaps too, nothing is fused (3 of
//!   52);
//! - method memory has room for the fused call's argument list (the rule declares its
//!   [`MAX_FUSED_ARGS`], which `method_allocator_estimate` reserves per call of ten
//!   arguments or more), and the kernels' scratch memory for one `u16` per value while
//!   the rules run (et-runtime counts the values' uses there).
//!
//! The convolution's instruction becomes the fused call (the operator it reports in
//! traces stays `aten::convolution.out`, now timing all three); the absorbed calls stay
//! KernelCalls of their operators that run nothing ([`Rewriter::run_nothing`]), so
//! instruction indices keep their meaning and an ETDump still lists every call of the
//! exported graph.
//!
//! Cost at load: one pass over the operator table, one over the instructions' arguments,
//! the tensor lists' items and the method's inputs and outputs, counting how often each
//! value is named (in the kernels' scratch memory, released after), then a look at each
//! candidate run's own arguments.

use et_runtime::register_rewrite;
use et_runtime::registry::KernelEntry;
use et_runtime::rewrite::{Call, OperatorId, RewriteRule, Rewriter, ValueRef};

use crate::util::own_kernels::own_aten_kernel;

/// The most arguments a fused call takes: the convolution's nine, the batch norm's five
/// parameters, two bounds and the out.
pub const MAX_FUSED_ARGS: usize = 17;

register_rewrite! {
    // With the operators it rewrites (as its fused kernels' `replaces`).
    #[et_runtime::link::selected(operators = [
        "aten::convolution.out",
        "aten::_native_batch_norm_legit_no_training.out"
    ])]
    static CONVOLUTION_EPILOGUES = RewriteRule {
        name: "et-ops::convolution_batch_norm_activation",
        max_args: MAX_FUSED_ARGS,
        // A convolution's call has its ten parameters, and return slots.
        min_call_args: 10,
        apply: fuse_epilogues,
    };
}

/// An operator a run can consist of: its index in the method's operator table, and this
/// crate's kernel for it (a call served by another kernel is not fused).
#[derive(Clone, Copy)]
struct Role {
    op: OperatorId,
    entry: &'static KernelEntry,
}

impl Role {
    fn of(&self, call: &Call<'_>) -> bool {
        call.operator() == self.op && call.runs(self.entry)
    }
}

/// The operators a run can consist of.
struct Operators {
    convolution: Role,
    batch_norm: Role,
    hardtanh: Option<Role>,
    relu: Option<Role>,
}

/// The activation that ends a run, with its arguments.
#[derive(Clone, Copy)]
enum Activation {
    /// `hardtanh(input, min_val, max_val, out)`.
    Hardtanh { min: u32, max: u32, out: u32 },
    /// `relu(input, out)`.
    Relu { out: u32 },
}

/// Fuses every run of convolution, batch norm and activation that may be fused (see the
/// module docs).
fn fuse_epilogues(rw: &mut Rewriter<'_>) {
    let Some(ops) = operators(rw) else {
        return;
    };
    // A rebinding (MoveCall, `et_view`) or a jump voids what fusion relies on.
    if rw.rebinds_memory() || rw.jumps() {
        return;
    }
    let mut at = 0;
    for c in 0..rw.num_chains() {
        let Some(chain) = rw.chain(c) else {
            break;
        };
        at = at.max(chain.start);
        while at + 1 < chain.end {
            at += fuse_at(rw, at, chain.end, &ops).unwrap_or(1);
        }
    }
}

/// The operators a run is made of, if the method calls a convolution and a batch norm,
/// and this crate serves them.
fn operators(rw: &Rewriter<'_>) -> Option<Operators> {
    let role = |name: &str, rest: &str| {
        Some(Role {
            op: rw.operator(name, "out")?,
            entry: own_aten_kernel(rest)?,
        })
    };
    Some(Operators {
        convolution: role("aten::convolution", "convolution.out")?,
        batch_norm: role(
            "aten::_native_batch_norm_legit_no_training",
            "_native_batch_norm_legit_no_training.out",
        )?,
        hardtanh: role("aten::hardtanh", "hardtanh.out"),
        relu: role("aten::relu", "relu.out"),
    })
}

/// Fuses the run starting at `at` (before `end`, its chain's end), if it is one; returns
/// the number of instructions it spans.
fn fuse_at(rw: &mut Rewriter<'_>, at: usize, end: usize, ops: &Operators) -> Option<usize> {
    let conv = rw.call(at)?;
    if !ops.convolution.of(&conv) {
        return None;
    }
    let &[input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, conv_out, ..] =
        conv.args()
    else {
        return None;
    };
    let bn = rw.call(at + 1)?;
    if !ops.batch_norm.of(&bn) {
        return None;
    }
    let &[bn_input, bn_weight, bn_bias, mean, var, _momentum, eps, bn_out, save_mean, save_invstd, ..] =
        bn.args()
    else {
        return None;
    };
    if conv.num_params() != 10
        || bn.num_params() != 10
        || bn_input != conv_out
        || conv.returns().iter().any(|&r| r != conv_out)
    {
        return None;
    }
    // The batch norm returns its three outs as one tensor list (or not at all).
    let returned = match *bn.returns() {
        [] => None,
        [list] if rw.list_items(list) == [bn_out, save_mean, save_invstd] => Some(list),
        _ => return None,
    };
    if !matches!(rw.value(transposed), Some(ValueRef::Bool(false))) || rw.written(transposed) {
        return None;
    }
    // Every use of the values the fused call no longer writes is inside the run: a value
    // is private when the method names it as often as the run does. The run's arguments
    // are read once for all of them. (Without a returned list, the list's place is taken
    // by the convolution's out, checked twice.)
    let list = returned.unwrap_or(conv_out);
    let returned_items = returned.map_or(&[][..], |list| rw.list_items(list));
    let [list_inside, conv_out_inside, mean_inside, invstd_inside, bn_out_inside] = occurrences(
        &[conv.args(), bn.args(), returned_items],
        [list, conv_out, save_mean, save_invstd, bn_out],
    );
    let private = |v: u32, inside: usize| rw.uses(v) == inside;
    if !private(list, list_inside)
        || !private(conv_out, conv_out_inside)
        || !private(save_mean, mean_inside)
        || !private(save_invstd, invstd_inside)
    {
        return None;
    }
    // The batch norm's out matters only if the activation is absorbed.
    let activation = (at + 2 < end)
        .then(|| activation(&rw.call(at + 2)?, ops, bn_out))
        .flatten()
        .filter(|&(_, act_args)| {
            let [in_activation] = occurrences(&[act_args], [bn_out]);
            private(bn_out, bn_out_inside + in_activation)
        })
        .map(|(activation, _)| activation);
    let head = [
        input,
        weight,
        bias,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bn_weight,
        bn_bias,
        mean,
        var,
        eps,
    ];
    // The fused call must not read a value it no longer computes (a program may pass
    // the convolution's out as the batch norm's weight, say): the uses counted above
    // would all be inside the run, yet the value would be read uncomputed.
    let dropped = [conv_out, save_mean, save_invstd, list, bn_out];
    let bounds = match activation {
        Some(Activation::Hardtanh { min, max, .. }) => [min, max],
        _ => [input; 2],
    };
    if head.iter().chain(&bounds).any(|v| dropped.contains(v)) {
        return None;
    }
    // With the activation if it may be absorbed, else (or if its out overlaps an input:
    // see `fuse_call`) without.
    let run = match activation {
        Some(a) if fuse_call(rw, at, &head, Some(a), bn_out) => 3,
        _ if fuse_call(rw, at, &head, None, bn_out) => 2,
        _ => return None,
    };
    for absorbed in at + 1..at + run {
        // Calls, read above.
        let _ = rw.run_nothing(absorbed);
    }
    Some(run)
}

/// Makes call `at` the call of the fused kernel taking the convolution's and batch norm's
/// `head` arguments, then the activation's bounds and out (or the batch norm's out
/// `bn_out` without one). False if no kernel serves it, its values do not fit the
/// kernel's signature, its out may overlap one of its inputs (the memory plan may put the
/// out where the convolution's input was: in the program one is dead when the other is
/// written), or method memory is full.
fn fuse_call(
    rw: &mut Rewriter<'_>,
    at: usize,
    head: &[u32; 14],
    activation: Option<Activation>,
    bn_out: u32,
) -> bool {
    let (name, tail): (&'static str, &[u32]) = match activation {
        None => ("etch::convolution_batch_norm", &[bn_out]),
        Some(Activation::Hardtanh { min, max, out }) => {
            ("etch::convolution_batch_norm_hardtanh", &[min, max, out])
        }
        Some(Activation::Relu { out }) => ("etch::convolution_batch_norm_relu", &[out]),
    };
    let mut args = [0u32; MAX_FUSED_ARGS];
    let len = head.len() + tail.len();
    args[..head.len()].copy_from_slice(head);
    args[head.len()..len].copy_from_slice(tail);
    let args = &args[..len];
    let Some(entry) = rw.kernel(name, "out", args) else {
        return false;
    };
    rw.replace(at, entry, args).is_ok()
}

/// The activation `call` applies to `input`, with the call's arguments, if it is a call
/// of this crate's `hardtanh` or `relu` whose return slots name its out.
fn activation<'i>(call: &Call<'i>, ops: &Operators, input: u32) -> Option<(Activation, &'i [u32])> {
    let (activation, out, first) = if ops.hardtanh.is_some_and(|r| r.of(call)) {
        let &[first, min, max, out, ..] = call.args() else {
            return None;
        };
        (Activation::Hardtanh { min, max, out }, out, first)
    } else if ops.relu.is_some_and(|r| r.of(call)) {
        let &[first, out, ..] = call.args() else {
            return None;
        };
        (Activation::Relu { out }, out, first)
    } else {
        return None;
    };
    let fits = first == input && call.returns().iter().all(|&r| r == out);
    fits.then_some((activation, call.args()))
}

/// How many times each of `values` is among the arguments `lists`.
fn occurrences<const N: usize>(lists: &[&[u32]], values: [u32; N]) -> [usize; N] {
    let mut counts = [0; N];
    for args in lists {
        for &a in *args {
            for (count, &v) in counts.iter_mut().zip(&values) {
                *count += usize::from(a == v);
            }
        }
    }
    counts
}
