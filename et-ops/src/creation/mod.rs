//! creation operators.

pub mod arange;
pub mod arange_end;
pub mod empty;
pub mod empty_dim_order;
pub mod fill_scalar;
pub mod fill_tensor;
pub mod full;
pub mod full_like;
pub mod ones;
pub mod rand;
pub mod randn;
pub mod scalar_tensor;
pub mod zeros;
