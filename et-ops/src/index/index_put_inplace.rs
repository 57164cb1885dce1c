//! `aten::index_put_`: write values at advanced-index positions, in place.

use et_runtime::kernel;
use et_runtime::{DtypeSelection, KernelContext, KernelResult, Tensor};

use super::index_put::put;

/// `self.index_put_(indices, values, accumulate)`: the positions `self[indices]` selects
/// receive `values` (added with `accumulate`), with the rules of `index_put.out`. Programs
/// call this after the reinplace pass, e.g. for a KV-cache update.
#[kernel("aten::index_put_")]
pub fn index_put_inplace<Sel: DtypeSelection>(
    ctx: &KernelContext<'_>,
    target: &mut Tensor,
    indices: &[Option<&Tensor>],
    values: &Tensor,
    accumulate: bool,
) -> KernelResult {
    put::<Sel>(ctx, target, indices, values, accumulate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn updates_a_cache_in_place() {
        with_ctx(|ctx| {
            // [batch 1, positions 4, width 2]: write two positions.
            let mut cache = TensorBuf::zeros(ScalarType::Float, &[1, 4, 2]).unwrap();
            let pos = TensorBuf::from_slice(&[2], &[1i32, 3]).unwrap();
            let v = TensorBuf::from_slice(&[1, 2, 2], &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
            index_put_inplace::<AllDtypes>(ctx, &mut cache, &[None, Some(&pos)], &v, false)
                .unwrap();
            assert_eq!(
                cache.data::<f32>().unwrap(),
                &[0.0, 0.0, 1.0, 2.0, 0.0, 0.0, 3.0, 4.0]
            );
        });
    }
}
