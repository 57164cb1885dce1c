//! What the load-time rewrites (`views`, `fusion`) ask of a built method: its values,
//! whether a value escapes the instructions (a method input or output, a tensor-list
//! item), which instructions name it, and whether a call is served by etch's own kernel.

use core::ptr::NonNull;

use super::build::{Builder, Plan};
use super::instructions::Instr;
use crate::error::KernelResult;
use crate::kernel::{KernelArgs, KernelContext, KernelEntry, KernelFn, Namespace};
use crate::program::Vector;
use crate::tensor::Tensor;
use crate::value::{Value, NONE_INDEX};

/// A KernelCall's operator index, function, arguments and declared parameter count.
#[derive(Clone, Copy)]
pub(super) struct Call<'i> {
    pub(super) op: u32,
    pub(super) function: KernelFn,
    pub(super) args: &'i [u32],
    pub(super) params: usize,
}

impl<'i> Call<'i> {
    /// The call `instr` is, if it is a KernelCall.
    pub(super) fn of(instr: &'i Instr) -> Option<Call<'i>> {
        let Instr::Kernel {
            function,
            args,
            len,
            params,
            op,
            ..
        } = *instr
        else {
            return None;
        };
        Some(Call {
            op,
            function,
            // SAFETY: a decoded KernelCall's `args` holds `len` range-checked value
            // indices in method memory, which outlives every instruction borrow.
            args: unsafe { args_of(args, len) },
            params: params as usize,
        })
    }

    /// The arguments after the declared parameters: return slots, which prim ops write.
    pub(super) fn returns(&self) -> &'i [u32] {
        self.args.get(self.params..).unwrap_or_default()
    }
}

/// The `len` value indices at `args`.
///
/// # Safety
/// `args` must hold `len` initialized indices that live, unchanged, for `'x`.
pub(super) unsafe fn args_of<'x>(args: NonNull<u32>, len: u32) -> &'x [u32] {
    // SAFETY: the caller's promise.
    unsafe { core::slice::from_raw_parts(args.as_ptr(), len as usize) }
}

impl Builder<'_, '_> {
    /// Value `i` of the table.
    pub(super) fn value(&self, i: u32) -> Value {
        debug_assert!((i as usize) < self.num_values);
        // SAFETY: callers pass range-checked value indices; the table is fully built and
        // its entries are plain copies.
        unsafe { *self.values.as_ptr().add(i as usize) }
    }

    /// The tensor of value `i`, if it is one.
    pub(super) fn tensor(&self, i: u32) -> Option<&Tensor> {
        match self.value(i) {
            // SAFETY: tensors live in method memory; nothing mutates them while this
            // shared borrow lives (the caller only reads).
            Value::Tensor(t) => Some(unsafe { t.as_ref() }),
            _ => None,
        }
    }

    /// Whether value `i` is one of the method's inputs or outputs.
    pub(super) fn is_io(&self, i: u32) -> bool {
        [Plan::VT_INPUTS, Plan::VT_OUTPUTS].into_iter().any(|vt| {
            let list = self.meta.list(vt).unwrap_or(Vector::EMPTY);
            (0..list.len()).any(|k| list.i32(k) == i64::from(i))
        })
    }

    /// Whether value `i` is an item of a tensor list or optional-tensor list.
    pub(super) fn in_a_tensor_list(&self, i: u32) -> bool {
        debug_assert!(i != NONE_INDEX);
        (0..self.num_values as u32).any(|v| self.list_items(v).contains(&i))
    }

    /// The items of value `v` (value indices, or `NONE_INDEX`), if it is a tensor list or
    /// optional-tensor list; none otherwise.
    pub(super) fn list_items(&self, v: u32) -> &[u32] {
        match self.value(v) {
            Value::TensorList(l) | Value::OptionalTensorList(l) => {
                // SAFETY: list headers live in method memory for the method's lifetime;
                // `indices` holds `len` range-checked entries.
                unsafe {
                    let l = l.as_ref();
                    core::slice::from_raw_parts(l.indices.as_ptr(), l.len)
                }
            }
            _ => &[],
        }
    }
}

/// Whether `e` is et-ops' entry of `aten::<rest>`: the kernels a rewrite knows the
/// behaviour of (a downstream crate's kernel of the same operator is never rewritten).
pub(super) fn is_et_ops_aten(e: &KernelEntry, rest: &str) -> bool {
    let name = e.name();
    // The cheap comparisons first: callers scan every registered kernel.
    name.namespace() == Namespace::ATEN && name.rest() == rest && e.signature.crate_name == "et-ops"
}

/// The kernel of a call a load-time rewrite made pointless (a permute become a view of
/// its constant, a batch norm or activation absorbed into a fused call): it runs nothing.
/// The call stays, so instruction indices keep their meaning and traces list it.
pub(super) fn runs_nothing(_: &KernelContext<'_>, _: &KernelArgs<'_>) -> KernelResult {
    Ok(())
}

/// The et-ops entry of `aten::<rest>` (one of `rests`) whose function is `function`, if
/// any. Compared by address: an entry of another crate that shares the address runs the
/// very same code; a copy at another address is only missed (the rewrite then does not
/// apply).
pub(super) fn et_ops_aten(function: KernelFn, rests: &[&str]) -> Option<&'static KernelEntry> {
    crate::registry::kernels().iter().find(|e| {
        core::ptr::fn_addr_eq(e.function, function) && rests.iter().any(|r| is_et_ops_aten(e, r))
    })
}
