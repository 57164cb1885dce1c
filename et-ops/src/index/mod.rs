//! index operators.

pub mod embedding;
pub mod gather;
pub mod index_select;
pub mod index_tensor;
pub mod masked_fill;
pub mod topk;
