//! How often a method names each value, and whether an instruction writes it: counted
//! once, in the kernels' scratch memory, when a rule first asks, and kept in step with
//! the calls rules replace.

use core::ptr::NonNull;

use super::{Instruction, Rewriter};
use crate::program::Vector;
use crate::value::NONE_INDEX;
use et_schema::fields as fb;

/// How often each value is named, and whether an instruction writes it: counted in the
/// kernels' scratch memory when a rule first asks.
#[derive(Clone, Copy)]
pub(super) enum Counts {
    NotCounted,
    Counted(NonNull<u16>),
    Unavailable,
}

/// The bit of a count that marks a value some instruction can write.
const WRITTEN: u16 = 1 << 15;
/// The bits of a count that count; all set: saturated, it no longer says how many.
const COUNT: u16 = WRITTEN - 1;

impl Rewriter<'_> {
    /// How many times the method names value `v`: in instruction operands (a call that
    /// runs nothing still names its arguments), as a tensor-list item, as an input or an
    /// output. Saturates; `usize::MAX` when it cannot be counted (no scratch memory).
    pub fn uses(&self, v: u32) -> usize {
        match self.count(v) {
            Some(c) if c & COUNT != COUNT => usize::from(c & COUNT),
            _ => usize::MAX,
        }
    }

    /// Whether some instruction can write value `v`: as a kernel's return slot (an
    /// argument after its declared parameters, which prim ops write), as a delegate's
    /// argument, or as a MoveCall's destination. True when it cannot be told.
    pub fn written(&self, v: u32) -> bool {
        self.count(v).is_none_or(|c| c & WRITTEN != 0)
    }

    fn count(&self, v: u32) -> Option<u16> {
        let counts = self.counted()?;
        if v as usize >= self.num_values {
            return None;
        }
        // SAFETY: `counts` holds `num_values` counts (see `counted`); `v` is in range.
        Some(unsafe { *counts.as_ptr().add(v as usize) })
    }

    /// Where the counts are (`num_values` of them, in scratch memory), counted now if
    /// they were not yet.
    fn counted(&self) -> Option<NonNull<u16>> {
        match self.counts.get() {
            Counts::Counted(ptr) => Some(ptr),
            Counts::Unavailable => None,
            Counts::NotCounted => {
                let counted = self.count_uses();
                if counted.is_none() {
                    self.counts.set(Counts::Unavailable);
                }
                counted
            }
        }
    }

    #[inline(never)]
    fn count_uses(&self) -> Option<NonNull<u16>> {
        let counts = self.scratch.alloc_slice::<u16>(self.num_values, 0).ok()?;
        let name = |counts: &mut [u16], v: u32| {
            if let Some(c) = counts.get_mut(v as usize) {
                if *c & COUNT != COUNT {
                    *c += 1;
                }
            }
        };
        let write = |counts: &mut [u16], v: u32| {
            if let Some(c) = counts.get_mut(v as usize) {
                *c |= WRITTEN;
            }
        };
        for instr in self.instructions() {
            match instr {
                Instruction::Call(call) => {
                    call.args().iter().for_each(|&a| name(counts, a));
                    call.returns().iter().for_each(|&a| write(counts, a));
                }
                Instruction::Delegate { args } => {
                    for &a in args {
                        name(counts, a);
                        write(counts, a);
                    }
                }
                Instruction::Move { from, to } => {
                    name(counts, from);
                    name(counts, to);
                    write(counts, to);
                }
                Instruction::JumpFalse { cond, .. } => name(counts, cond),
                Instruction::Free { value } => name(counts, value),
            }
        }
        for items in self.tensor_lists() {
            items.iter().for_each(|&i| name(counts, i));
        }
        for vt in [fb::ExecutionPlan::VT_INPUTS, fb::ExecutionPlan::VT_OUTPUTS] {
            let list = self.meta.list(vt).unwrap_or(Vector::EMPTY);
            for k in 0..list.len() {
                name(counts, u32::try_from(list.i32(k)).unwrap_or(NONE_INDEX));
            }
        }
        let ptr = NonNull::from(counts).cast::<u16>();
        self.counts.set(Counts::Counted(ptr));
        Some(ptr)
    }

    /// Keeps the counts in step with a call whose arguments `old` become `new`, if they
    /// are counted. An argument kept at its position keeps its count (a fused call usually
    /// keeps the leading arguments of the call it replaces). A saturated count stays
    /// saturated: it no longer says how many.
    pub(super) fn recount(&self, old: &[u32], new: &[u32]) {
        let Counts::Counted(counts) = self.counts.get() else {
            return;
        };
        // SAFETY: `counts` holds `num_values` counts in scratch memory the rewriter alone
        // uses, and no other reference to them is alive (none leaves this type).
        let counts = unsafe { core::slice::from_raw_parts_mut(counts.as_ptr(), self.num_values) };
        let kept = old.iter().zip(new).take_while(|(a, b)| a == b).count();
        for &a in &old[kept..] {
            if let Some(c) = counts.get_mut(a as usize) {
                if *c & COUNT != COUNT && *c & COUNT != 0 {
                    *c -= 1;
                }
            }
        }
        for &a in &new[kept..] {
            if let Some(c) = counts.get_mut(a as usize) {
                if *c & COUNT != COUNT {
                    *c += 1;
                }
            }
        }
    }
}
