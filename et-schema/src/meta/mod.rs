//! Method metadata read straight from the flatbuffer: inputs, outputs, planned memory,
//! operators and kernel calls, without loading anything.

use core::fmt;

use crate::error::Error;
use crate::fields as fb;
use crate::op_name::OperatorName;
use crate::reader::{Table, VOffsetT, Vector};

mod external;
mod input_reuse;
mod kernel_key;
pub mod key_text;
mod state;
mod tags;
mod tensor;

pub use external::{external_data_name, ExternalTensor};
pub use kernel_key::{KernelCallInfo, KernelKey};
pub use tags::{tag, value_at, Tag};
pub use tensor::{ShapeDynamism, TensorInfo, TensorShape, MAX_DIM};

/// Metadata of one method, read from the program without loading it.
#[derive(Clone, Copy)]
pub struct MethodMeta<'d> {
    /// The method's `ExecutionPlan` table.
    plan: Table<'d>,
    name: &'d str,
}

impl fmt::Debug for MethodMeta<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodMeta")
            .field("name", &self.name)
            .field("inputs", &self.num_inputs())
            .field("outputs", &self.num_outputs())
            .finish()
    }
}

impl<'d> MethodMeta<'d> {
    /// The metadata of the method whose `ExecutionPlan` table is `plan`, named `name`.
    /// Fails when the plan lacks the vectors every method has.
    pub fn new(plan: Table<'d>, name: &'d str) -> Result<MethodMeta<'d>, Error> {
        type P<'x> = fb::ExecutionPlan<'x>;
        for vt in [P::VT_NON_CONST_BUFFER_SIZES, P::VT_INPUTS, P::VT_OUTPUTS] {
            if plan.vector(vt).is_none() {
                return Err(Error::InvalidProgram);
            }
        }
        Ok(MethodMeta { plan, name })
    }

    /// The method's `ExecutionPlan` table.
    pub fn plan(&self) -> Table<'d> {
        self.plan
    }
}

type Plan<'x> = fb::ExecutionPlan<'x>;

