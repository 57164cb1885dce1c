//! Decoding a method's instructions into the table `execute` runs, one concern per
//! function:
//!
//! - [`Builder::operands`]: the instruction union and the range of every operand (value,
//!   operator and delegate indices, jump destinations);
//! - [`Builder::resolve_cached`]: which kernel serves a KernelCall (`registry::resolve`,
//!   the rule introspection uses too), once per operator and call dtypes;
//! - [`Missing`]: KernelCalls no kernel serves, all counted and reported together;
//! - [`Builder::check_signature`]: the call's values against the kernel's declared kinds;
//! - [`Builder::outs_proved_exclusive`]: the alias proof that lets `execute` skip the
//!   per-call check;
//! - [`rebinds_memory`]: view detection, which withdraws those proofs.

use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::NonNull;

use super::build::{Builder, Plan};
use super::values::in_range;
use crate::error::Error;
use crate::kernel::{KernelArgs, KernelEntry, KernelFn, Mismatch, ALIAS_PROOFS};
use crate::method_error::{note, LoadDetail};
use crate::program::{tag, Table, Vector};
use crate::registry::{resolve, CallDtypes};
use crate::value::Value;
use et_schema::fields as fb;
use et_schema::scalar_type::DtypeSet;

/// One decoded instruction, as `execute` runs it.
#[derive(Clone, Copy)]
pub(super) enum Instr {
    Kernel {
        function: KernelFn,
        args: NonNull<u32>,
        len: u32,
        params: u32,
        op: u32,
        /// The call's outs were proved exclusive at load (`outs_proved_exclusive`).
        prechecked: bool,
    },
    #[cfg(feature = "backends")]
    Delegate {
        index: u32,
        args: NonNull<u32>,
        len: u32,
    },
    Move {
        from: u32,
        to: u32,
    },
    JumpFalse {
        cond: u32,
        dest: u32,
    },
    Free {
        value: u32,
    },
}

/// A chain's instructions: `len` entries of the instruction table from `start`.
#[derive(Clone, Copy)]
pub(super) struct Chain {
    pub(super) start: u32,
    pub(super) len: u32,
}

/// An instruction with range-checked operands; a KernelCall still needs its kernel.
enum Operands<'a> {
    Kernel {
        op: usize,
        args: &'a [u32],
        dtypes: CallDtypes,
    },
    Ready(Instr),
}

