//! norm operators: batch norm (inference), layer norm, group norm. Statistics are
//! computed in f64 (two passes: mean, then centered squares) and the normalization in the
//! element type's compute type (`util::element::OpMath`).

pub mod batch_norm;
pub mod batch_norm_legit;
pub mod batch_norm_no_stats;
pub mod group_norm;
pub mod layer_norm;

use et_runtime::{KernelError, KernelResult, Tensor, MAX_DIM};

/// Checks that an optional per-channel parameter is 1-d with `c` values of `input`'s dtype.
fn check_param(t: Option<&Tensor>, input: &Tensor, c: usize, what: &'static str) -> KernelResult {
    match t {
        Some(p) if p.dim() != 1 || p.size(0) != c || p.dtype() != input.dtype() => {
            Err(KernelError::invalid(what))
        }
        _ => Ok(()),
    }
}

/// The dims of `t` ordered from outermost to innermost in memory (its dim order), with
/// sizes and the strides of `t` and of `other` (same shape) permuted alike: elementwise
/// passes then walk memory sequentially whatever the layout.
fn memory_order(
    t: &Tensor,
    other: &Tensor,
) -> (
    [usize; MAX_DIM],
    [usize; MAX_DIM],
    [usize; MAX_DIM],
    [usize; MAX_DIM],
) {
    let mut sizes = [0; MAX_DIM];
    let mut a = [0; MAX_DIM];
    let mut b = [0; MAX_DIM];
    let mut dims = [0; MAX_DIM];
    for (k, &d) in t.dim_order().iter().enumerate() {
        let d = d as usize;
        sizes[k] = t.size(d);
        a[k] = t.strides()[d];
        b[k] = other.strides()[d];
        dims[k] = d;
    }
    (sizes, a, b, dims)
}
