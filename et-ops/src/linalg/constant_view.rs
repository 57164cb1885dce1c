//! Constant views: the transposed weights of `nn.Linear`, read in place.
//!
//! ExecuTorch's exporter lowers `nn.Linear` to `permute_copy(weight, [1, 0])` followed by
//! `addmm` (or `mm`): every execute copies the constant weight, transposed, into planned
//! memory, only for the matrix product to read it (mv2's 1000x1280 classifier weight,
//! about 8% of an execute). This crate's matrix products read any row and column strides,
//! so the copy is not needed: a load-time rewrite rule (registered here, applied by
//! et-runtime's [`rewrite`](et_runtime::rewrite) mechanism) makes the permute's out tensor
//! a read-only view of the constant in the permuted dim order, and the call run nothing.
//!
//! A `aten::permute_copy.out` call is rewritten only when all of this holds; anything else
//! keeps the instruction as it is:
//!
//! - no instruction of the method can rebind memory (no MoveCall, no `et_view`: the same
//!   condition that keeps the alias proofs), so every value keeps the tensor it was built
//!   with, and a constant's data never moves;
//! - its input is a constant (read-only data in the program or a data file, not planned)
//!   of static shape, and its dims are a permutation of the input's dims (negative dims
//!   counted from the end) held in int values no instruction writes (none is a kernel's
//!   return slot or a delegate's argument);
//! - its out tensor is static, of the input's dtype and the permuted sizes; it is not a
//!   method input or output, not an item of any tensor list, and every other instruction
//!   naming it is a `Free`, or a KernelCall served by this crate's own kernel of
//!   `aten::addmm.out` or `aten::mm.out` (a downstream crate's kernel may expect
//!   contiguous matrices) that takes it at a read-only tensor parameter.
//!
//! A permuted contiguous tensor is exactly the constant's bytes read in another dim
//! order: if out dim `k` is input dim `p[k]`, the out tensor's dim order lists, from the
//! outermost, the out dims of the input's dims in its own dim order (`q[order[j]]`, `q`
//! the inverse of `p`), and its strides are then the input's, permuted
//! (`stride_out[k] == stride_in[p[k]]`).
//!
//! The instruction stays a KernelCall of the same operator and arguments that runs
//! nothing ([`Rewriter::run_nothing`]): instruction indices (jump destinations, error
//! reports) keep their meaning, and a traced execute still records the call, so an ETDump
//! lists the same operator calls as ExecuTorch's (the permute's taking next to no time)
//! and the Inspector lines them up with the exported graph.
//!
//! The alias proofs made at load stay valid. The view's bytes are the constant's, which
//! lie in the program or a data file, never in the planned buffers or method memory where
//! every written tensor's data lies (an out tensor is never constant data: a kernel
//! writing a read-only tensor fails, and only `et_view`, excluded above, can point a
//! tensor at another's data). So a proof that an out does not overlap the view's old
//! planned bytes still holds for its constant bytes. The calls reading the view only read
//! it, and nothing can write through it: the view is read-only, which every mutable
//! accessor of a tensor checks. ([`Rewriter::view_constant`] checks the memory side of
//! this; the rule proves the values are the same.)
//!
//! Cost at load: one pass over the operator table, then, per candidate permute, one pass
//! over the instructions' arguments and the tensor lists' items. No memory is allocated.

use et_runtime::register_rewrite;
use et_runtime::registry::{ArgKind, KernelEntry};
use et_runtime::rewrite::{Instruction, RewriteRule, Rewriter, ValueRef};
use et_runtime::{ShapeDynamism, MAX_DIM};

use crate::util::own_kernels::own_aten_kernel;

register_rewrite! {
    #[et_runtime::link::selected(operators = ["aten::permute_copy.out"])]
    static CONSTANT_VIEWS = RewriteRule {
        name: "et-ops::constant_views",
        max_args: 0,
        min_call_args: usize::MAX,
        apply: view_constants,
    };
}

/// A permute the rewrite applies to, if nothing else blocks it: its out value, the
/// constant's value, the int values holding its dims, and the out tensor's new dim order.
struct Rewrite<'a> {
    out: u32,
    input: u32,
    dims: &'a [u32],
    order: [u8; MAX_DIM],
}