/// A kernel resolution remembered per operator: the call dtypes it was made for, and the
/// entry found (`None` until the operator's first call).
type CacheSlot = Option<(CallDtypes, Option<&'static KernelEntry>)>;

/// KernelCalls no registered kernel serves: how many, and the first of them.
#[derive(Default)]
struct Missing {
    count: usize,
    first_instruction: usize,
    first_op: usize,
}

impl Missing {
    fn note(&mut self, instruction: usize, op: usize) {
        if self.count == 0 {
            self.first_instruction = instruction;
            self.first_op = op;
        }
        self.count += 1;
    }
}

/// What decoding learns across instructions.
#[derive(Default)]
struct Decoding {
    /// The method's number of operators: the bound of every KernelCall's operator index.
    num_ops: usize,
    missing: Missing,
    /// Some instruction can rebind which memory a value uses ([`rebinds_memory`]).
    rebinds: bool,
}

/// Stands in for a KernelCall without a kernel; never run, since loading then fails.
const UNSERVED: Instr = Instr::Free { value: 0 };

// `operands` reads every call's first int field, and MoveCall's second, through
// MoveCall's offsets.
const _: () = {
    let first = fb::MoveCall::VT_MOVE_FROM;
    assert!(fb::KernelCall::VT_OP_INDEX == first && fb::DelegateCall::VT_DELEGATE_INDEX == first);
    assert!(fb::KernelCall::VT_ARGS == fb::DelegateCall::VT_ARGS);
    assert!(fb::JumpFalseCall::VT_COND_VALUE_INDEX == first);
    assert!(fb::FreeCall::VT_VALUE_INDEX == first);
    assert!(fb::JumpFalseCall::VT_DESTINATION_INSTRUCTION == fb::MoveCall::VT_MOVE_TO);
};

impl<'a> Builder<'a, '_> {
    /// The instruction table, the chains over it, and the number of chains.
    #[allow(
        clippy::type_complexity,
        reason = "three parts of the instruction table"
    )]
    pub(super) fn build_instructions(
        &self,
        num_delegates: usize,
    ) -> Result<(NonNull<Instr>, NonNull<Chain>, usize), Error> {
        let chains = self
            .meta
            .list(Plan::VT_CHAINS)
            .ok_or(Error::InvalidProgram)?;
        // Lengths are read once: each read is a checked load.
        let num_chains = chains.len();
        let total = self.meta.num_instructions();
        if total >= u32::MAX as usize {
            return Err(Error::InvalidProgram);
        }
        let out_chains = self.arena.alloc_array::<Chain>(num_chains)?;
        let instrs = self.arena.alloc_array::<Instr>(total)?;
        let num_ops = self.meta.num_operators();
        // One resolution per (operator, call dtypes): most programs call few operators
        // many times. Built for size there is no cache, and each call scans the registry
        // (`resolve_cached`), as TFLite Micro's resolver does: the same kernels, in less
        // code.
        let cache = if cfg!(etch_size_first) {
            &mut [][..]
        } else {
            self.arena.alloc_slice::<CacheSlot>(num_ops, None)?
        };
        let mut state = Decoding {
            num_ops,
            ..Decoding::default()
        };
        let mut pc = 0usize;
        for c in 0..num_chains {
            let list = chains
                .table(c)
                .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
                .unwrap_or(Vector::EMPTY);
            let start = pc;
            let chain_len = list.len();
            for k in 0..chain_len {
                if pc >= total {
                    return Err(Error::InvalidProgram);
                }
                // SAFETY: `pc < total`, the array's length; the entry is written by
                // `decode` (or loading fails and the table is never read).
                let slot = unsafe { &mut *instrs.as_ptr().add(pc).cast::<MaybeUninit<Instr>>() };
                self.decode(
                    list.table(k),
                    chain_len,
                    pc,
                    num_delegates,
                    cache,
                    &mut state,
                    slot,
                )
                .map_err(|e| note(self.detail, e, LoadDetail::Instruction { index: pc }))?;
                pc += 1;
            }
            // SAFETY: `c < num_chains`, the array's length.
            unsafe {
                out_chains.as_ptr().add(c).write(Chain {
                    start: start as u32,
                    len: (pc - start) as u32,
                })
            };
        }
        if pc != total {
            return Err(Error::InvalidProgram);
        }
        if state.missing.count > 0 {
            return Err(self.missing_kernels(&state.missing));
        }
        // Without the proofs (`ALIAS_PROOFS`) there is none to withdraw.
        if ALIAS_PROOFS && state.rebinds {
            // SAFETY: all `total` entries were written above.
            unsafe { withdraw_alias_proofs(instrs, total) };
        }
        Ok((instrs, out_chains, num_chains))
    }

    /// Decodes instruction `pc` (of a chain of `chain_len`) into `slot`. A KernelCall that
    /// no registered kernel serves is noted in `state` and becomes a placeholder, so that
    /// every missing kernel is counted before loading fails.
    // Kept out of the chain loop: inlined there, the size-optimized build grows, and one
    // call per instruction is noise next to its resolution and checks.
    // The instruction is written in place: returned, it took a round trip through the
    // stack whose partial reloads stalled on store forwarding.
    #[inline(never)]
    #[allow(
        clippy::too_many_arguments,
        reason = "the decoding state of one instruction"
    )]
    fn decode(
        &self,
        instr: Option<Table<'a>>,
        chain_len: usize,
        pc: usize,
        num_delegates: usize,
        cache: &mut [CacheSlot],
        state: &mut Decoding,
        slot: &mut MaybeUninit<Instr>,
    ) -> Result<(), Error> {
        let num_ops = state.num_ops;
        let decoded = match self.operands(instr, chain_len, num_delegates, num_ops)? {
            Operands::Ready(decoded) => decoded,
            Operands::Kernel { op, args, dtypes } => {
                let Some(entry) = self.resolve_cached(op, dtypes, cache)? else {
                    state.missing.note(pc, op);
                    slot.write(UNSERVED);
                    return Ok(());
                };
                self.check_signature(entry, pc, op, args)?;
                Instr::Kernel {
                    function: entry.function,
                    args: NonNull::from(args).cast(),
                    len: args.len() as u32,
                    params: entry.signature.args.len() as u32,
                    op: op as u32,
                    prechecked: ALIAS_PROOFS && self.outs_proved_exclusive(entry, args),
                }
            }
        };
        // Only the alias proofs read it (a size-first build has none).
        if ALIAS_PROOFS {
            state.rebinds |= rebinds_memory(&decoded);
        }
        slot.write(decoded);
        Ok(())
    }

    /// Reads the instruction union and range-checks every operand: value indices against
    /// the value table, the operator against `num_ops`, the delegate against
    /// `num_delegates`, a jump destination against the chain.
    fn operands(
        &self,
        instr: Option<Table<'a>>,
        chain_len: usize,
        num_delegates: usize,
        num_ops: usize,
    ) -> Result<Operands<'a>, Error> {
        let (kind, call) = instr.ok_or(Error::InvalidProgram)?.fields().union(
            fb::Instruction::VT_INSTR_ARGS_TYPE,
            fb::Instruction::VT_INSTR_ARGS,
        );
        let call = call.ok_or(Error::InvalidProgram)?.fields();
        let n = self.num_values;
        // Every call table has an int in its first field, and MoveCall and JumpFalseCall
        // another in their second (see the assertions above).
        let first = call.int(fb::MoveCall::VT_MOVE_FROM, 4);
        let second = || call.int(fb::MoveCall::VT_MOVE_TO, 4);
        let bad = Error::InvalidProgram;
        // Tests of the tag rather than a `match` arm per kind (a jump table of 8-byte
        // words in a non-PIE build). Kernel and delegate calls: an index, then the args
        // (at the same field, see the assertions above).
        let kernel = kind == tag::KERNEL_CALL;
        if kernel || kind == tag::DELEGATE_CALL {
            let index = in_range(first, if kernel { num_ops } else { num_delegates }).ok_or(bad)?;
            let (args, dtypes) = self.call_args(call)?;
            if kernel {
                return Ok(Operands::Kernel {
                    op: index as usize,
                    args,
                    dtypes,
                });
            }
            // Without backends no method has a delegate (`init_delegates`), so the
            // range check above has already refused the call.
            #[cfg(feature = "backends")]
            return Ok(Operands::Ready(Instr::Delegate {
                index,
                args: NonNull::from(args).cast(),
                len: args.len() as u32,
            }));
        }
        // Move, jump and free calls: a value index first.
        let value = in_range(first, n).ok_or(bad)?;
        Ok(Operands::Ready(if kind == tag::MOVE_CALL {
            Instr::Move {
                from: value,
                to: in_range(second(), n).ok_or(bad)?,
            }
        } else if kind == tag::JUMP_FALSE_CALL {
            // A destination equal to the chain's length ends the chain. (A negative one, as
            // a `u64`, is at least 2^63: past any chain.)
            let dest = second();
            if dest as u64 > chain_len as u64 {
                return Err(bad);
            }
            Instr::JumpFalse {
                cond: value,
                dest: dest as u32,
            }
        } else if kind == tag::FREE_CALL {
            Instr::Free { value }
        } else {
            return Err(bad);
        }))
    }

    /// The kernel serving a call of operator `op` whose tensor arguments have `dtypes`,
    /// resolved once per operator and call dtypes (or at every call, when `cache` has no
    /// slot for it).
    fn resolve_cached(
        &self,
        op: usize,
        dtypes: CallDtypes,
        cache: &mut [CacheSlot],
    ) -> Result<Option<&'static KernelEntry>, Error> {
        // No slot (no cache, built for size: see `build_instructions`), no caching: the
        // call is resolved on its own. (`operands` has bounded `op` already.)
        let Some(slot) = cache.get_mut(op) else {
            return Ok(resolve(&self.meta.operator(op)?, dtypes));
        };
        Ok(match *slot {
            Some((cached, found)) if cached == dtypes => found,
            _ => {
                let found = resolve(&self.meta.operator(op)?, dtypes);
                *slot = Some((dtypes, found));
                found
            }
        })
    }

    /// A call's arguments (required): value indices, each range-checked against the
    /// value table and copied into method memory; and the dtypes of the tensors among
    /// them, which choose the kernel (`resolve_cached`). One pass over the arguments,
    /// the dtypes read from the values already built (their tensors were validated), not
    /// from another walk of the flatbuffer.
    fn call_args(
        &self,
        call: et_schema::reader::Fields<'a>,
    ) -> Result<(&'a [u32], CallDtypes), Error> {
        let bytes = call
            .vector_bytes(fb::KernelCall::VT_ARGS, 4)
            .ok_or(Error::InvalidProgram)?;
        let len = bytes.len() / 4;
        // No overflow: `4 * len <= bytes.len()`.
        let out = self
            .arena
            .allocate(len * size_of::<u32>(), align_of::<u32>())?
            .cast::<u32>();
        let mut all = DtypeSet::EMPTY;
        let mut last = None;
        for k in 0..len {
            // SAFETY: `bytes` holds `len` 4-byte elements.
            let raw = unsafe { bytes.as_ptr().add(4 * k).cast::<[u8; 4]>().read_unaligned() };
            let index = in_range(i32::from_le_bytes(raw).into(), self.num_values)
                .ok_or(Error::InvalidProgram)?;
            // SAFETY: `k < len`, the allocation's length in `u32`s.
            unsafe { out.as_ptr().add(k).write(index) };
            // SAFETY: `index` is below `num_values`, the length of the value table built
            // by `build_values`; tensors live in the method arena.
            if let Value::Tensor(t) = unsafe { *self.values.as_ptr().add(index as usize) } {
                // SAFETY: as above; nothing else borrows the tensor during load.
                let d = unsafe { t.as_ref() }.dtype();
                all = all.with(d);
                last = Some(d);
            }
        }
        let dtypes = CallDtypes {
            // The tensors share a dtype when the set holds that one dtype alone.
            common: last.filter(|&d| all.0 == d.bit()),
            all,
        };
        // SAFETY: `len` entries were written above, in the method arena, which lives for
        // 'a and is only read from now on.
        Ok((
            unsafe { core::slice::from_raw_parts(out.as_ptr(), len) },
            dtypes,
        ))
    }

    /// The error for the KernelCalls no kernel serves.
    #[cfg_attr(not(etch_size_first), cold)]
    fn missing_kernels(&self, missing: &Missing) -> Error {
        let d = LoadDetail::MissingKernels {
            count: missing.count,
            first_instruction: missing.first_instruction,
            first_operator: self.operator(missing.first_op),
        };
        note(self.detail, Error::OperatorMissing, d)
    }

    /// Checks the call's values against the kernel's declared parameters.
    fn check_signature(
        &self,
        entry: &KernelEntry,
        instruction: usize,
        op: usize,
        args: &[u32],
    ) -> Result<(), Error> {
        // SAFETY: every index in `args` was range-checked by `indices` against the value
        // table, whose entries stay initialized for 'a.
        let values = args
            .iter()
            .map(|&i| unsafe { &*self.values.as_ptr().add(i as usize) });
        let detail = match entry.signature.check_call(values) {
            Ok(()) => return Ok(()),
            Err(Mismatch::Count { expected, found }) => LoadDetail::ArgumentCount {
                instruction,
                operator: self.operator(op),
                expected,
                found,
            },
            Err(Mismatch::Kind {
                position,
                expected,
                found,
            }) => LoadDetail::ArgumentKind {
                instruction,
                operator: self.operator(op),
                position,
                expected,
                found,
            },
        };
        Err(note(self.detail, Error::InvalidProgram, detail))
    }

    /// The alias proof: whether the call's outs never alias another of its arguments,
    /// given the data pointers bound at load. Valid for every execute unless some
    /// instruction rebinds memory ([`rebinds_memory`]), in which case the proofs are
    /// withdrawn.
    pub(super) fn outs_proved_exclusive(&self, entry: &KernelEntry, args: &[u32]) -> bool {
        let params = entry.signature.args.len().min(args.len());
        // SAFETY: `args` are range-checked value indices of this method; the value table
        // and its tensors live for 'a and nothing else uses them during load.
        let kargs = unsafe { KernelArgs::new(self.values, args, params) };
        kargs.outs_are_exclusive(entry.signature.args)
    }
}

