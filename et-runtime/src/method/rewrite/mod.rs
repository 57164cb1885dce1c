//! Load-time rewrites: rules that kernel crates register, applied to every method once it
//! is built.
//!
//! A kernel library knows things the runtime does not: that its convolution can absorb the
//! batch norm after it, that its matrix product reads any strides so a transposed copy of
//! a constant can be a view. It says so with a [`RewriteRule`] registered next to its
//! kernels ([`register_rewrite!`](crate::register_rewrite)). After
//! [`Program::load_method`](crate::Program::load_method) has decoded, resolved and checked
//! every instruction, it hands each registered rule a [`Rewriter`]: a safe view of the
//! built method through which the rule reads the calls and values and makes its changes.
//! A rule changes nothing it cannot prove harmless; what it must prove is its own business
//! (its docs say), what the runtime guarantees is this:
//!
//! - **Every change keeps the method sound.** A replaced call's kernel is checked against
//!   its values as any call is at load, and its outs are proved not to overlap its inputs
//!   ([`Rewriter::replace`]); a tensor becomes a view of a constant only if the bytes it
//!   then reads lie inside the constant, and only read-only ([`Rewriter::view_constant`]).
//!   Nothing a rule does can make `execute` read or write outside a tensor's memory.
//! - **Instruction indices keep their meaning.** A rule cannot add or remove instructions:
//!   it replaces a call's kernel and arguments, or makes a call run nothing
//!   ([`Rewriter::run_nothing`]), keeping its operator. Jump destinations, error reports
//!   and ETDump traces (which list the operator of every call) stay those of the exported
//!   program.
//! - **Method memory is reserved.** A replaced call's argument list lives in method
//!   memory; each rule declares the most arguments it writes per call
//!   ([`RewriteRule::max_args`]) and the shortest call it replaces
//!   ([`RewriteRule::min_call_args`]), and
//!   [`method_allocator_estimate`](crate::method_allocator_estimate) reserves that much per
//!   such call. A replacement that would write more is refused.
//!
//! Rules run in link order, each over the method as the rules before it left it. A rule
//! that finds nothing to do costs one look at the operator table, so a binary can carry
//! rules for operators most of its programs never call. The mechanism is the feature
//! `rewrite`, which a crate registering rules enables; without it none of this is
//! compiled.
//!
//! Whether a call is served by a particular crate's kernel is a comparison the rule
//! makes: [`Call::runs`] compares the call's function with an entry's, and an entry's
//! [`KernelSignature::crate_name`](crate::registry::KernelSignature::crate_name) names the
//! crate that registered it (compare with `env!("CARGO_PKG_NAME")`), so a rule only
//! rewrites the calls whose kernels' behaviour it knows.
//!
//! The guide "Adding a fused kernel and its rewrite rule" in the custom-kernel docs walks
//! through a complete rule.

use core::cell::Cell;
use core::ops::Range;
use core::ptr::NonNull;

use super::instructions::{rebinds_memory, Chain, Instr};
use crate::error::KernelResult;
use crate::kernel::{KernelArgs, KernelContext, KernelEntry, KernelFn, ALIAS_PROOFS};
use crate::memory::Arena;
use crate::program::{MethodMeta, OperatorName, Vector};
use crate::registry::{resolve, CallDtypes};
use crate::tensor::{ShapeDynamism, Tensor, MAX_DIM};
use crate::value::Value;
use et_schema::fields as fb;
use et_schema::scalar_type::DtypeSet;

mod uses;
mod view;

use uses::Counts;

use view::indices;
pub use view::{Call, Instruction, OperatorId, ValueRef};

/// A load-time rewrite: a name (for diagnostics) and the function that applies it to a
/// built method. Register one with [`register_rewrite!`](crate::register_rewrite).
#[derive(Debug)]
pub struct RewriteRule {
    /// What the rule does, for diagnostics (`crate::rule`).
    pub name: &'static str,
    /// The most arguments a call this rule writes takes (0: it replaces no call's
    /// arguments). [`Rewriter::replace`] refuses longer argument lists.
    pub max_args: usize,
    /// The fewest arguments a call this rule replaces has: the estimate of method memory
    /// reserves room for `max_args` arguments for each call of at least this many.
    pub min_call_args: usize,
    /// Applies the rule to a built method.
    pub apply: fn(&mut Rewriter<'_>),
}

/// Every rewrite rule in the binary, in link order.
#[linkme::distributed_slice]
pub static REWRITE_RULES: [RewriteRule];

/// Every rewrite rule in the binary, in link order.
pub fn rules() -> &'static [RewriteRule] {
    &REWRITE_RULES
}