impl<'d> MethodMeta<'d> {
    /// The method's name.
    pub fn name(&self) -> &'d str {
        self.name
    }

    /// A vector field of the plan (`fields::ExecutionPlan::VT_*`).
    pub fn list(&self, vt: VOffsetT) -> Option<Vector<'d>> {
        self.plan.vector(vt)
    }

    fn len_of(&self, vt: VOffsetT) -> usize {
        self.list(vt).map_or(0, |v| v.len())
    }

    /// Number of inputs.
    pub fn num_inputs(&self) -> usize {
        self.len_of(Plan::VT_INPUTS)
    }

    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.len_of(Plan::VT_OUTPUTS)
    }

    fn value_tag(&self, index: i64) -> Result<Tag, Error> {
        let (tag, _) = self.value(index)?;
        // KernelTypes are numbered Null = 1 .. OptionalTensorList = 11.
        const TAGS: [Tag; 11] = [
            Tag::None,
            Tag::Int,
            Tag::Bool,
            Tag::Double,
            Tag::Tensor,
            Tag::String,
            Tag::ListInt,
            Tag::ListDouble,
            Tag::ListBool,
            Tag::ListTensor,
            Tag::ListOptionalTensor,
        ];
        TAGS.get(usize::from(tag).wrapping_sub(1))
            .copied()
            .ok_or(Error::InvalidProgram)
    }

    /// Value `index` of the value table: its `KernelTypes` tag and member table.
    fn value(&self, index: i64) -> Result<(u8, Option<Table<'d>>), Error> {
        let values = self.list(Plan::VT_VALUES).ok_or(Error::InvalidProgram)?;
        value_at(values, index).ok_or(Error::InvalidProgram)
    }

    fn io_index(&self, vt: VOffsetT, i: usize) -> Result<i64, Error> {
        let list = self.list(vt).ok_or(Error::InvalidProgram)?;
        if i >= list.len() {
            return Err(Error::InvalidArgument);
        }
        Ok(list.i32(i))
    }

    /// The kind of input `i`.
    pub fn input_tag(&self, i: usize) -> Result<Tag, Error> {
        self.value_tag(self.io_index(Plan::VT_INPUTS, i)?)
    }

    /// The kind of output `i`.
    pub fn output_tag(&self, i: usize) -> Result<Tag, Error> {
        self.value_tag(self.io_index(Plan::VT_OUTPUTS, i)?)
    }

    /// Shape and dtype of tensor input `i` (`InvalidArgument` if it is not a tensor).
    pub fn input_tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        self.tensor_info(self.io_index(Plan::VT_INPUTS, i)?)
    }

    /// Shape and dtype of tensor output `i`.
    pub fn output_tensor(&self, i: usize) -> Result<TensorInfo, Error> {
        self.tensor_info(self.io_index(Plan::VT_OUTPUTS, i)?)
    }

    /// Whether tensor input `i` lives in memory-planned buffers (ExecuTorch's
    /// `TensorInfo::is_memory_planned`); `InvalidArgument` if it is not a tensor.
    pub fn input_memory_planned(&self, i: usize) -> Result<bool, Error> {
        self.memory_planned(self.io_index(Plan::VT_INPUTS, i)?)
    }

    /// Whether tensor output `i` lives in memory-planned buffers.
    pub fn output_memory_planned(&self, i: usize) -> Result<bool, Error> {
        self.memory_planned(self.io_index(Plan::VT_OUTPUTS, i)?)
    }

    fn memory_planned(&self, index: i64) -> Result<bool, Error> {
        match self.value(index)? {
            (tag::TENSOR, Some(t)) => Ok(t.table(fb::Tensor::VT_ALLOCATION_INFO).is_some()),
            _ => Err(Error::InvalidArgument),
        }
    }

    fn tensor_info(&self, index: i64) -> Result<TensorInfo, Error> {
        match self.value(index)? {
            (tag::TENSOR, Some(t)) => TensorInfo::read(t),
            _ => Err(Error::InvalidArgument),
        }
    }

    /// Number of memory-planned buffers the caller must provide.
    pub fn num_planned_buffers(&self) -> usize {
        self.len_of(Plan::VT_NON_CONST_BUFFER_SIZES)
            .saturating_sub(1)
    }

    /// Size in bytes of planned buffer `i`.
    pub fn planned_buffer_size(&self, i: usize) -> Result<usize, Error> {
        let sizes = self
            .list(Plan::VT_NON_CONST_BUFFER_SIZES)
            .ok_or(Error::InvalidProgram)?;
        let i = i.checked_add(1).filter(|&i| i < sizes.len());
        let size = sizes.uint(i.ok_or(Error::InvalidArgument)?, 8) as i64;
        usize::try_from(size).map_err(|_| Error::InvalidProgram)
    }

    /// Number of values in the method's value table.
    pub fn num_values(&self) -> usize {
        self.len_of(Plan::VT_VALUES)
    }

    /// Number of instructions over all chains.
    pub fn num_instructions(&self) -> usize {
        let mut n = 0usize;
        if let Some(chains) = self.list(Plan::VT_CHAINS) {
            for c in 0..chains.len() {
                n += chains
                    .table(c)
                    .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
                    .map_or(0, |i| i.len());
            }
        }
        n
    }

    /// Every instruction slot of every chain, in order (the index is the instruction
    /// number, chains concatenated); `None` where the slot holds no readable table.
    pub(crate) fn instructions(&self) -> impl Iterator<Item = Option<Table<'d>>> + '_ {
        let chains = self.list(Plan::VT_CHAINS).unwrap_or(Vector::EMPTY);
        (0..chains.len()).flat_map(move |c| {
            let list = chains
                .table(c)
                .and_then(|c| c.vector(fb::Chain::VT_INSTRUCTIONS))
                .unwrap_or(Vector::EMPTY);
            (0..list.len()).map(move |i| list.table(i))
        })
    }

    /// Number of operators in the method's operator table.
    pub fn num_operators(&self) -> usize {
        self.len_of(Plan::VT_OPERATORS)
    }

    /// Operator `i` of the method's operator table.
    pub fn operator(&self, i: usize) -> Result<OperatorName<'d>, Error> {
        let op = self
            .list(Plan::VT_OPERATORS)
            .and_then(|o| o.table(i))
            .ok_or(Error::InvalidProgram)?;
        Ok(OperatorName {
            name: op
                .string(fb::Operator::VT_NAME)
                .ok_or(Error::InvalidProgram)?,
            overload: op.string(fb::Operator::VT_OVERLOAD).unwrap_or(""),
        })
    }

    /// Backend ids of the method's delegates.
    pub fn delegates(&self) -> impl Iterator<Item = &'d str> {
        let list = self.list(Plan::VT_DELEGATES);
        (0..list.map_or(0, |l| l.len())).map(move |i| {
            list.and_then(|l| l.table(i))
                .and_then(|d| d.string(fb::BackendDelegate::VT_ID))
                .unwrap_or("")
        })
    }
}
