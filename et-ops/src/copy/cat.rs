//! Concatenation along a dim.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use crate::util::convert::{loader, storer};
use crate::util::layout::{istrides, normalize_dim, Walk};
use crate::util::promote::can_cast;

/// PyTorch still skips 1-D empty tensors (`torch.tensor([])`) in `cat`, whatever the
/// other tensors' shapes.
fn is_legacy_empty(t: &Tensor) -> bool {
    t.dim() == 1 && t.numel() == 0
}

/// `out = torch.cat(tensors, dim)`. Inputs may have different dtypes; each is converted
/// to `out`'s dtype, which must be castable from it (no float to integer, no non-bool to
/// bool).
#[kernel("aten::cat.out")]
pub fn cat_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    tensors: &[&Tensor],
    dim: i64,
    out: &mut Tensor,
) -> KernelResult {
    let Some(first) = tensors.iter().find(|t| !is_legacy_empty(t)) else {
        // Every input is a legacy empty tensor: the result is one too.
        if tensors.is_empty() {
            return Err(KernelError::invalid("cat needs at least one tensor"));
        }
        return out.resize(&[0]);
    };
    let n = first.dim();
    if n == 0 {
        return Err(KernelError::invalid(
            "zero-dimensional tensors cannot be concatenated",
        ));
    }
    let d = normalize_dim(dim, n)?;
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(first.sizes());
    sizes[d] = 0;
    for t in tensors.iter().filter(|t| !is_legacy_empty(t)) {
        if t.dim() != n {
            return Err(KernelError::invalid("cat tensors must have the same rank"));
        }
        let same = (0..n).all(|i| i == d || t.size(i) == first.size(i));
        if !same {
            return Err(KernelError::invalid(
                "cat tensors must match except in the cat dim",
            ));
        }
        if !can_cast(t.dtype(), out.dtype()) {
            return Err(KernelError::invalid(
                "cat input cannot be cast to the out dtype",
            ));
        }
        sizes[d] = sizes[d]
            .checked_add(t.size(d))
            .ok_or(KernelError::invalid("cat size overflows"))?;
    }
    out.resize(&sizes[..n])?;
    let os = istrides(out)?;
    let out_elem = out.dtype().element_size();
    let to = if tensors.iter().any(|t| t.dtype() != out.dtype()) {
        Some(et_switch!(Sel, out.dtype(), @all, T => Ok(storer::<T>()))?)
    } else {
        None
    };
    let mut offset = 0usize;
    for t in tensors.iter().filter(|t| !is_legacy_empty(t)) {
        let ts = istrides(t)?;
        let walk = Walk::copy(t.sizes(), &os[..n], &ts[..n])?;
        let base = offset * out.strides()[d];
        let src = t.bytes()?;
        match to {
            Some(to) if t.dtype() != out.dtype() => {
                let from = et_switch!(Sel, t.dtype(), @all, T => Ok(loader::<T>()))?;
                walk.convert(out.bytes_mut()?, base, to, src, 0, from)?;
            }
            _ => walk.move_bytes(out_elem, out.bytes_mut()?, base, src, 0)?,
        }
        offset += t.size(d);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use et_runtime::AllDtypes;
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, ShapeDynamism, TensorBuf};

    fn ctx_run(f: impl FnOnce(&KernelContext<'_>)) {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        f(&KernelContext::new(&arena));
    }

    #[test]
    fn concatenates() {
        ctx_run(|ctx| {
            let a = TensorBuf::from_slice(&[2, 2], &[1f32, 2., 3., 4.]).unwrap();
            let b = TensorBuf::from_slice(&[2, 3], &[5f32, 6., 7., 8., 9., 10.]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[2, 5]).unwrap();
            cat_out::<AllDtypes>(ctx, &[&a, &b], -1, &mut o).unwrap();
            assert_eq!(
                o.data::<f32>().unwrap(),
                &[1., 2., 5., 6., 7., 3., 4., 8., 9., 10.]
            );
            let mut o = TensorBuf::zeros(ScalarType::Float, &[4, 2]).unwrap();
            let e = TensorBuf::zeros(ScalarType::Float, &[0]).unwrap();
            cat_out::<AllDtypes>(ctx, &[&a, &e, &a], 0, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[1., 2., 3., 4., 1., 2., 3., 4.]);
            assert!(cat_out::<AllDtypes>(ctx, &[&a, &b], 0, &mut o).is_err());
        });
    }

    #[test]
    fn converts_mixed_dtypes_and_layouts() {
        ctx_run(|ctx| {
            let a = TensorBuf::from_slice(&[1, 2], &[1i32, 2]).unwrap();
            let b = TensorBuf::from_slice(&[1, 2], &[0.5f32, 1.5]).unwrap();
            let mut o =
                TensorBuf::with_layout(ScalarType::Double, &[2, 2], &[1, 0], ShapeDynamism::Static)
                    .unwrap();
            cat_out::<AllDtypes>(ctx, &[&a, &b], 0, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[1., 0.5, 2., 1.5]);
            let mut i = TensorBuf::zeros(ScalarType::Int, &[2, 2]).unwrap();
            assert!(cat_out::<AllDtypes>(ctx, &[&a, &b], 0, &mut i).is_err());
        });
    }
}
