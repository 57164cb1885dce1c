//! Whether `execute` leaves an input's bytes intact: ExecuTorch's memory planner treats
//! inputs like any other planned tensor, so their bytes are free for intermediates once
//! the last reader has run.

use super::MAX_DIM;
use super::{tag, value_at, MethodMeta, Table, TensorShape};
use crate::error::Error;
use crate::fields as fb;

type Plan<'x> = fb::ExecutionPlan<'x>;

/// A planned tensor's place: memory id and byte range at its upper-bound sizes.
#[derive(Clone, Copy, PartialEq, Eq)]
struct PlannedRange {
    buffer: u64,
    start: u64,
    end: u64,
}

impl PlannedRange {
    fn of(t: Table<'_>) -> Result<Option<PlannedRange>, Error> {
        type A<'x> = fb::AllocationDetails<'x>;
        let Some(ai) = t.table(fb::Tensor::VT_ALLOCATION_INFO) else {
            return Ok(None);
        };
        let shape = TensorShape::read(t.fields())?;
        let (mut sizes, mut order) = ([0usize; MAX_DIM], [0u8; MAX_DIM]);
        let rank = shape.rank();
        let nbytes = shape.fill(&mut sizes[..rank], &mut order[..rank])? as u64;
        let start =
            ai.uint(A::VT_MEMORY_OFFSET_LOW, 4) | ai.uint(A::VT_MEMORY_OFFSET_HIGH, 4) << 32;
        Ok(Some(PlannedRange {
            buffer: ai.uint(A::VT_MEMORY_ID, 4),
            start,
            end: start.checked_add(nbytes).ok_or(Error::InvalidProgram)?,
        }))
    }

    fn overlaps(&self, other: &PlannedRange) -> bool {
        self.buffer == other.buffer
            && self.start < self.end
            && other.start < other.end
            && self.start < other.end
            && other.start < self.end
    }
}

impl MethodMeta<'_> {
    /// Whether et-runtime's `Method::execute` leaves input `i` as it was set,
    /// so a caller may execute again without setting it.
    ///
    /// `false` when the memory plan places any other tensor in bytes the input occupies
    /// (the planner reuses an input's bytes once its last reader has run, which is common:
    /// most real models reuse them), or when an instruction writes the input itself (a
    /// MoveCall into it, or a kernel call that passes it last, the out position, as
    /// ExecuTorch exports an in-place input mutation). Non-tensor inputs and inputs
    /// outside the plan are never overwritten by the plan. Delegates write only their
    /// outputs. When this is `false`, set the input again before every `execute`.
    pub fn input_is_preserved(&self, i: usize) -> Result<bool, Error> {
        let index = self.io_index(Plan::VT_INPUTS, i)?;
        let (kind, table) = self.value(index)?;
        let Some(input) = table.filter(|_| kind == tag::TENSOR) else {
            return Ok(true);
        };
        if let Some(range) = PlannedRange::of(input)? {
            let values = self.list(Plan::VT_VALUES).ok_or(Error::InvalidProgram)?;
            for v in 0..values.len() {
                if v as i64 == index {
                    continue;
                }
                if let Some((tag::TENSOR, Some(t))) = value_at(values, v as i64) {
                    if PlannedRange::of(t)?.is_some_and(|r| r.overlaps(&range)) {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(!self
            .instructions()
            .flatten()
            .any(|instr| writes_value(instr, index)))
    }
}

/// Whether `instr` is a MoveCall into `value` or a KernelCall passing it as its last
/// (out) argument.
fn writes_value(instr: Table<'_>, value: i64) -> bool {
    type I<'x> = fb::Instruction<'x>;
    match instr.union(I::VT_INSTR_ARGS_TYPE, I::VT_INSTR_ARGS) {
        (tag::MOVE_CALL, Some(m)) => m.int(fb::MoveCall::VT_MOVE_TO, 4) == value,
        (tag::KERNEL_CALL, Some(k)) => k
            .vector(fb::KernelCall::VT_ARGS)
            .and_then(|a| a.len().checked_sub(1).map(|last| a.i32(last)))
            .is_some_and(|last| last == value),
        _ => false,
    }
}
