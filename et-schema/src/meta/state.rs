//! Whether a method keeps state between executes: mutable buffers (a KV cache, running
//! statistics) are planned tensors initialized from the program's mutable data (or a
//! data file) at load, and whatever `execute` writes into them is still there at the
//! next `execute`.

use super::external_data_name;
use super::{tag, value_at, MethodMeta};
use crate::fields as fb;
use crate::reader::Vector;

type Plan<'x> = fb::ExecutionPlan<'x>;

impl MethodMeta<'_> {
    /// How many of the method's tensors are mutable buffers: planned (writable) and
    /// initialized from the program's mutable data segment or a data file. A method with
    /// any keeps state from one `execute` to the next, so the same inputs may give
    /// different outputs (that is what a KV cache is for). Malformed tensors are not
    /// counted (loading reports them).
    pub fn num_mutable_buffers(&self) -> usize {
        let values = self.list(Plan::VT_VALUES).unwrap_or(Vector::EMPTY);
        (0..values.len())
            .filter(|&i| {
                let Some((tag::TENSOR, Some(t))) = value_at(values, i as i64) else {
                    return false;
                };
                let planned = t.table(fb::Tensor::VT_ALLOCATION_INFO).is_some();
                let initialized = t.fields().uint(fb::Tensor::VT_DATA_BUFFER_IDX, 4) != 0
                    || matches!(external_data_name(t.fields()), Ok(Some(_)));
                planned && initialized
            })
            .count()
    }
}
