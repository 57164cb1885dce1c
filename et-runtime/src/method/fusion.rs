//! Epilogue fusion: a convolution absorbs the inference batch norm that follows it, and
//! the `hardtanh` (ReLU6) or `relu` after that.
//!
//! ExecuTorch's exporter keeps a model's batch norms (its portable path folds nothing),
//! so MobileNetV2 runs each of its 52 convolutions as three calls: the convolution, a
//! batch norm over its output, and for 35 of them a ReLU6 over that. The last two are
//! two more passes over every activation, a sixth of the execute, and memory-bound, so
//! they gain little from a second thread. At load, such a run of calls becomes one call
//! of et-ops' `etch::convolution_batch_norm[_hardtanh|_relu].out`, which applies the
//! batch norm and the clamp to each output tile as the convolution stores it. Its values
//! are those of the three calls, bit for bit (et-ops' tests compare them).
//!
//! A run is fused only when all of this holds; anything else keeps its calls:
//!
//! - no instruction of the method can rebind memory (no MoveCall, no `et_view`), and
//!   none jumps: every call keeps the tensors it was built with, and the calls of a run
//!   always execute together;
//! - the calls are consecutive in one chain: `aten::convolution.out`, then
//!   `aten::_native_batch_norm_legit_no_training.out` of the convolution's out, then
//!   optionally `aten::hardtanh.out` or `aten::relu.out` of the batch norm's out; each
//!   served by et-ops' own kernel of that name (a downstream crate's kernel is never
//!   replaced), each call's return slots naming its outs;
//! - the convolution's `transposed` is a bool value `false` that no instruction writes;
//! - the values the fused call no longer writes (the convolution's out, the batch norm's
//!   out when an activation follows, its two statistics outs) are read by no other
//!   instruction and are no method input or output nor an item of a tensor list: nothing
//!   can observe that they are not computed;
//! - the fused kernel serves the call's dtypes (f32 only) and accepts its values (its
//!   signature is checked as at any load), and its out is proved not to overlap any of
//!   its inputs: the memory plan may reuse a convolution's input bytes for the
//!   activation's out (their lifetimes do not overlap in the program, but do in the
//!   fused call). Then the run is tried without its activation, whose call stays (in
//!   mv2, 4 of 35 runs); if the batch norm's out overlaps too, nothing is fused (3 of
//!   52);
//! - method memory has room for the fused call's argument list (`method_allocator_estimate`
//!   reserves it), and the kernels' scratch memory for one `u16` per value while the
//!   pass runs.
//!
//! The convolution's instruction becomes the fused call (the operator it reports in
//! traces stays `aten::convolution.out`, now timing all three); the absorbed calls stay
//! KernelCalls of their operators whose function does nothing (`rewrites::runs_nothing`), so
//! instruction indices keep their meaning and an ETDump still lists every call of the
//! exported graph.
//!
//! Cost at load: one pass over the operator table, one over the instructions' arguments,
//! the tensor lists' items and the method's inputs and outputs, counting how often each
//! value is named (in the kernels' scratch memory, released after), then a look at each
//! candidate run's own arguments.

use core::ptr::NonNull;

use super::build::{Builder, Plan};
use super::instructions::{rebinds_memory, Chain, Instr};
#[cfg(feature = "backends")]
use super::rewrites::args_of;
use super::rewrites::{is_et_ops_aten, runs_nothing, Call};
use crate::kernel::{KernelEntry, KernelFn, ALIAS_PROOFS};
use crate::memory::Arena;
use crate::program::{OperatorName, Vector};
use crate::registry::{resolve, CallDtypes};
use crate::value::{Value, NONE_INDEX};
use et_schema::fused::{
    FusedOperator, CONVOLUTION_BATCH_NORM, CONVOLUTION_BATCH_NORM_HARDTANH,
    CONVOLUTION_BATCH_NORM_RELU,
};

/// An operator a run can consist of: its index in the method's operator table, and the
/// function of et-ops' kernel for it (a call served by another kernel is not fused).
#[derive(Clone, Copy)]
struct Role {
    op: u32,
    function: KernelFn,
}

impl Role {
    fn of(&self, call: &Call<'_>) -> bool {
        call.op == self.op && core::ptr::fn_addr_eq(call.function, self.function)
    }
}

