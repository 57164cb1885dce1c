//! pool operators: 2-d max pooling (with indices) and average pooling over `[N, C, H, W]`
//! or `[C, H, W]` inputs in any dim order.

pub mod adaptive_avg_pool2d;
pub mod avg_pool2d;
pub mod max_pool2d_with_indices;
pub mod max_pool2d_with_indices_backward;

use et_runtime::{KernelError, KernelResult, Tensor};

/// Validated pooling geometry; `*s` are (n, c, h, w) strides.
#[derive(Clone, Copy, Debug)]
struct Pool {
    n: usize,
    c: usize,
    ih: usize,
    iw: usize,
    oh: usize,
    ow: usize,
    kh: usize,
    kw: usize,
    sh: usize,
    sw: usize,
    ph: usize,
    pw: usize,
    dh: usize,
    dw: usize,
    is: [usize; 4],
}

fn err(m: &'static str) -> KernelError {
    KernelError::invalid(m)
}

/// Element `i` of a per-dim list of one or two values.
fn pick(list: &[i64], i: usize, what: &'static str) -> KernelResult<i64> {
    match list.len() {
        1 => Ok(list[0]),
        2 => Ok(list[i]),
        _ => Err(err(what)),
    }
}

/// PyTorch's pooling output size: `(in + 2p - d(k-1) - 1) / s + 1`, rounded up in
/// `ceil_mode` unless the last window would start inside the right padding.
fn out_size(i: i64, k: i64, s: i64, p: i64, d: i64, ceil: bool) -> i64 {
    let num = i + 2 * p - d * (k - 1) - 1;
    let mut o = if ceil {
        (num + s - 1).div_euclid(s)
    } else {
        num.div_euclid(s)
    } + 1;
    if ceil && (o - 1) * s >= i + p {
        o -= 1;
    }
    o
}

impl Pool {
    /// Checks the arguments and computes the output size. An empty `stride` means the
    /// kernel size.
    fn new(
        input: &Tensor,
        kernel: &[i64],
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        ceil_mode: bool,
    ) -> KernelResult<Pool> {
        let nd = input.dim();
        if nd != 3 && nd != 4 {
            return Err(err("pooling expects a 3-d or 4-d input"));
        }
        let sz = input.sizes();
        let st = input.strides();
        let (n, c, ih, iw, is) = if nd == 4 {
            (sz[0], sz[1], sz[2], sz[3], [st[0], st[1], st[2], st[3]])
        } else {
            (1, sz[0], sz[1], sz[2], [0, st[0], st[1], st[2]])
        };
        let stride = if stride.is_empty() { kernel } else { stride };
        // v[i] = [kernel, stride, padding, dilation] of spatial dim i.
        let mut v = [[0i64; 4]; 2];
        for (i, vi) in v.iter_mut().enumerate() {
            *vi = [
                pick(kernel, i, "pooling kernel size needs one or two values")?,
                pick(stride, i, "pooling stride needs one or two values")?,
                pick(padding, i, "pooling padding needs one or two values")?,
                pick(dilation, i, "pooling dilation needs one or two values")?,
            ];
            let [k, s, p, d] = *vi;
            if k < 1 || s < 1 || d < 1 || p < 0 {
                return Err(err(
                    "pooling kernel, stride and dilation must be positive, padding non-negative",
                ));
            }
            if p > k / 2 {
                return Err(err("pooling padding must be at most half the kernel size"));
            }
        }
        let mut o = [0usize; 2];
        for ((oi, len), [k, s, p, d]) in o.iter_mut().zip([ih, iw]).zip(v) {
            let os = out_size(len as i64, k, s, p, d, ceil_mode);
            *oi = usize::try_from(os)
                .ok()
                .filter(|&x| x > 0)
                .ok_or(err("pooling output size is not positive"))?;
        }
        let u = |x: i64| x as usize;
        Ok(Pool {
            n,
            c,
            ih,
            iw,
            oh: o[0],
            ow: o[1],
            kh: u(v[0][0]),
            kw: u(v[1][0]),
            sh: u(v[0][1]),
            sw: u(v[1][1]),
            ph: u(v[0][2]),
            pw: u(v[1][2]),
            dh: u(v[0][3]),
            dw: u(v[1][3]),
            is,
        })
    }

    /// Resizes an out tensor to the pooled shape (rank as the input's).
    fn resize(&self, input: &Tensor, out: &mut Tensor) -> KernelResult {
        if input.dim() == 4 {
            out.resize(&[self.n, self.c, self.oh, self.ow])
        } else {
            out.resize(&[self.c, self.oh, self.ow])
        }
    }
}

/// A tensor's (n, c, h, w) strides (n stride 0 for a 3-d tensor).
fn strides4(t: &Tensor) -> [usize; 4] {
    let s = t.strides();
    if s.len() == 4 {
        [s[0], s[1], s[2], s[3]]
    } else {
        [0, s[0], s[1], s[2]]
    }
}