/// Adds a [`RewriteRule`] to the binary's rules: `register_rewrite!(static NAME =
/// RewriteRule { .. });`, optionally with attributes first (for example
/// `#[et_runtime::link::selected(...)]`, which drops the rule from builds whose selection
/// drops the kernels it writes).
#[macro_export]
macro_rules! register_rewrite {
    ($(#[$attr:meta])* $vis:vis static $name:ident = $rule:expr;) => {
        $(#[$attr])*
        #[$crate::link::distributed_slice($crate::rewrite::REWRITE_RULES)]
        #[linkme(crate = $crate::link::linkme)]
        $vis static $name: $crate::rewrite::RewriteRule = $rule;
    };
}

/// Why a rewrite was refused; the method stays as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// No call at that instruction, or a value index out of range.
    NoSuchCall,
    /// The values do not fit the kernel's signature.
    Signature,
    /// An out may overlap one of the call's inputs.
    Overlap,
    /// More arguments than the rule's [`RewriteRule::max_args`].
    TooManyArgs,
    /// Method memory is full.
    OutOfMemory,
    /// Not a view of a constant: see [`Rewriter::view_constant`].
    NotAView,
}

/// The kernel of a call a rewrite made pointless (absorbed into a fused call, or a copy
/// become a view): it runs nothing.
fn runs_nothing(_: &KernelContext<'_>, _: &KernelArgs<'_>) -> KernelResult {
    Ok(())
}

/// Kernel resolutions remembered while rules run: resolution scans the registry, and a
/// rule asks for the same fused kernel for every run it fuses.
const RESOLUTIONS: usize = 4;

type Resolution = Option<(
    &'static str,
    &'static str,
    CallDtypes,
    Option<&'static KernelEntry>,
)>;

/// A built method as a rewrite rule sees and changes it. Value indices are `u32`, as in
/// calls' argument lists; an index out of range reads as no value.
pub struct Rewriter<'r> {
    meta: MethodMeta<'r>,
    values: NonNull<Value>,
    num_values: usize,
    arena: &'r Arena<'r>,
    scratch: &'r Arena<'r>,
    instrs: &'r mut [Instr],
    chains: &'r [Chain],
    rebinds: bool,
    jumps: bool,
    counts: Cell<Counts>,
    max_args: usize,
    resolved: [Resolution; RESOLUTIONS],
    next_resolution: usize,
}

impl core::fmt::Debug for Rewriter<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Rewriter")
            .field("method", &self.meta.name())
            .field("values", &self.num_values)
            .field("instructions", &self.instrs.len())
            .finish()
    }
}

/// What [`run_rules`] is given: the parts of a built method.
pub(super) struct Built<'r> {
    pub(super) meta: MethodMeta<'r>,
    pub(super) values: NonNull<Value>,
    pub(super) num_values: usize,
    pub(super) arena: &'r Arena<'r>,
    pub(super) scratch: &'r Arena<'r>,
    pub(super) instrs: NonNull<Instr>,
    pub(super) total: usize,
    pub(super) chains: &'r [Chain],
}

/// Applies every registered rule to a built method.
///
/// # Safety
/// `built.instrs` must hold `total` initialized instructions of this method that nothing
/// else references, decoded against `built.values` (`num_values` initialized entries
/// whose tensors and lists live in method memory and nothing else borrows), `chains`
/// must partition them, and nothing may hold an allocation of `scratch`.
// Out of line: once per load, and only in binaries that register rules.
#[inline(never)]
pub(super) unsafe fn run_rules(built: Built<'_>) {
    // SAFETY: `total` initialized instructions, ours alone (caller).
    let instrs = unsafe { core::slice::from_raw_parts_mut(built.instrs.as_ptr(), built.total) };
    let rebinds = instrs.iter().any(rebinds_memory);
    let jumps = instrs.iter().any(|i| matches!(i, Instr::JumpFalse { .. }));
    let mut rw = Rewriter {
        meta: built.meta,
        values: built.values,
        num_values: built.num_values,
        arena: built.arena,
        scratch: built.scratch,
        instrs,
        chains: built.chains,
        rebinds,
        jumps,
        counts: Cell::new(Counts::NotCounted),
        max_args: 0,
        resolved: [None; RESOLUTIONS],
        next_resolution: 0,
    };
    for rule in rules() {
        rw.max_args = rule.max_args;
        (rule.apply)(&mut rw);
    }
    if !matches!(rw.counts.get(), Counts::NotCounted) {
        // SAFETY: the caller's promise: the counts were the arena's only allocation, and
        // the rewriter holding them is done.
        unsafe { rw.scratch.reset_shared() };
    }
}

