//! `aten::scatter.src_out`: write elements of `src` at positions named by an index.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::scatter_into;
use crate::util::layout::{check_same_dtype, copy_same_shape, istrides};

/// `out = self.scatter(dim, index, src)`: a copy of `self` where, for every position `p`
/// of `index`, `out[p with dim replaced by index[p]] = src[p]` (`src` at least as large
/// as `index` in every dim, indices in `0..self.size(dim)`). A position written twice
/// keeps the last value.
#[kernel("aten::scatter.src_out")]
pub fn scatter_src_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    out: &mut Tensor,
) -> KernelResult {
    check_same_dtype(input, out)?;
    check_same_dtype(input, src)?;
    out.resize(input.sizes())?;
    copy_same_shape(out, input, None, None)?;
    let out_strides = istrides(out)?;
    let elem = src.dtype().element_size();
    let src_bytes = src.bytes()?;
    let dst = out.bytes_mut()?;
    scatter_into(
        input,
        &out_strides,
        dim,
        index,
        Some(src),
        |to, from| match (
            dst.get_mut(to * elem..(to + 1) * elem),
            src_bytes.get(from * elem..(from + 1) * elem),
        ) {
            (Some(d), Some(s)) => {
                d.copy_from_slice(s);
                true
            }
            _ => false,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn scatters_rows() {
        with_ctx(|ctx| {
            let x = TensorBuf::zeros(ScalarType::Float, &[3, 2]).unwrap();
            let index = TensorBuf::from_slice(&[2, 2], &[2i64, 0, 1, 2]).unwrap();
            let src = TensorBuf::from_slice(&[2, 3], &[1.0f32, 2.0, 9.0, 3.0, 4.0, 9.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Float, &[3, 2]).unwrap();
            scatter_src_out::<AllDtypes>(ctx, &x, 0, &index, &src, &mut o).unwrap();
            assert_eq!(o.data::<f32>().unwrap(), &[0.0, 2.0, 3.0, 0.0, 1.0, 4.0]);
            let bad = TensorBuf::from_slice(&[1, 1], &[3i64]).unwrap();
            assert!(scatter_src_out::<AllDtypes>(ctx, &x, 0, &bad, &src, &mut o).is_err());
        });
    }
}