/// The operators a run can consist of, and the fused kernels found so far (resolution
/// scans the registry: once per fused operator and call dtypes, not once per run).
struct Operators {
    convolution: Role,
    batch_norm: Role,
    hardtanh: Option<Role>,
    relu: Option<Role>,
    fused: [Option<(CallDtypes, Option<&'static KernelEntry>)>; 3],
}

/// The activation that ends a run, with its arguments.
#[derive(Clone, Copy)]
enum Activation {
    /// `hardtanh(input, min_val, max_val, out)`.
    Hardtanh { min: u32, max: u32, out: u32 },
    /// `relu(input, out)`.
    Relu { out: u32 },
}

/// The most arguments a fused call takes: the convolution's nine, the batch norm's five
/// parameters, two bounds and the out.
pub(super) const MAX_FUSED_ARGS: usize = 17;

/// Per value: how many times the method names it (instruction arguments, tensor-list
/// items, inputs and outputs), saturating, and whether an instruction can write it.
struct Uses<'t> {
    counts: &'t mut [u16],
}

/// The bit of [`Uses::counts`] that marks a value some instruction can write.
const WRITTEN: u16 = 1 << 15;

impl Uses<'_> {
    fn name(&mut self, v: u32) {
        if let Some(c) = self.counts.get_mut(v as usize) {
            if *c & !WRITTEN != !WRITTEN {
                *c += 1;
            }
        }
    }

    fn write(&mut self, v: u32) {
        if let Some(c) = self.counts.get_mut(v as usize) {
            *c |= WRITTEN;
        }
    }

    fn count(&self, v: u32) -> u16 {
        self.counts
            .get(v as usize)
            .map_or(u16::MAX, |&c| c & !WRITTEN)
    }

    fn written(&self, v: u32) -> bool {
        self.counts
            .get(v as usize)
            .is_none_or(|&c| c & WRITTEN != 0)
    }
}

impl Builder<'_, '_> {
    /// Fuses every run of convolution, batch norm and activation that may be fused (see
    /// the module docs), counting the values' uses in `scratch` (the kernels' scratch
    /// arena, empty between calls, and left empty).
    ///
    /// # Safety
    /// `instrs` must hold `total` initialized instructions of this method that nothing
    /// else references, `chains` must partition them, the value table must be fully
    /// built, and nothing may hold an allocation of `scratch`.
    // Out of line: once per load.
    #[inline(never)]
    pub(super) unsafe fn fuse_epilogues(
        &self,
        instrs: NonNull<Instr>,
        total: usize,
        chains: &[Chain],
        scratch: &Arena<'_>,
    ) {
        let Some(mut ops) = self.fusion_operators() else {
            return;
        };
        // SAFETY: `total` initialized instructions, ours alone (caller).
        let instrs = unsafe { core::slice::from_raw_parts_mut(instrs.as_ptr(), total) };
        // A rebinding (MoveCall, `et_view`) or a jump voids what fusion relies on.
        let jumps = |i: &Instr| matches!(i, Instr::JumpFalse { .. });
        if instrs.iter().any(|i| rebinds_memory(i) || jumps(i)) {
            return;
        }
        let Ok(counts) = scratch.alloc_slice::<u16>(self.num_values, 0) else {
            return;
        };
        let mut uses = Uses { counts };
        self.count_uses(instrs, &mut uses);
        for chain in chains {
            let start = chain.start as usize;
            let end = (start + chain.len as usize).min(total);
            let mut pc = start;
            while pc + 1 < end {
                pc += self.fuse_at(instrs, pc, end, &mut ops, &uses).unwrap_or(1);
            }
        }
        // SAFETY: the caller's promise: the counts were the arena's only allocation, and
        // they are dropped here.
        unsafe { scratch.reset_shared() };
    }

