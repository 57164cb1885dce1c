//! `aten::stack.out`: join same-shape tensors along a new dim.

use et_runtime::kernel;
use et_runtime::{
    et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor, MAX_DIM,
};

use crate::util::convert::{loader, storer};
use crate::util::layout::{istrides, normalize_insert_dim, Walk};
use crate::util::promote::can_cast;

/// `out = torch.stack(tensors, dim)`: every input has the same sizes and becomes index
/// `i` of a new dim inserted at `dim` (negative counts from the end of the result's
/// dims). Inputs are converted to `out`'s dtype, which must be castable from each.
#[kernel("aten::stack.out")]
pub fn stack_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    tensors: &[&Tensor],
    dim: i64,
    out: &mut Tensor,
) -> KernelResult {
    let Some(first) = tensors.first() else {
        return Err(KernelError::invalid("stack needs at least one tensor"));
    };
    let n = first.dim();
    if n >= MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let d = normalize_insert_dim(dim, n)?;
    for t in tensors {
        if t.sizes() != first.sizes() {
            return Err(KernelError::invalid(
                "stack tensors must have the same sizes",
            ));
        }
        if !can_cast(t.dtype(), out.dtype()) {
            return Err(KernelError::invalid(
                "stack input cannot be cast to the out dtype",
            ));
        }
    }
    let mut sizes = [0usize; MAX_DIM];
    sizes[..d].copy_from_slice(&first.sizes()[..d]);
    sizes[d] = tensors.len();
    sizes[d + 1..=n].copy_from_slice(&first.sizes()[d..]);
    out.resize(&sizes[..=n])?;
    // Out's strides without the new dim: where each input's elements go.
    let os = istrides(out)?;
    let mut inner = [0isize; MAX_DIM];
    inner[..d].copy_from_slice(&os[..d]);
    inner[d..n].copy_from_slice(&os[d + 1..=n]);
    let step = out.strides()[d];
    let out_elem = out.dtype().element_size();
    for (i, t) in tensors.iter().enumerate() {
        let ts = istrides(t)?;
        let walk = Walk::copy(t.sizes(), &inner[..n], &ts[..n])?;
        let base = i * step;
        let src = t.bytes()?;
        if t.dtype() == out.dtype() {
            walk.move_bytes(out_elem, out.bytes_mut()?, base, src, 0)?;
        } else {
            let from = et_switch!(Sel, t.dtype(), @all, T => Ok(loader::<T>()))?;
            let to = et_switch!(Sel, out.dtype(), @all, T => Ok(storer::<T>()))?;
            walk.convert(out.bytes_mut()?, base, to, src, 0, from)?;
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
    fn stacks() {
        with_ctx(|ctx| {
            let a = TensorBuf::from_slice(&[2], &[1i64, 2]).unwrap();
            let b = TensorBuf::from_slice(&[2], &[3i64, 4]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[2, 2]).unwrap();
            stack_out::<AllDtypes>(ctx, &[&a, &b], 0, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1, 2, 3, 4]);
            stack_out::<AllDtypes>(ctx, &[&a, &b], -1, &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1, 3, 2, 4]);
            let i = TensorBuf::from_slice(&[2], &[5i32, 6]).unwrap();
            let mut of = TensorBuf::zeros(ScalarType::Float, &[2, 2]).unwrap();
            stack_out::<AllDtypes>(ctx, &[&a, &i], 1, &mut of).unwrap();
            assert_eq!(of.data::<f32>().unwrap(), &[1.0, 5.0, 2.0, 6.0]);
            let c = TensorBuf::from_slice(&[1], &[7i64]).unwrap();
            assert!(stack_out::<AllDtypes>(ctx, &[&a, &c], 0, &mut o).is_err());
            assert!(stack_out::<AllDtypes>(ctx, &[], 0, &mut o).is_err());
        });
    }
}
