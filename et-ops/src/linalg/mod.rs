//! linalg operators: matrix products on top of `util::gemm`.

pub mod addmm;
pub mod bmm;
pub mod mm;

use et_runtime::{Element, KernelResult, Tensor};

use crate::util::gemm::{Mat, MatMut};

/// The matrix formed by dims `r` and `c` of `t`, starting at element `base` of its data.
fn mat_at<T: Element>(t: &Tensor, r: usize, c: usize, base: usize) -> KernelResult<Mat<'_, T>> {
    let data = t.data::<T>()?;
    Ok(Mat {
        data: data.get(base..).unwrap_or(&[]),
        rows: t.size(r),
        cols: t.size(c),
        rs: t.strides()[r],
        cs: t.strides()[c],
    })
}

/// The writable matrix formed by dims `r` and `c` of `t`, starting at element `base`.
fn mat_mut_at<T: Element>(
    t: &mut Tensor,
    r: usize,
    c: usize,
    base: usize,
) -> KernelResult<MatMut<'_, T>> {
    let (rows, cols) = (t.size(r), t.size(c));
    let (rs, cs) = (t.strides()[r], t.strides()[c]);
    let data = t.data_mut::<T>()?;
    let len = data.len();
    Ok(MatMut {
        data: data.get_mut(base.min(len)..).unwrap_or_default(),
        rows,
        cols,
        rs,
        cs,
    })
}
