//! shape operators.

pub mod diagonal_copy;
pub mod expand_copy;
pub mod flip;
pub mod permute_copy;
pub mod pixel_shuffle;
pub mod pixel_unshuffle;
pub mod repeat;
pub mod roll;
pub mod squeeze_copy;
pub mod squeeze_copy_dim;
pub mod t_copy;
pub mod transpose_copy;
pub mod tril;
pub mod unsqueeze_copy;
pub mod view_copy;
