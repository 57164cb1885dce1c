//! `aten::scatter.value_out`: write one value at positions named by an index.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelResult, Scalar, Tensor};

use super::scatter_into;
use crate::util::convert::scalar_bytes;
use crate::util::layout::{check_same_dtype, copy_same_shape, istrides};

/// `out = self.scatter(dim, index, value)`: a copy of `self` where, for every position
/// `p` of `index`, `out[p with dim replaced by index[p]] = value` (the value must fit
/// `self`'s dtype; indices in `0..self.size(dim)`).
#[kernel("aten::scatter.value_out", accepts = [all])]
pub fn scatter_value_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    index: &Tensor,
    value: Scalar,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let value = et_switch!(Sel, out.dtype(), @all, T => scalar_bytes::<T>(value))?;
    let elem = out.dtype().element_size();
    let out_strides = istrides(out)?;
    let dst = out.bytes_mut()?;
    scatter_into(input, &out_strides, dim, index, None, |to, _| {
        match dst.get_mut(to * elem..(to + 1) * elem) {
            Some(d) => {
                d.copy_from_slice(&value[..elem]);
                true
            }
            None => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn scatters_a_value() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[2, 3], &[1i32; 6]).unwrap();
            let index = TensorBuf::from_slice(&[2, 1], &[2i64, 0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Int, &[2, 3]).unwrap();
            scatter_value_out::<AllDtypes>(ctx, &x, 1, &index, Scalar::Int(-4), &mut o).unwrap();
            assert_eq!(o.data::<i32>().unwrap(), &[1, 1, -4, -4, 1, 1]);
        });
    }
}
