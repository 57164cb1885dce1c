//! How much method memory a method needs, from the program alone (before loading).

use super::delegates::Delegate;
use super::instructions::Instr;
use crate::backend::find_backend;
use crate::error::Error;
use crate::program::Program;
use crate::program::{tag, value_at, MethodMeta, TensorInfo, Vector};
use crate::tensor::Tensor;
use crate::value::Value;
use et_schema::fields as fb;

/// Bytes of method memory the method of `meta` needs, estimated from its tables (an
/// upper bound for the value table, tensor metadata, lists and instructions, plus slack
/// for alignment). Sizes the method buffer passed to
/// [`MemoryManager`](crate::MemoryManager).
pub fn method_allocator_estimate(meta: &MethodMeta<'_>) -> usize {
    type P<'x> = fb::ExecutionPlan<'x>;
    let plan = meta.plan();
    let len = |v: Option<Vector<'_>>| v.map_or(0, |v| v.len());
    let mut bytes = 256usize;
    let values = plan.vector(P::VT_VALUES).unwrap_or(Vector::EMPTY);
    for i in 0..values.len() {
        bytes += core::mem::size_of::<Value>();
        let Some((kind, Some(t))) = value_at(values, i as i64) else {
            continue;
        };
        // (Lists only: other tables have no items field.)
        let items = || len(t.vector(fb::IntList::VT_ITEMS));
        bytes = bytes.saturating_add(match kind {
            tag::TENSOR => {
                type T<'x> = fb::Tensor<'x>;
                // Three fields: the vtable is found once.
                let f = t.fields();
                let rank = len(f.vector(T::VT_SIZES));
                let unplanned = f.table(T::VT_ALLOCATION_INFO).is_none()
                    && f.uint(T::VT_DATA_BUFFER_IDX, 4) == 0;
                let data = if unplanned {
                    TensorInfo::read(t).map_or(0, |i| i.nbytes().saturating_add(16))
                } else {
                    0
                };
                (core::mem::size_of::<Tensor>() + rank * 17 + 24).saturating_add(data)
            }
            tag::INT_LIST | tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST => items() * 12 + 40,
            tag::DOUBLE_LIST => items() * 8 + 8,
            tag::BOOL_LIST => items() + 8,
            _ => 0,
        });
    }
    let chains = plan.vector(P::VT_CHAINS).unwrap_or(Vector::EMPTY);
    for c in 0..chains.len() {
        bytes += 16;
        let instrs = chains
            .table(c)
            .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
            .unwrap_or(Vector::EMPTY);
        for i in 0..instrs.len() {
            bytes += core::mem::size_of::<Instr>();
            type I<'x> = fb::Instruction<'x>;
            let nargs = match instrs
                .table(i)
                .map(|i| i.fields().union(I::VT_INSTR_ARGS_TYPE, I::VT_INSTR_ARGS))
            {
                // Both calls keep their arguments at the same field.
                Some((tag::KERNEL_CALL | tag::DELEGATE_CALL, Some(call))) => {
                    len(call.vector(fb::KernelCall::VT_ARGS))
                }
                _ => 0,
            };
            bytes += nargs * 4 + 8;
            // Room for the argument lists the registered rewrite rules may write in place
            // of this call's.
            #[cfg(feature = "rewrite")]
            {
                bytes += super::rewrite::reserved_for_call(nargs);
            }
        }
    }
    bytes += meta.num_operators() * 16;
    bytes += (meta.num_inputs() + meta.num_outputs()) * 5 + 64;
    bytes += meta.num_planned_buffers() * 16 + 16;
    bytes += len(plan.vector(P::VT_DELEGATES)) * (core::mem::size_of::<Delegate>() + 256);
    bytes
}

impl Program<'_> {
    /// Bytes of method memory loading method `name` needs: the tables' estimate
    /// ([`method_allocator_estimate`]) plus what each delegate's backend says its `init`
    /// takes ([`Backend::method_memory`](crate::backend::Backend::method_memory)). Fails
    /// when the method does not exist or a delegate's payload cannot be read; a delegate
    /// whose backend is not registered adds nothing (loading it fails anyway).
    pub fn method_memory_estimate(&self, name: &str) -> Result<usize, Error> {
        let mut bytes = method_allocator_estimate(&self.method_meta(name)?);
        for delegate in self.delegates(name)? {
            let delegate = delegate?;
            if let Some(b) = find_backend(delegate.backend_id) {
                bytes = bytes.saturating_add(b.backend.method_memory(delegate.payload));
            }
        }
        Ok(bytes)
    }
}
