//! `aten::native_group_norm.out`: group normalization with its statistics.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use super::check_param;
use crate::util::element::Float;
use crate::util::element::OpMath;
use crate::util::reduction::Space;

/// Normalizes each of `group` channel groups of each image of `input` (`[N, C, *]`) by
/// its own mean and biased variance, then applies the per-channel `weight` and `bias`.
/// `mean` and `rstd` (`[N, group]`) receive the statistics (`rstd = 1/sqrt(var + eps)`).
#[kernel("aten::native_group_norm.out", accepts = [floats])]
#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
pub fn native_group_norm_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    n: i64,
    c: i64,
    hxw: i64,
    group: i64,
    eps: f64,
    out: &mut Tensor,
    mean: &mut Tensor,
    rstd: &mut Tensor,
) -> KernelResult {
    if input.dim() < 2 {
        return Err(KernelError::invalid("group norm input needs a channel dim"));
    }
    let sizes = input.sizes();
    let spatial: usize = sizes[2..].iter().product();
    let (nn, cc) = (sizes[0], sizes[1]);
    let matches = |v: i64, want: usize| usize::try_from(v).is_ok_and(|v| v == want);
    if !matches(n, nn) || !matches(c, cc) || !matches(hxw, spatial) {
        return Err(KernelError::invalid(
            "group norm N, C, HxW do not match the input",
        ));
    }
    let g = usize::try_from(group)
        .ok()
        .filter(|&g| g > 0 && cc.is_multiple_of(g))
        .ok_or(KernelError::invalid(
            "group norm groups must divide the channels",
        ))?;
    check_param(
        weight,
        input,
        cc,
        "group norm weight must be 1-d per channel",
    )?;
    check_param(bias, input, cc, "group norm bias must be 1-d per channel")?;
    let dt = input.dtype();
    if out.dtype() != dt || mean.dtype() != dt || rstd.dtype() != dt {
        return Err(KernelError::invalid(
            "group norm outs must have the input's dtype",
        ));
    }
    out.resize(sizes)?;
    mean.resize(&[nn, g])?;
    rstd.resize(&[nn, g])?;
    et_switch!(Sel, dt, @floats, T => gn_impl::<T>(input, weight, bias, g, eps, out, mean, rstd))
}

#[allow(
    clippy::too_many_arguments,
    reason = "the operator's own argument list"
)]
fn gn_impl<T: OpMath>(
    input: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    groups: usize,
    eps: f64,
    out: &mut Tensor,
    mean: &mut Tensor,
    rstd: &mut Tensor,
) -> KernelResult {
    let nd = input.dim();
    let (nn, cc) = (input.size(0), input.size(1));
    let cpg = cc / groups;
    // One group of one image: (channels of the group, spatial dims); operand 2 is the
    // channel index.
    let mut gsizes = [0usize; MAX_DIM];
    gsizes[..nd].copy_from_slice(input.sizes());
    gsizes[0] = 1;
    gsizes[1] = cpg;
    let mut cs = [0usize; MAX_DIM];
    cs[1] = 1;
    let is = input.strides();
    let mut os = [0usize; MAX_DIM];
    os[..nd].copy_from_slice(out.strides());
    let space = Space::new(&gsizes[..nd], [is, &os[..nd], &cs[..nd]]);
    let count = space.numel() as f64;
    let x = input.data::<T>()?;
    let w = weight.map(|t| t.data::<T>()).transpose()?;
    let b = bias.map(|t| t.data::<T>()).transpose()?;
    let (ms, rs) = (mean.strides(), rstd.strides());
    let (ms, rs) = ((ms[0], ms[1]), (rs[0], rs[1]));
    let mdata = mean.data_mut::<T>()?;
    let rdata = rstd.data_mut::<T>()?;
    let y = out.data_mut::<T>()?;
    for ni in 0..nn {
        for gi in 0..groups {
            let c0 = gi * cpg;
            let base = [ni * is[0] + c0 * is[1], ni * os[0] + c0 * os[1], c0];
            let mut sum = 0.0f64;
            space.for_each(base, |[xi, _, _]| sum += x[xi].to_f64());
            let mu = sum / count;
            let mut sq = 0.0f64;
            space.for_each(base, |[xi, _, _]| {
                let d = x[xi].to_f64() - mu;
                sq += d * d;
            });
            let inv = 1.0 / libm::sqrt(sq / count + eps);
            mdata[ni * ms.0 + gi * ms.1] = T::down(T::C::c(mu));
            rdata[ni * rs.0 + gi * rs.1] = T::down(T::C::c(inv));
            let (mu_c, inv_c) = (T::C::c(mu), T::C::c(inv));
            space.for_each(base, |[xi, yi, ch]| {
                let a = w.map_or(inv_c, |w| w[ch].up() * inv_c);
                let sh = b.map_or(T::C::c(0.0), |b| b[ch].up()) - mu_c * a;
                y[yi] = T::down(x[xi].up() * a + sh);
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};
    use std::vec;

    #[test]
    fn two_groups() {
        let mut scratch = vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        // N=1, C=4, HxW=1: groups {0, 2} and {4, 6} -> mean 1 / 5, var 1, rstd ~1.
        let x = TensorBuf::from_slice(&[1, 4, 1], &[0.0f64, 2.0, 4.0, 6.0]).unwrap();
        let w = TensorBuf::from_slice(&[4], &[1.0f64, 1.0, 2.0, 1.0]).unwrap();
        let b = TensorBuf::from_slice(&[4], &[0.0f64, 0.0, 0.0, 10.0]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Double, &[1, 4, 1]).unwrap();
        let mut m = TensorBuf::zeros(ScalarType::Double, &[1, 2]).unwrap();
        let mut r = TensorBuf::zeros(ScalarType::Double, &[1, 2]).unwrap();
        native_group_norm_out::<AllDtypes>(
            &ctx,
            &x,
            Some(&w),
            Some(&b),
            1,
            4,
            1,
            2,
            0.0,
            &mut out,
            &mut m,
            &mut r,
        )
        .unwrap();
        assert_eq!(out.data::<f64>().unwrap(), &[-1.0, 1.0, -2.0, 11.0]);
        assert_eq!(m.data::<f64>().unwrap(), &[1.0, 5.0]);
        assert_eq!(r.data::<f64>().unwrap(), &[1.0, 1.0]);
        assert!(native_group_norm_out::<AllDtypes>(
            &ctx, &x, None, None, 1, 4, 1, 3, 0.0, &mut out, &mut m, &mut r
        )
        .is_err());
        assert!(native_group_norm_out::<AllDtypes>(
            &ctx, &x, None, None, 2, 4, 1, 2, 0.0, &mut out, &mut m, &mut r
        )
        .is_err());
    }
}