/// Room in method memory for the argument lists the registered rules may write for a
/// call of `nargs` arguments.
pub(super) fn reserved_for_call(nargs: usize) -> usize {
    rules()
        .iter()
        .filter(|r| r.max_args > 0 && nargs >= r.min_call_args)
        .map(|r| r.max_args * 4 + 4)
        .sum()
}

impl<'r> Rewriter<'r> {
    /// The number of instructions.
    pub fn num_instructions(&self) -> usize {
        self.instrs.len()
    }

    /// The chains, as ranges of instruction indices. A run of calls that always execute
    /// together lies inside one chain (and, when [`jumps`](Self::jumps) is false, runs
    /// from the first call to the last).
    pub fn chains(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        (0..self.chains.len()).filter_map(|c| self.chain(c))
    }

    /// The number of chains.
    pub fn num_chains(&self) -> usize {
        self.chains.len()
    }

    /// Chain `c` as a range of instruction indices (see [`chains`](Self::chains)), if
    /// there is one: a rule that changes calls while it walks the chains takes them by
    /// index.
    pub fn chain(&self, c: usize) -> Option<Range<usize>> {
        let chain = self.chains.get(c)?;
        let start = chain.start as usize;
        Some(start..(start + chain.len as usize).min(self.instrs.len()))
    }

    /// Whether some instruction can change which memory a value uses (a MoveCall, or the
    /// `et_view` prim op): then a tensor built at load may not be the one a call sees at
    /// execute, and the outs of calls are checked at every execute rather than proved once.
    pub fn rebinds_memory(&self) -> bool {
        self.rebinds
    }

    /// Whether some instruction jumps (JumpFalseCall): consecutive calls of a chain may
    /// then not always run together.
    pub fn jumps(&self) -> bool {
        self.jumps
    }

    /// The index of operator `name.overload` (`"aten::relu"`, `"out"`) in the method's
    /// operator table (its first entry of that name), if the method calls it.
    pub fn operator(&self, name: &str, overload: &str) -> Option<OperatorId> {
        (0..self.meta.num_operators()).find_map(|i| {
            let op = self.meta.operator(i).ok()?;
            (op.name == name && op.overload == overload).then_some(OperatorId(i as u32))
        })
    }

