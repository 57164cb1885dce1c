//! linalg operators: matrix products on top of `util::gemm`.

pub mod addmm;
pub mod bmm;
pub mod cdist_forward;
mod constant_view;
pub mod mm;
pub mod pdist_forward;

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

/// A running p-norm of differences, as `cdist` and `pdist` define it: `p = 0` counts the
/// non-zero differences, `p = inf` takes the largest absolute one, other `p` give
/// `(sum |d|^p)^(1/p)` (with `p = 1` and `p = 2` computed without `pow`).
#[derive(Clone, Copy)]
struct PNorm {
    p: f64,
    acc: f64,
}

impl PNorm {
    /// A norm of order `p`, which must be non-negative (checked by the kernels).
    fn new(p: f64) -> PNorm {
        PNorm { p, acc: 0.0 }
    }

    /// Adds one difference.
    #[inline]
    fn add(&mut self, d: f64) {
        let a = libm::fabs(d);
        let p = self.p;
        if p == 0.0 {
            self.acc += f64::from(u8::from(a != 0.0));
        } else if p == 1.0 {
            self.acc += a;
        } else if p == 2.0 {
            self.acc += a * a;
        } else if p == f64::INFINITY {
            // NaN propagates.
            if a > self.acc || a.is_nan() {
                self.acc = a;
            }
        } else {
            self.acc += libm::pow(a, p);
        }
    }

    /// The norm.
    fn finish(self) -> f64 {
        let p = self.p;
        if p == 0.0 || p == 1.0 || p == f64::INFINITY {
            self.acc
        } else if p == 2.0 {
            libm::sqrt(self.acc)
        } else {
            libm::pow(self.acc, 1.0 / p)
        }
    }
}

/// Fails unless `p` is a valid norm order (non-negative, not NaN).
fn check_p(p: f64) -> KernelResult {
    if p >= 0.0 {
        Ok(())
    } else {
        Err(et_runtime::KernelError::invalid(
            "distance order p must be non-negative",
        ))
    }
}