    /// Counts every value's uses and marks the values instructions write: return slots
    /// (arguments after a kernel's declared parameters, which prim ops write) and
    /// delegate arguments.
    fn count_uses(&self, instrs: &[Instr], uses: &mut Uses<'_>) {
        for instr in instrs {
            match *instr {
                Instr::Kernel { .. } => {
                    let Some(call) = Call::of(instr) else {
                        continue;
                    };
                    call.args.iter().for_each(|&a| uses.name(a));
                    call.returns().iter().for_each(|&a| uses.write(a));
                }
                #[cfg(feature = "backends")]
                Instr::Delegate { args, len, .. } => {
                    // SAFETY: a decoded DelegateCall's `args` holds `len` range-checked
                    // value indices in method memory.
                    for &a in unsafe { args_of(args, len) } {
                        uses.name(a);
                        uses.write(a);
                    }
                }
                Instr::Free { value } => uses.name(value),
                // Excluded before counting.
                Instr::Move { .. } | Instr::JumpFalse { .. } => {}
            }
        }
        for v in 0..self.num_values as u32 {
            self.list_items(v).iter().for_each(|&i| uses.name(i));
        }
        for vt in [Plan::VT_INPUTS, Plan::VT_OUTPUTS] {
            let list = self.meta.list(vt).unwrap_or(Vector::EMPTY);
            for k in 0..list.len() {
                uses.name(u32::try_from(list.i32(k)).unwrap_or(NONE_INDEX));
            }
        }
    }

    /// The operators a run is made of, if the method calls a convolution and a batch
    /// norm, and et-ops serves them.
    fn fusion_operators(&self) -> Option<Operators> {
        let role = |name: &str, rest: &str| {
            let op = (0..self.meta.num_operators()).find_map(|i| {
                let op = self.meta.operator(i).ok()?;
                (op.name == name && op.overload == "out").then_some(i as u32)
            })?;
            let function = crate::registry::kernels()
                .iter()
                .find(|e| is_et_ops_aten(e, rest))?
                .function;
            Some(Role { op, function })
        };
        Some(Operators {
            convolution: role("aten::convolution", "convolution.out")?,
            batch_norm: role(
                "aten::_native_batch_norm_legit_no_training",
                "_native_batch_norm_legit_no_training.out",
            )?,
            hardtanh: role("aten::hardtanh", "hardtanh.out"),
            relu: role("aten::relu", "relu.out"),
            fused: [None; 3],
        })
    }

    /// Fuses the run starting at `pc` (before `end`, its chain's end), if it is one;
    /// returns the number of instructions it spans.
    fn fuse_at(
        &self,
        instrs: &mut [Instr],
        pc: usize,
        end: usize,
        ops: &mut Operators,
        uses: &Uses<'_>,
    ) -> Option<usize> {
        let conv = Call::of(instrs.get(pc)?)?;
        if !ops.convolution.of(&conv) {
            return None;
        }
        let &[input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, conv_out, ..] =
            conv.args
        else {
            return None;
        };
        let bn = Call::of(instrs.get(pc + 1)?)?;
        if !ops.batch_norm.of(&bn) {
            return None;
        }
        let &[bn_input, bn_weight, bn_bias, mean, var, _momentum, eps, bn_out, save_mean, save_invstd, ..] =
            bn.args
        else {
            return None;
        };
        if conv.params != 10
            || bn.params != 10
            || bn_input != conv_out
            || conv.returns().iter().any(|&r| r != conv_out)
        {
            return None;
        }
        // The batch norm returns its three outs as one tensor list (or not at all).
        let returned = match *bn.returns() {
            [] => None,
            [list] if self.list_items(list) == [bn_out, save_mean, save_invstd] => Some(list),
            _ => return None,
        };
        if !matches!(self.value(transposed), Value::Bool(false)) || uses.written(transposed) {
            return None;
        }
        // Every use of the values the fused call no longer writes is inside the run.
        let calls = [conv.args, bn.args];
        let private = |v: u32, run: &[&[u32]]| {
            let inside = run.iter().map(|args| occurrences(args, v)).sum::<usize>()
                + returned.map_or(0, |list| occurrences(self.list_items(list), v));
            usize::from(uses.count(v)) == inside
        };
        let list_private = returned.is_none_or(|list| private(list, &calls));
        if !list_private
            || !private(conv_out, &calls)
            || !private(save_mean, &calls)
            || !private(save_invstd, &calls)
        {
            return None;
        }
        let activation = (pc + 2 < end)
            .then(|| self.activation(instrs.get(pc + 2)?, ops, bn_out))
            .flatten()
            .filter(|&(_, act_args)| private(bn_out, &[conv.args, bn.args, act_args]))
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
        // With the activation if it may be absorbed, else (or if its out overlaps an
        // input: see `fused_call`) without.
        let (fused, run) = activation
            .and_then(|a| Some((self.fused_call(ops, conv.op, &head, Some(a), bn_out)?, 3)))
            .or_else(|| Some((self.fused_call(ops, conv.op, &head, None, bn_out)?, 2)))?;
        instrs[pc] = fused;
        for absorbed in &mut instrs[pc + 1..pc + run] {
            if let Instr::Kernel { function, .. } = absorbed {
                *function = runs_nothing;
            }
        }
        Some(run)
    }