/// Turns every `aten::permute_copy.out` of a constant that only this crate's matrix
/// products read into a view of the constant (see the module docs).
fn view_constants(rw: &mut Rewriter<'_>) {
    if rw.rebinds_memory() {
        return;
    }
    let Some(permute) = rw.operator("aten::permute_copy", "out") else {
        return;
    };
    // Found when a permute of a constant is, once.
    let mut gemms = None;
    for at in 0..rw.num_instructions() {
        let Some(call) = rw.call(at) else {
            continue;
        };
        if call.operator() != permute {
            continue;
        }
        let Some(rewrite) = permute_of_constant(rw, call.args()) else {
            continue;
        };
        let gemms =
            gemms.get_or_insert_with(|| [own_aten_kernel("addmm.out"), own_aten_kernel("mm.out")]);
        if !only_gemms_read(rw, &rewrite, at, gemms) {
            continue;
        }
        let dim = rw.tensor(rewrite.out).map_or(0, |t| t.dim());
        let (out, input, order) = (rewrite.out, rewrite.input, rewrite.order);
        if rw.view_constant(out, input, &order[..dim]).is_ok() {
            // A call just read cannot be missing.
            let _ = rw.run_nothing(at);
        }
    }
}

/// What a permute call with arguments `args` (`self`, `dims`, `out`, then return slots
/// naming `out`) becomes, if its input is a static constant, its dims a permutation, and
/// its out a static tensor of the permuted sizes that is no method input or output and
/// in no tensor list. (That no instruction writes the dims is checked with the out's
/// readers, in one pass: `only_gemms_read`.)
fn permute_of_constant<'a>(rw: &'a Rewriter<'_>, args: &[u32]) -> Option<Rewrite<'a>> {
    let [input, dims, out, ret @ ..] = args else {
        return None;
    };
    if ret.iter().any(|r| r != out) || input == out {
        return None;
    }
    let (src, dst) = (rw.tensor(*input)?, rw.tensor(*out)?);
    let constant = src.is_read_only() && !src.is_memory_planned() && !src.data_ptr().is_null();
    if !constant
        || src.dynamism() != ShapeDynamism::Static
        || dst.dynamism() != ShapeDynamism::Static
        || src.dtype() != dst.dtype()
        || src.dim() != dst.dim()
    {
        return None;
    }
    let n = src.dim();
    let Some(ValueRef::IntList(items)) = rw.value(*dims) else {
        return None;
    };
    if items.len() != n {
        return None;
    }
    // `inverse[i]`: the out dim that input dim `i` became (`NONE`: none yet, so a
    // repeated dim is caught).
    const NONE: u8 = u8::MAX;
    let mut inverse = [NONE; MAX_DIM];
    for (k, &item) in items.iter().enumerate() {
        let Some(ValueRef::Int(d)) = rw.value(item) else {
            return None;
        };
        let d = if d < 0 { d + n as i64 } else { d };
        if !(0..n as i64).contains(&d) {
            return None;
        }
        let d = d as usize;
        if inverse[d] != NONE || dst.size(k) != src.size(d) {
            return None;
        }
        inverse[d] = k as u8;
    }
    let mut order = [0u8; MAX_DIM];
    for (slot, &d) in order.iter_mut().zip(src.dim_order()) {
        *slot = inverse[d as usize];
    }
    if rw.is_io(*out) || rw.in_a_tensor_list(*out) {
        return None;
    }
    Some(Rewrite {
        out: *out,
        input: *input,
        dims: items,
        order,
    })
}

/// Whether every instruction but `at` (the permute) that names the rewrite's out value is
/// a `Free` or a call of this crate's `addmm.out`/`mm.out` (`gemms`) taking it at
/// read-only tensor parameters only, and no instruction can write one of its dims: as a
/// kernel's return slot (an argument after its declared parameters, which prim ops write)
/// or as an argument of a delegate. (MoveCalls are excluded before; one fails the check.)
fn only_gemms_read(
    rw: &Rewriter<'_>,
    rewrite: &Rewrite<'_>,
    at: usize,
    gemms: &[Option<&'static KernelEntry>],
) -> bool {
    let out = rewrite.out;
    let writes_dims = |args: &[u32]| args.iter().any(|a| rewrite.dims.contains(a));
    rw.instructions().enumerate().all(|(k, instr)| match instr {
        Instruction::Call(call) => {
            if writes_dims(call.returns()) {
                return false;
            }
            if k == at || !call.args().contains(&out) {
                return true;
            }
            let Some(entry) = gemms.iter().flatten().find(|e| call.runs(e)) else {
                return false;
            };
            let kinds = entry.signature.args;
            call.args()
                .iter()
                .enumerate()
                .all(|(i, &a)| a != out || kinds.get(i) == Some(&ArgKind::Tensor))
        }
        Instruction::Delegate { args } => !args.contains(&out) && !writes_dims(args),
        Instruction::Move { .. } => false,
        Instruction::JumpFalse { cond, .. } => cond != out,
        Instruction::Free { .. } => true,
    })
}
