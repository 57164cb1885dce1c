//! copy operators.

pub mod alias_copy;
pub mod as_strided_copy;
pub mod cat;
pub mod clone_dim_order;
pub mod constant_pad_nd;
pub mod select_copy;
pub mod slice_copy;
pub mod split_with_sizes_copy;
pub mod to_dim_order_copy;