    /// The call of the fused kernel taking the convolution's and batch norm's `head`
    /// arguments, then the activation's bounds and out (or the batch norm's out `bn_out`
    /// without one), as instruction `op`'s, with its argument list stored in method memory.
    /// `None` if no kernel serves it, its values do not fit the kernel's signature, its
    /// out may overlap one of its inputs (the memory plan may put the out where the
    /// convolution's input was: in the program one is dead when the other is written),
    /// or method memory is full.
    fn fused_call(
        &self,
        ops: &mut Operators,
        op: u32,
        head: &[u32; 14],
        activation: Option<Activation>,
        bn_out: u32,
    ) -> Option<Instr> {
        // `slot`: where `ops.fused` remembers the operator's kernel.
        let (fused, tail, slot): (FusedOperator, &[u32], usize) = match activation {
            None => (CONVOLUTION_BATCH_NORM, &[bn_out], 0),
            Some(Activation::Hardtanh { min, max, out }) => {
                (CONVOLUTION_BATCH_NORM_HARDTANH, &[min, max, out], 1)
            }
            Some(Activation::Relu { out }) => (CONVOLUTION_BATCH_NORM_RELU, &[out], 2),
        };
        let mut args = [0u32; MAX_FUSED_ARGS];
        let len = head.len() + tail.len();
        args[..head.len()].copy_from_slice(head);
        args[head.len()..len].copy_from_slice(tail);
        let args = &args[..len];
        let dtypes = self.call_dtypes(args);
        let entry = match ops.fused[slot] {
            Some((known, entry)) if known == dtypes => entry,
            _ => {
                let operator = OperatorName {
                    name: fused.name,
                    overload: "out",
                };
                let entry = resolve(&operator, dtypes);
                ops.fused[slot] = Some((dtypes, entry));
                entry
            }
        }?;
        let values = args.iter().map(|&a| {
            // SAFETY: every index came from decoded calls' range-checked arguments; the
            // value table is built and lives for the method's lifetime.
            unsafe { &*self.values.as_ptr().add(a as usize) }
        });
        entry.signature.check_call(values).ok()?;
        if !self.outs_proved_exclusive(entry, args) {
            return None;
        }
        let stored = self.arena.alloc_array::<u32>(len).ok()?;
        // SAFETY: `stored` holds `len` fresh u32s in method memory, which lives as long as
        // the instructions and is only read from now on.
        unsafe { core::ptr::copy_nonoverlapping(args.as_ptr(), stored.as_ptr(), len) };
        Some(Instr::Kernel {
            function: entry.function,
            args: stored,
            len: len as u32,
            params: entry.signature.args.len() as u32,
            op,
            // Proved just above, and no instruction rebinds memory.
            prechecked: ALIAS_PROOFS,
        })
    }

    /// The activation `instr` applies to `input`, with the call's arguments, if it is a
    /// call of et-ops' `hardtanh` or `relu` whose return slots name its out.
    fn activation<'i>(
        &self,
        instr: &'i Instr,
        ops: &Operators,
        input: u32,
    ) -> Option<(Activation, &'i [u32])> {
        let call = Call::of(instr)?;
        let (activation, out, first) = if ops.hardtanh.is_some_and(|r| r.of(&call)) {
            let &[first, min, max, out, ..] = call.args else {
                return None;
            };
            (Activation::Hardtanh { min, max, out }, out, first)
        } else if ops.relu.is_some_and(|r| r.of(&call)) {
            let &[first, out, ..] = call.args else {
                return None;
            };
            (Activation::Relu { out }, out, first)
        } else {
            return None;
        };
        let fits = first == input && call.returns().iter().all(|&r| r == out);
        fits.then_some((activation, call.args))
    }
}

/// How many times `v` is in `args`.
fn occurrences(args: &[u32], v: u32) -> usize {
    args.iter().filter(|&&a| a == v).count()
}
