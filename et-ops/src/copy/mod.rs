//! copy operators.

pub mod alias_copy;
pub mod as_strided_copy;
pub mod cat;
pub mod clone;
pub mod clone_dim_order;
pub mod constant_pad_nd;
pub mod copy_functional;
pub mod copy_inplace;
pub mod d2h_copy;
pub mod detach_copy;
pub mod h2d_copy;
pub mod lift_fresh_copy;
pub mod narrow_copy;
pub mod select_copy;
pub mod slice_copy;
pub mod split_copy;
pub mod split_with_sizes_copy;
pub mod stack;
pub mod to_copy;
pub mod to_dim_order_copy;
pub mod unbind_copy;

use et_runtime::{
    et_switch, DtypeSelection, KernelError, KernelResult, Tensor, TensorListMut, MAX_DIM,
};

use crate::util::convert::{loader, storer};
use crate::util::layout::{istrides, Walk};

/// Writes `src`, broadcast to `dst`'s sizes and converted to `dst`'s dtype (C++ casts,
/// as PyTorch's `copy_`), into `dst`: the body of `copy` and `copy_`.
pub(crate) fn broadcast_copy<Sel: DtypeSelection>(dst: &mut Tensor, src: &Tensor) -> KernelResult {
    let n = dst.dim();
    if src.dim() > n {
        return Err(KernelError::invalid(
            "copy source has more dims than the target",
        ));
    }
    // The source's strides over the target's dims: a missing or size-1 dim repeats.
    let lead = n - src.dim();
    let ss = istrides(src)?;
    let mut strides = [0isize; MAX_DIM];
    for (d, stride) in strides.iter_mut().enumerate().take(n).skip(lead) {
        let size = src.size(d - lead);
        if size == dst.size(d) && size != 1 {
            *stride = ss[d - lead];
        } else if size != 1 {
            return Err(KernelError::invalid(
                "copy source does not broadcast to the target",
            ));
        }
    }
    let ds = istrides(dst)?;
    let walk = Walk::copy(dst.sizes(), &ds[..n], &strides[..n])?;
    let src_bytes = src.bytes()?;
    if src.dtype() == dst.dtype() {
        let elem = dst.dtype().element_size();
        return walk.move_bytes(elem, dst.bytes_mut()?, 0, src_bytes, 0);
    }
    let from = et_switch!(Sel, src.dtype(), @all, T => Ok(loader::<T>()))?;
    let to = et_switch!(Sel, dst.dtype(), @all, T => Ok(storer::<T>()))?;
    walk.convert(dst.bytes_mut()?, 0, to, src_bytes, 0, from)
}

/// The out tensors of an operator that writes a list (`split`, `unbind`): a program's out
/// list, or plain tensors in unit tests.
pub(crate) trait OutList {
    /// The number of out tensors.
    fn len(&self) -> usize;
    /// Out tensor `i`.
    fn get_mut(&mut self, i: usize) -> Option<&mut Tensor>;
}

impl OutList for TensorListMut<'_> {
    fn len(&self) -> usize {
        TensorListMut::len(self)
    }
    fn get_mut(&mut self, i: usize) -> Option<&mut Tensor> {
        TensorListMut::get_mut(self, i)
    }
}

#[cfg(test)]
impl OutList for test_list::List {
    fn len(&self) -> usize {
        self.0.len()
    }
    fn get_mut(&mut self, i: usize) -> Option<&mut Tensor> {
        self.0.get_mut(i).map(|t| &mut **t)
    }
}

/// Test support: out lists as plain tensors.
#[cfg(test)]
pub(crate) mod test_list {
    extern crate std;
    /// A list of owned tensors standing in for a program's out list.
    pub(crate) struct List(pub std::vec::Vec<et_runtime::TensorBuf>);
}
