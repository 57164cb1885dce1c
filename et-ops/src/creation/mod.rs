//! creation operators.

pub mod arange;
pub mod full;
pub mod full_like;
pub mod scalar_tensor;
