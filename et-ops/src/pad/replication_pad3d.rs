//! `aten::replication_pad3d.out`.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use super::{pad, Mode};

/// `out = F.pad(self, padding, mode="replicate")` over the last 3 dims: `padding` is
/// `[left, right, top, bottom, front, back]` of the last three dims, the new elements filled with copies of the edge elements.
#[kernel("aten::replication_pad3d.out")]
pub fn replication_pad3d_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    padding: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    pad(Mode::Replicate, 3, input, padding, out)
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
            let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 1, 5]).unwrap();
            replication_pad3d_out(ctx, &x, &[1, 1, 0, 0, 0, 0], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1, 1, 2, 3, 3]);
        });
    }
}
