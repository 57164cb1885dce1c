//! Constant views: the transposed weights of `nn.Linear`, read in place.
//!
//! ExecuTorch's exporter lowers `nn.Linear` to `permute_copy(weight, [1, 0])` followed by
//! `addmm` (or `mm`): every execute copies the constant weight, transposed, into planned
//! memory, only for the matrix product to read it (mv2's 1000x1280 classifier weight,
//! about 8% of an execute). etch's own matrix products read any row and column strides,
//! so the copy is not needed: at load, the permute's out tensor becomes a read-only view
//! of the constant in the permuted dim order, and the instruction a no-op.
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
//!   naming it is a `Free`, or a KernelCall served by etch's own kernel of
//!   `aten::addmm.out` or `aten::mm.out` (an et-ops entry of that name: a downstream
//!   crate's kernel may expect contiguous matrices) that takes it at a read-only tensor
//!   parameter.
//!
//! A permuted contiguous tensor is exactly the constant's bytes read in another dim
//! order: if out dim `k` is input dim `p[k]`, the out tensor's dim order lists, from the
//! outermost, the out dims of the input's dims in its own dim order (`q[order[j]]`, `q`
//! the inverse of `p`), and its strides are then the input's, permuted
//! (`stride_out[k] == stride_in[p[k]]`).
//!
//! The instruction stays a KernelCall of the same operator and arguments whose function
//! does nothing (`rewrites::runs_nothing`): instruction indices (jump destinations, error
//! reports) keep their meaning, and a traced execute still records the call, so an
//! ETDump lists the same operator calls as ExecuTorch's (the permute's taking next to no
//! time) and the Inspector lines them up with the exported graph.
//!
//! The alias proofs (`prechecked`, made per call before this pass) stay valid. The view's
//! bytes are the constant's, which lie in the program or a data file, never in the
//! planned buffers or method memory where every written tensor's data lies (an out
//! tensor is never constant data: a kernel writing a read-only tensor fails, and only
//! `et_view`, excluded above, can point a tensor at another's data). So a proof that an
//! out does not overlap the view's old planned bytes still holds for its constant bytes.
//! The calls reading the view only read it, and nothing can write through it: the view
//! is marked read-only, which every mutable accessor of a tensor checks.
//!
//! Cost at load: one pass over the operator table, then, per candidate permute, one pass
//! over the instructions' arguments and the tensor lists' items. No memory is allocated.

use core::ptr::NonNull;

use super::build::Builder;
use super::instructions::Instr;
#[cfg(feature = "backends")]
use super::rewrites::args_of;
use super::rewrites::{et_ops_aten, runs_nothing, Call};
use crate::kernel::{ArgKind, KernelEntry, KernelFn};
use crate::tensor::{ShapeDynamism, MAX_DIM};
use crate::value::{BoxedList, Value};

/// A permute the rewrite applies to, if nothing else blocks it: its out value, the int
/// values holding its dims, the constant's data, and the out tensor's new dim order.
struct Rewrite<'a> {
    out: u32,
    dims: &'a [u32],
    data: *const u8,
    order: [u8; MAX_DIM],
}

impl Builder<'_, '_> {
    /// Turns every `aten::permute_copy.out` of a constant that only etch's matrix
    /// products read into a view of the constant (see the module docs); a no-op when
    /// `rebinds` (some instruction can rebind memory).
    ///
    /// # Safety
    /// `instrs` must hold `total` initialized instructions of this method that nothing
    /// else references, and the value table must be fully built.
    // Out of line: once per load, and kept out of the decoding loop's function.
    #[inline(never)]
    pub(super) unsafe fn view_constants(
        &self,
        instrs: NonNull<Instr>,
        total: usize,
        rebinds: bool,
    ) {
        if rebinds {
            return;
        }
        let Some(permute) = self.permute_op() else {
            return;
        };
        // SAFETY: `total` initialized instructions, ours alone (caller).
        let instrs = unsafe { core::slice::from_raw_parts_mut(instrs.as_ptr(), total) };
        for pc in 0..total {
            let Some(call) = Call::of(&instrs[pc]) else {
                continue;
            };
            if call.op as usize != permute {
                continue;
            }
            let Some(rewrite) = self.permute_of_constant(call.args) else {
                continue;
            };
            if !only_gemms_read(&rewrite, pc, instrs) {
                continue;
            }
            let Value::Tensor(t) = self.value(rewrite.out) else {
                continue;
            };
            // SAFETY: the tensor lives in method memory and nothing else borrows it
            // during load. The dim order is a permutation of `0..dim` (built from one in
            // `permute_of_constant`), and `data` is the constant's: valid for reads of the
            // constant's bytes for the method's lifetime (it borrows the program and its
            // data files), which are the out tensor's `numel_bound` elements (both static,
            // same dtype, permuted sizes).
            unsafe {
                let t = &mut *t.as_ptr();
                let dim = t.dim();
                t.view_read_only(rewrite.data, &rewrite.order[..dim]);
            }
            if let Instr::Kernel { function, .. } = &mut instrs[pc] {
                *function = runs_nothing;
            }
        }
    }

    /// The index of `aten::permute_copy.out` in the operator table (the first; a repeated
    /// entry is not recognized, which only leaves its calls as they are).
    fn permute_op(&self) -> Option<usize> {
        (0..self.meta.num_operators()).find(|&i| {
            self.meta
                .operator(i)
                .is_ok_and(|op| op.name == "aten::permute_copy" && op.overload == "out")
        })
    }

