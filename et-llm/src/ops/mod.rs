//! The operators, one per module. Each is registered with `#[kernel]`; the functions are
//! public so that code (and tests) can also call them directly.

pub mod custom_quantized_sdpa;
pub mod custom_sdpa;
pub mod sdpa_with_kv_cache;
pub mod update_cache;
pub mod update_cache_with_indices;

pub use custom_quantized_sdpa::custom_quantized_sdpa_out;
pub use custom_sdpa::custom_sdpa_out;
pub use sdpa_with_kv_cache::sdpa_with_kv_cache_out;
pub use update_cache::update_cache_out;
pub use update_cache_with_indices::update_cache_with_indices_out;