/// View detection: whether running `instr` can change which memory a value refers to,
/// voiding the alias proofs made at load (and what the load-time rewrites rely on). A
/// MoveCall copies one value over another; `et_view` (found by its function) points its
/// output at its input's data.
pub(super) fn rebinds_memory(instr: &Instr) -> bool {
    match instr {
        Instr::Move { .. } => true,
        Instr::Kernel { function, .. } => {
            core::ptr::fn_addr_eq(*function, crate::prim_ops::ET_VIEW.function)
        }
        _ => false,
    }
}

/// Makes every KernelCall of the first `total` instructions check aliasing at each call.
///
/// # Safety
/// `instrs` must hold `total` initialized instructions that nothing else references.
unsafe fn withdraw_alias_proofs(instrs: NonNull<Instr>, total: usize) {
    for k in 0..total {
        // SAFETY: `k < total`, an initialized entry (caller).
        if let Instr::Kernel { prechecked, .. } = unsafe { &mut *instrs.as_ptr().add(k) } {
            *prechecked = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::error::{Error, KernelResult};
    use crate::kernel::{
        ArgKind, DtypeKey, KernelArgs, KernelContext, KernelEntry, KernelSignature, ReturnKind,
    };
    use crate::loader::FileLoader;
    use crate::memory::MemoryManager;
    use crate::method_buffers::MethodBuffers;
    use crate::method_error::LoadDetail;
    use crate::program::Program;
    use crate::registry::{find_kernel, has_operator, resolve_kernel};
    use et_schema::scalar_type::{DtypeSet, ScalarType};

    /// A fallback `aten::add.out` compiled only for int64 and double: what a selective
    /// build leaves when its selection names add for those dtypes and not for float32.
    #[linkme::distributed_slice(crate::__private::KERNELS)]
    #[linkme(crate = linkme)]
    static ADD_WITHOUT_FLOAT: KernelEntry = crate::kernel_entry!(
        "aten::add.out",
        DtypeKey::FALLBACK,
        add_without_float,
        &KernelSignature {
            args: &[
                ArgKind::Tensor,
                ArgKind::Tensor,
                ArgKind::Scalar,
                ArgKind::TensorMut,
            ],
            returns: ReturnKind::Outs,
            crate_name: crate::kernel::CrateName(&"et-runtime"),
            dtypes: DtypeSet::EMPTY
                .with(ScalarType::Long)
                .with(ScalarType::Double),
        },
    );

    fn add_without_float(_: &KernelContext<'_>, _: &KernelArgs<'_>) -> KernelResult {
        unreachable!("no test calls add with int64 or double")
    }

    /// `add.pte` adds float32 tensors; the only `aten::add.out` here is a fallback whose
    /// `signature.dtypes` leaves float32 out. Introspection and `load_method` must give
    /// the same answer: no kernel serves the call.
    #[test]
    fn introspection_and_load_method_agree_on_a_fallback_without_the_call_dtype() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/add.pte");
        let loader = FileLoader::open(path).expect("fixture");
        let program = Program::load(&loader).expect("valid program");
        let meta = program.method_meta("forward").expect("forward");

        let mut calls = meta.kernel_calls();
        let call = calls.next().expect("a kernel call").expect("well formed");
        assert!(calls.next().is_none(), "add.pte has one kernel call");
        assert_eq!(call.key.common_dtype(), Some(ScalarType::Float));
        assert!(resolve_kernel(&call.operator, &call.key).is_none());
        assert!(find_kernel("aten::add", "out", Some(ScalarType::Float)).is_none());
        assert_eq!(crate::registry::missing_kernels(&meta).count(), 1);
        // The name is registered, and the entry serves the dtypes it was compiled for.
        assert!(has_operator("aten::add", "out"));
        let long = find_kernel("aten::add", "out", Some(ScalarType::Long));
        assert!(long.is_some_and(|e| core::ptr::eq(e, &ADD_WITHOUT_FLOAT)));

        let mut buffers = MethodBuffers::for_method(&meta, 0).expect("buffers");
        let (method_memory, mut planned, _) = buffers.split();
        let mut memory = MemoryManager::without_temp(method_memory, &mut planned);
        let err = program.load_method("forward", &mut memory).unwrap_err();
        assert_eq!(err.error, Error::OperatorMissing);
        let LoadDetail::MissingKernels {
            count,
            first_instruction,
            first_operator,
        } = err.detail
        else {
            panic!("{err}")
        };
        assert_eq!(count, 1);
        assert_eq!(first_instruction, call.instruction);
        assert_eq!(
            (first_operator.name, first_operator.overload),
            ("aten::add", "out")
        );
    }
}
