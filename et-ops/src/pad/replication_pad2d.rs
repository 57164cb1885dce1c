//! `aten::replication_pad2d.out`.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use super::{pad, Mode};

/// `out = F.pad(self, padding, mode="replicate")` over the last 2 dims: `padding` is
/// `[left, right, top, bottom]` of the last two dims, the new elements filled with copies of the edge elements.
#[kernel("aten::replication_pad2d.out")]
pub fn replication_pad2d_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    padding: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    pad(Mode::Replicate, 2, input, padding, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn pads() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[1, 1, 3], &[1i64, 2, 3]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 3, 5]).unwrap();
            replication_pad2d_out(ctx, &x, &[1, 1, 0, 2], &mut o).unwrap();
            assert_eq!(
                o.data::<i64>().unwrap(),
                &[1, 1, 2, 3, 3, 1, 1, 2, 3, 3, 1, 1, 2, 3, 3]
            );
        });
    }
}
