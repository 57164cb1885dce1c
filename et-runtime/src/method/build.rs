//! What the build steps share: the program, the method's metadata, the memory it is
//! built in, the value table once it exists, and where a failing check records what it
//! knows. Each step adds its own `impl Builder` in the module named after what it builds.

use core::cell::Cell;
use core::ptr::NonNull;

use crate::data::NamedDataMap;
use crate::memory::Arena;
use crate::method_error::LoadDetail;
use crate::program::{MethodMeta, OperatorName, Program};
use crate::value::Value;
use et_schema::fields as fb;

pub(super) type Plan<'x> = fb::ExecutionPlan<'x>;

/// What the parts of a method are built from, and the value table once it exists.
pub(super) struct Builder<'a, 'c> {
    pub(super) program: &'a Program<'a>,
    pub(super) meta: MethodMeta<'a>,
    /// The program's named data and data files: external tensors and backends read it.
    pub(super) named: &'a NamedDataMap<'a>,
    pub(super) arena: &'a Arena<'a>,
    /// (data, length) of each planned buffer.
    pub(super) planned: &'a [(*mut u8, usize)],
    /// The value table, once built: `num_values` initialized entries.
    pub(super) values: NonNull<Value>,
    pub(super) num_values: usize,
    /// Where a failing check records what it knows beyond the error code.
    pub(super) detail: &'c Cell<LoadDetail<'a>>,
}

impl<'a> Builder<'a, '_> {
    /// Operator `op` for messages (without the feature `messages` nothing reads it, and
    /// it is not looked up).
    #[cold]
    pub(super) fn operator(&self, op: usize) -> OperatorName<'a> {
        let unknown = OperatorName {
            name: "?",
            overload: "",
        };
        if !cfg!(feature = "messages") {
            return unknown;
        }
        self.meta.operator(op).unwrap_or(unknown)
    }
}
