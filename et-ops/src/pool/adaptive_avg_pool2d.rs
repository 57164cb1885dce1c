//! `aten::_adaptive_avg_pool2d.out`: average pooling to a given output size.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::strides4;
use crate::util::element::Num;

/// Averages `[N, C, H, W]` (or `[C, H, W]`) input into `output_size = [OH, OW]` cells:
/// cell `(i, j)` covers rows `floor(i * H / OH) .. ceil((i + 1) * H / OH)` and likewise
/// columns, so cells may overlap when the sizes do not divide. Sums accumulate in f64 and
/// round once.
#[kernel("aten::_adaptive_avg_pool2d.out", accepts = [floats])]
pub fn adaptive_avg_pool2d_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    output_size: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let nd = input.dim();
    if nd != 3 && nd != 4 {
        return Err(KernelError::invalid(
            "adaptive pooling expects a 3-d or 4-d input",
        ));
    }
    let [oh, ow] = match output_size {
        &[h, w] => [h, w].map(|v| usize::try_from(v).ok().filter(|&v| v > 0)),
        _ => [None, None],
    };
    let (Some(oh), Some(ow)) = (oh, ow) else {
        return Err(KernelError::invalid(
            "adaptive pooling needs two positive output sizes",
        ));
    };
    if out.dtype() != input.dtype() || out.dim() != nd {
        return Err(KernelError::invalid(
            "adaptive pool out must match the input's dtype and rank",
        ));
    }
    let s = input.sizes();
    let (h, w) = (s[nd - 2], s[nd - 1]);
    if h == 0 || w == 0 {
        return Err(KernelError::invalid("adaptive pooling of an empty plane"));
    }
    if nd == 4 {
        out.resize(&[s[0], s[1], oh, ow])?;
    } else {
        out.resize(&[s[0], oh, ow])?;
    }
    et_switch!(Sel, input.dtype(), @floats, T => pool::<T>(input, out))
}

fn pool<T: Num>(input: &Tensor, out: &mut Tensor) -> KernelResult {
    let nd = input.dim();
    let (n, c) = if nd == 4 {
        (input.size(0), input.size(1))
    } else {
        (1, input.size(0))
    };
    let (h, w) = (input.size(nd - 2), input.size(nd - 1));
    let (oh, ow) = (out.size(nd - 2), out.size(nd - 1));
    let (is, os) = (strides4(input), strides4(out));
    let x = input.data::<T>()?;
    let y = out.data_mut::<T>()?;
    let start = |i: usize, len: usize, o: usize| i * len / o;
    let end = |i: usize, len: usize, o: usize| ((i + 1) * len).div_ceil(o);
    for b in 0..n {
        for ch in 0..c {
            let (ib, ob) = (b * is[0] + ch * is[1], b * os[0] + ch * os[1]);
            for i in 0..oh {
                let (h0, h1) = (start(i, h, oh), end(i, h, oh));
                for j in 0..ow {
                    let (w0, w1) = (start(j, w, ow), end(j, w, ow));
                    let mut sum = 0.0f64;
                    for r in h0..h1 {
                        for q in w0..w1 {
                            sum += x[ib + r * is[2] + q * is[3]].to_f64();
                        }
                    }
                    let count = ((h1 - h0) * (w1 - w0)) as f64;
                    y[ob + i * os[2] + j * os[3]] = T::from_f64(sum / count);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn averages_overlapping_cells() {
        with_ctx(|ctx| {
            // One 1x3 plane into 1x2 cells: columns [0, 2) and [1, 3).
            let x = TensorBuf::from_slice(&[1, 1, 3], &[1.0f64, 2.0, 4.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[1, 1, 2]).unwrap();
            adaptive_avg_pool2d_out::<AllDtypes>(ctx, &x, &[1, 2], &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[1.5, 3.0]);
            let mut g = TensorBuf::zeros(ScalarType::Double, &[1, 1, 1]).unwrap();
            adaptive_avg_pool2d_out::<AllDtypes>(ctx, &x, &[1, 1], &mut g).unwrap();
            assert_eq!(g.data::<f64>().unwrap(), &[7.0 / 3.0]);
            assert!(adaptive_avg_pool2d_out::<AllDtypes>(ctx, &x, &[0, 1], &mut g).is_err());
        });
    }
}