    /// What a permute call with arguments `args` (`self`, `dims`, `out`, then return
    /// slots naming `out`) becomes, if its input is a static constant, its dims a
    /// permutation, and its out a static tensor of the permuted sizes that is no method
    /// input or output and in no tensor list. (That no instruction writes the dims is
    /// checked with the out's readers, in one pass: `only_gemms_read`.)
    fn permute_of_constant(&self, args: &[u32]) -> Option<Rewrite<'_>> {
        let [input, dims, out, ret @ ..] = args else {
            return None;
        };
        if ret.iter().any(|r| r != out) || input == out {
            return None;
        }
        let (src, dst) = (self.tensor(*input)?, self.tensor(*out)?);
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
        let Value::IntList(list) = self.value(*dims) else {
            return None;
        };
        // SAFETY: list headers live in method memory for the method's lifetime, and
        // `indices` holds `len` value indices, range-checked at load.
        let items = unsafe {
            let list: &BoxedList<i64> = list.as_ref();
            core::slice::from_raw_parts(list.indices.as_ptr(), list.len)
        };
        if items.len() != n {
            return None;
        }
        // `inverse[i]`: the out dim that input dim `i` became (`NONE`: none yet, so a
        // repeated dim is caught).
        const NONE: u8 = u8::MAX;
        let mut inverse = [NONE; MAX_DIM];
        for (k, &item) in items.iter().enumerate() {
            let Value::Int(d) = self.value(item) else {
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
        if self.is_io(*out) || self.in_a_tensor_list(*out) {
            return None;
        }
        Some(Rewrite {
            out: *out,
            dims: items,
            data: src.data_ptr(),
            order,
        })
    }
}

/// Whether every instruction but `pc` (the permute) that names the rewrite's out
/// value is a `Free` or a call of etch's own `addmm.out`/`mm.out` taking it at read-only
/// tensor parameters only, and no instruction can write one of its dims: as a
/// kernel's return slot (an argument after its declared parameters, which prim ops
/// write) or as an argument of a delegate. (MoveCalls are excluded before this pass
/// runs; one would fail the check.)
fn only_gemms_read(rw: &Rewrite, pc: usize, instrs: &[Instr]) -> bool {
    let out = rw.out;
    let writes_dims = |args: &[u32]| args.iter().any(|a| rw.dims.contains(a));
    instrs.iter().enumerate().all(|(k, instr)| match *instr {
        Instr::Kernel { .. } => {
            let Some(call) = Call::of(instr) else {
                return false;
            };
            if writes_dims(call.returns()) {
                return false;
            }
            if k == pc || !call.args.contains(&out) {
                return true;
            }
            let Some(entry) = etch_gemm(call.function) else {
                return false;
            };
            let kinds = entry.signature.args;
            call.args
                .iter()
                .enumerate()
                .all(|(i, &a)| a != out || kinds.get(i) == Some(&ArgKind::Tensor))
        }
        #[cfg(feature = "backends")]
        Instr::Delegate { args, len, .. } => {
            // SAFETY: a decoded DelegateCall's `args` holds `len` range-checked value
            // indices in method memory.
            let args = unsafe { args_of(args, len) };
            !args.contains(&out) && !writes_dims(args)
        }
        Instr::Move { .. } => false,
        Instr::JumpFalse { cond, .. } => cond != out,
        Instr::Free { .. } => true,
    })
}

/// The et-ops entry of `aten::addmm.out` or `aten::mm.out` whose function is `function`.
fn etch_gemm(function: KernelFn) -> Option<&'static KernelEntry> {
    et_ops_aten(function, &["addmm.out", "mm.out"])
}

#[cfg(test)]
mod tests {
    use crate::tensor::ShapeDynamism;
    use crate::tensor_buf::TensorBuf;
    use alloc::vec::Vec;
    use et_schema::scalar_type::ScalarType;

    /// The dim order `permute_of_constant` gives a permute's out tensor makes its strides
    /// the input's, permuted: `stride_out[k] == stride_in[perm[k]]`, for inputs in the
    /// default and in other dim orders.
    #[test]
    fn permuted_dim_order_gives_permuted_strides() {
        let cases: &[(&[usize], &[u8], &[u8])] = &[
            (&[1000, 1280], &[0, 1], &[1, 0]),
            (&[2, 3, 4], &[0, 1, 2], &[2, 0, 1]),
            (&[2, 3, 4, 5], &[0, 2, 3, 1], &[0, 3, 1, 2]),
            (&[2, 0, 4], &[0, 1, 2], &[1, 2, 0]),
            (&[7], &[0], &[0]),
        ];
        for &(sizes, in_order, perm) in cases {
            let src =
                TensorBuf::with_layout(ScalarType::Float, sizes, in_order, ShapeDynamism::Static)
                    .unwrap();
            let n = sizes.len();
            let out_sizes: Vec<usize> = perm.iter().map(|&p| sizes[p as usize]).collect();
            let mut out = TensorBuf::zeros(ScalarType::Float, &out_sizes).unwrap();
            let mut inverse = [0u8; 8];
            for (k, &p) in perm.iter().enumerate() {
                inverse[p as usize] = k as u8;
            }
            let order: Vec<u8> = src
                .dim_order()
                .iter()
                .map(|&d| inverse[d as usize])
                .collect();
            // SAFETY: `order` is a permutation of `0..n`; `src`'s data holds the same
            // number of elements and outlives `out`'s use here.
            unsafe { out.view_read_only(src.data_ptr(), &order) };
            for k in 0..n {
                assert_eq!(
                    out.strides()[k],
                    src.strides()[perm[k] as usize],
                    "sizes {sizes:?}, input order {in_order:?}, perm {perm:?}"
                );
            }
            assert!(out.is_read_only() && !out.is_memory_planned());
            assert_eq!(out.data_ptr(), src.data_ptr());
            assert!(out.data_mut::<f32>().is_err() || out.numel() == 0);
        }
    }
}