    /// The name of operator `op`.
    pub fn operator_name(&self, op: OperatorId) -> Option<OperatorName<'r>> {
        self.meta.operator(op.0 as usize).ok()
    }

    /// Instruction `at` (an index into the method's instruction table).
    #[inline]
    pub fn instruction(&self, at: usize) -> Option<Instruction<'r>> {
        self.instrs.get(at).map(Instruction::of)
    }

    /// Instruction `at`, if it is a KernelCall.
    #[inline]
    pub fn call(&self, at: usize) -> Option<Call<'r>> {
        match self.instruction(at)? {
            Instruction::Call(call) => Some(call),
            _ => None,
        }
    }

    /// Every instruction, in order.
    pub fn instructions(&self) -> impl Iterator<Item = Instruction<'r>> + '_ {
        self.instrs.iter().map(Instruction::of)
    }

    /// The value table.
    fn value_table(&self) -> &[Value] {
        // SAFETY: `num_values` initialized entries (`run_rules`' caller), plain copies that
        // nothing writes while the rewriter lives: rules change tensors through the
        // entries' pointers, never the entries.
        unsafe { core::slice::from_raw_parts(self.values.as_ptr(), self.num_values) }
    }

    fn raw_value(&self, v: u32) -> Option<Value> {
        self.value_table().get(v as usize).copied()
    }

    /// The items of every tensor list and optional-tensor list, list by list.
    fn tensor_lists(&self) -> impl Iterator<Item = &[u32]> {
        self.value_table().iter().filter_map(|v| match *v {
            // SAFETY: a list of this method, whose memory outlives the rewriter.
            Value::TensorList(l) | Value::OptionalTensorList(l) => Some(unsafe { indices(l) }),
            _ => None,
        })
    }

    /// Value `v`.
    #[inline]
    pub fn value(&self, v: u32) -> Option<ValueRef<'_>> {
        let v = self.raw_value(v)?;
        // SAFETY: a value of this method, whose memory outlives the rewriter; the result
        // borrows `self`, and the rewriter changes tensors only through `&mut self`.
        Some(unsafe { ValueRef::of(v) })
    }

    /// The tensor of value `v`, if it is one.
    pub fn tensor(&self, v: u32) -> Option<&Tensor> {
        match self.value_table().get(v as usize)? {
            // SAFETY: a tensor of this method, whose memory outlives the rewriter; the
            // result borrows `self`, and the rewriter changes tensors only through `&mut
            // self`.
            Value::Tensor(t) => Some(unsafe { t.as_ref() }),
            _ => None,
        }
    }

    /// The items of value `v` (value indices, or `u32::MAX` for an absent optional
    /// tensor) if it is a list; empty otherwise.
    pub fn list_items(&self, v: u32) -> &[u32] {
        match self.value(v) {
            Some(ValueRef::IntList(items))
            | Some(ValueRef::TensorList(items))
            | Some(ValueRef::OptionalTensorList(items)) => items,
            _ => &[],
        }
    }

    /// Whether value `v` is one of the method's inputs or outputs: the caller can see it.
    pub fn is_io(&self, v: u32) -> bool {
        [fb::ExecutionPlan::VT_INPUTS, fb::ExecutionPlan::VT_OUTPUTS]
            .into_iter()
            .any(|vt| {
                let list = self.meta.list(vt).unwrap_or(Vector::EMPTY);
                (0..list.len()).any(|k| list.i32(k) == i64::from(v))
            })
    }

    /// Whether value `v` is an item of a tensor list or optional-tensor list (a kernel
    /// taking the list reads or writes it without naming it).
    pub fn in_a_tensor_list(&self, v: u32) -> bool {
        self.tensor_lists().any(|items| items.contains(&v))
    }

    /// The kernel that serves a call of `name.overload` with arguments `args` (value
    /// indices): resolved by the dtypes of its tensors as `load_method` resolves the
    /// program's calls. Whether the values fit its signature is checked by
    /// [`replace`](Self::replace).
    pub fn kernel(
        &mut self,
        name: &'static str,
        overload: &'static str,
        args: &[u32],
    ) -> Option<&'static KernelEntry> {
        let dtypes = self.call_dtypes(args);
        let known = self
            .resolved
            .iter()
            .flatten()
            .find(|&&(n, o, d, _)| d == dtypes && n == name && o == overload);
        if let Some(&(.., entry)) = known {
            return entry;
        }
        let entry = resolve(&OperatorName { name, overload }, dtypes);
        self.resolved[self.next_resolution] = Some((name, overload, dtypes, entry));
        self.next_resolution = (self.next_resolution + 1) % RESOLUTIONS;
        entry
    }

    /// The dtypes of the tensors among `args`, as `load_method` gathers a call's.
    fn call_dtypes(&self, args: &[u32]) -> CallDtypes {
        let mut all = DtypeSet::EMPTY;
        let mut last = None;
        for &a in args {
            if let Some(t) = self.tensor(a) {
                all = all.with(t.dtype());
                last = Some(t.dtype());
            }
        }
        CallDtypes {
            // The tensors share a dtype when the set holds that one dtype alone.
            common: last.filter(|&d| all.0 == d.bit()),
            all,
        }
    }

    /// Makes call `at` a call of `entry` with arguments `args` (its declared parameters,
    /// then any return slots), keeping its operator (traces report it under that name).
    /// Checks, as at load, that the values fit the kernel's signature, and proves that no
    /// out overlaps an input given the memory the tensors have now (the memory plan may
    /// reuse a dead input's bytes for an out when the calls were separate). The argument
    /// list is copied into method memory.
    pub fn replace(
        &mut self,
        at: usize,
        entry: &'static KernelEntry,
        args: &[u32],
    ) -> Result<(), Refused> {
        let old = self.call(at).ok_or(Refused::NoSuchCall)?;
        if args.len() > self.max_args {
            return Err(Refused::TooManyArgs);
        }
        if args.iter().any(|&a| a as usize >= self.num_values) {
            return Err(Refused::NoSuchCall);
        }
        let values = args.iter().map(|&a| {
            // SAFETY: `a` is in range (checked above); the value table is built.
            unsafe { &*self.values.as_ptr().add(a as usize) }
        });
        entry
            .signature
            .check_call(values)
            .map_err(|_| Refused::Signature)?;
        let params = entry.signature.args.len().min(args.len());
        // SAFETY: `args` are in-range value indices of this method; the value table and
        // its tensors live for the method's lifetime and nothing else uses them now.
        let kargs = unsafe { KernelArgs::new(self.values, args, params) };
        if !kargs.outs_are_exclusive(entry.signature.args) {
            return Err(Refused::Overlap);
        }
        let len = args.len();
        let stored = self
            .arena
            .alloc_array::<u32>(len)
            .map_err(|_| Refused::OutOfMemory)?;
        // SAFETY: `stored` holds `len` fresh u32s in method memory, which lives as long as
        // the instructions and is only read from now on.
        unsafe { core::ptr::copy_nonoverlapping(args.as_ptr(), stored.as_ptr(), len) };
        self.recount(old.args(), args);
        self.instrs[at] = Instr::Kernel {
            function: entry.function,
            args: stored,
            len: len as u32,
            params: entry.signature.args.len() as u32,
            op: old.operator().0,
            // The proof just made holds at every execute unless memory is rebound.
            prechecked: ALIAS_PROOFS && !self.rebinds,
        };
        Ok(())
    }

    /// Makes call `at` run nothing. It stays a call of its operator with its arguments,
    /// so instruction indices keep their meaning and a traced execute still lists it.
    /// Whatever it wrote is then not written: the rule must have proved nothing reads it
    /// (or that another call now writes it).
    pub fn run_nothing(&mut self, at: usize) -> Result<(), Refused> {
        match self.instrs.get_mut(at) {
            Some(Instr::Kernel { function, .. }) => {
                *function = runs_nothing;
                Ok(())
            }
            _ => Err(Refused::NoSuchCall),
        }
    }

    /// Whether call `call` runs nothing since a rewrite ([`run_nothing`](Self::run_nothing)).
    pub fn runs_nothing(&self, call: &Call<'_>) -> bool {
        core::ptr::fn_addr_eq(call.function(), runs_nothing as KernelFn)
    }

    /// Makes tensor value `out` a read-only view of constant tensor value `constant`'s
    /// data, laid out in `dim_order` (out dims from the outermost; its sizes stay). So
    /// that the view reads only the constant's bytes, both tensors must be static, of one
    /// dtype and element count, `constant` read-only data of the program or a data file
    /// (not planned), and `dim_order` a permutation of `out`'s dims; and no instruction may
    /// rebind memory. That the view holds the values a call computed before is the rule's
    /// proof (for example: a permuted copy of the constant, read only by kernels that
    /// take any strides).
    pub fn view_constant(
        &mut self,
        out: u32,
        constant: u32,
        dim_order: &[u8],
    ) -> Result<(), Refused> {
        let (Some(Value::Tensor(dst)), Some(Value::Tensor(src))) =
            (self.raw_value(out), self.raw_value(constant))
        else {
            return Err(Refused::NotAView);
        };
        if self.rebinds || out == constant {
            return Err(Refused::NotAView);
        }
        let data;
        {
            // SAFETY: tensors live in method memory; these shared borrows end in this block.
            let (s, d) = unsafe { (src.as_ref(), dst.as_ref()) };
            let is_constant = s.is_read_only() && !s.is_memory_planned() && !s.data_ptr().is_null();
            let mut seen = [false; MAX_DIM];
            let permutation = dim_order.len() == d.dim()
                && dim_order.iter().all(|&k| {
                    let fresh = (k as usize) < d.dim() && !seen[k as usize];
                    if fresh {
                        seen[k as usize] = true;
                    }
                    fresh
                });
            if !is_constant
                || !permutation
                || s.dynamism() != ShapeDynamism::Static
                || d.dynamism() != ShapeDynamism::Static
                || s.dtype() != d.dtype()
                || s.numel() != d.numel_bound()
            {
                return Err(Refused::NotAView);
            }
            data = s.data_ptr();
        }
        // SAFETY: the tensor lives in method memory and nothing else borrows it (`&mut
        // self`; no reference into the value table outlives the calls that made it). The
        // dim order is a permutation of `0..dim` (checked above), and `data` is the
        // constant's: valid for reads of its bytes for the method's lifetime (it borrows
        // the program and its data files), which are the out tensor's `numel_bound`
        // elements of the same dtype. The view is read-only, and no instruction rebinds
        // memory, so nothing writes through it: a kernel writing it fails.
        unsafe { (*dst.as_ptr()).view_read_only(data, dim_order) };
        Ok(())
    }
}
