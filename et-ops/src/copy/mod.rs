//! copy operators.

pub mod cat;
pub mod clone_dim_order;
pub mod split_with_sizes_copy;
pub mod to_dim_order_copy;
