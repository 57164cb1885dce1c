//! copy operators.

pub mod alias_copy;
pub mod as_strided_copy;
pub mod cat;
pub mod clone_dim_order;
pub mod constant_pad_nd;
pub mod detach_copy;
pub mod narrow_copy;
pub mod select_copy;
pub mod slice_copy;
pub mod split_copy;
pub mod split_with_sizes_copy;
pub mod stack;
pub mod to_dim_order_copy;
pub mod unbind_copy;

use et_runtime::{Tensor, TensorListMut};

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
