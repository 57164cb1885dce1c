//! Kernel calls and ExecuTorch's kernel keys (`v1/6;0,1|6;0,1`).

use core::fmt;

use super::{tag, value_at, MethodMeta, TensorInfo};
use crate::error::Error;
use crate::fields as fb;
use crate::op_name::OperatorName;
use crate::reader::{Table, Vector};
use crate::scalar_type::{DtypeSet, ScalarType};

type Plan<'x> = fb::ExecutionPlan<'x>;

/// ExecuTorch's kernel key of a call: `(dtype, dim order)` of each tensor argument,
/// printed as `v1/6;0,1|6;0,1`. A view over the call's arguments (a few words), computed
/// on demand; the tensors it reads were validated when the call info was made.
#[derive(Clone, Copy)]
pub struct KernelKey<'d> {
    /// The plan's value table.
    values: Vector<'d>,
    /// The call's argument value indices.
    args: Vector<'d>,
    /// Count a tensor list by its first tensor, as `gen_oplist` does.
    lists: bool,
}

impl<'d> KernelKey<'d> {
    /// The tensor at value `index`, if it is one.
    fn tensor(&self, index: i64) -> Option<Table<'d>> {
        match value_at(self.values, index)? {
            (tag::TENSOR, t) => t,
            _ => None,
        }
    }

    /// The tensors the key is made of, in argument order.
    fn tensors(&self) -> impl Iterator<Item = Table<'d>> + '_ {
        (0..self.args.len()).filter_map(move |k| {
            let (kind, t) = value_at(self.values, self.args.i32(k))?;
            let t = t?;
            match kind {
                tag::TENSOR => Some(t),
                tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST if self.lists => {
                    let items = t.vector(fb::IntList::VT_ITEMS)?;
                    (0..items.len()).find_map(|i| self.tensor(items.i32(i)))
                }
                _ => None,
            }
        })
    }

    /// The dtypes of the key's tensors, in order.
    pub fn dtypes(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.tensors()
            .filter_map(|t| ScalarType::from_i8(scalar_type(t)))
    }

    /// Number of tensor entries.
    pub fn len(&self) -> usize {
        self.tensors().count()
    }

    /// True when the call has no tensor arguments.
    pub fn is_empty(&self) -> bool {
        self.tensors().next().is_none()
    }

    /// The set of dtypes the entries use.
    pub fn dtype_mask(&self) -> DtypeSet {
        self.dtypes().fold(DtypeSet::EMPTY, |m, t| m.with(t))
    }

    /// The dtype all entries share, if any: the key etch's registry matches on.
    pub fn common_dtype(&self) -> Option<ScalarType> {
        let mut dtypes = self.dtypes();
        let first = dtypes.next()?;
        dtypes.all(|t| t == first).then_some(first)
    }
}

/// A `Tensor` table's raw `scalar_type`.
pub(crate) fn scalar_type(t: Table<'_>) -> i8 {
    t.uint(fb::Tensor::VT_SCALAR_TYPE, 1) as u8 as i8
}

impl fmt::Display for KernelKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // gen_oplist appends `dtype;dim_order|` per tensor to `v1/` and drops the last
        // character, so its key for a call without tensors is `v1`; the runtime's is empty.
        if self.lists && self.tensors().next().is_none() {
            return f.write_str("v1");
        }
        for (i, t) in self.tensors().enumerate() {
            let order = t.vector(fb::Tensor::VT_DIM_ORDER).unwrap_or(Vector::EMPTY);
            let dims = (0..order.len()).map(|k| order.uint(k, 1));
            super::key_text::write_entry(f, 1, i, scalar_type(t) as u8, dims)?;
        }
        Ok(())
    }
}

impl fmt::Debug for KernelKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KernelKey({self})")
    }
}

/// One KernelCall of a method, with the runtime's kernel key.
#[derive(Clone, Copy, Debug)]
pub struct KernelCallInfo<'d> {
    /// Position in the method's instruction list (chains concatenated).
    pub instruction: usize,
    /// Index into the method's operator table.
    pub op_index: usize,
    /// The operator.
    pub operator: OperatorName<'d>,
    /// Tensor dtypes and dim orders of the arguments as exported: the runtime's key
    /// (tensor arguments only).
    pub key: KernelKey<'d>,
    /// The key ExecuTorch's selective-build tooling (`gen_oplist`) writes for this call:
    /// like `key`, but a tensor list contributes its first (non-null) element, and a call
    /// without tensors prints as `v1`.
    pub selection_key: KernelKey<'d>,
    /// Number of argument values (schema arguments plus the return slot).
    pub num_args: usize,
}

impl<'d> MethodMeta<'d> {
    /// Every KernelCall with its operator and runtime kernel key, in instruction order.
    /// Malformed calls yield an error item.
    pub fn kernel_calls(&self) -> impl Iterator<Item = Result<KernelCallInfo<'d>, Error>> + '_ {
        self.instructions()
            .enumerate()
            .filter_map(move |(n, instr)| {
                type I<'x> = fb::Instruction<'x>;
                match instr?.union(I::VT_INSTR_ARGS_TYPE, I::VT_INSTR_ARGS) {
                    (tag::KERNEL_CALL, Some(call)) => Some(self.kernel_call_info(n, call)),
                    _ => None,
                }
            })
    }

    /// The call info of the KernelCall table `call`, instruction `instruction` of the
    /// method: its operator and kernel keys, with every tensor the keys read validated.
    pub fn kernel_call_info(
        &self,
        instruction: usize,
        call: Table<'d>,
    ) -> Result<KernelCallInfo<'d>, Error> {
        let op_index = usize::try_from(call.int(fb::KernelCall::VT_OP_INDEX, 4))
            .map_err(|_| Error::InvalidProgram)?;
        let operator = self.operator(op_index)?;
        let args = call
            .vector(fb::KernelCall::VT_ARGS)
            .ok_or(Error::InvalidProgram)?;
        let values = self.list(Plan::VT_VALUES).ok_or(Error::InvalidProgram)?;
        // Validate every tensor the keys may read, so the keys' views never meet a
        // malformed tensor.
        for a in 0..args.len() {
            let (kind, t) = self.value(args.i32(a))?;
            let Some(t) = t else { continue };
            match kind {
                tag::TENSOR => {
                    TensorInfo::read(t)?;
                }
                tag::TENSOR_LIST | tag::OPTIONAL_TENSOR_LIST => {
                    let items = t.vector(fb::IntList::VT_ITEMS).unwrap_or(Vector::EMPTY);
                    for i in 0..items.len() {
                        if let Ok((tag::TENSOR, Some(t))) = self.value(items.i32(i)) {
                            TensorInfo::read(t)?;
                        }
                    }
                }
                _ => {}
            }
        }
        let key = KernelKey {
            values,
            args,
            lists: false,
        };
        let selection_key = KernelKey {
            values,
            args,
            lists: true,
        };
        Ok(KernelCallInfo {
            instruction,
            op_index,
            operator,
            key,
            selection_key,
            num_args: args.len(),
        })
    }
}
