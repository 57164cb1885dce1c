//! `aten::replication_pad1d.out`.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelResult, Tensor};

use super::{pad, Mode};

/// `out = F.pad(self, padding, mode="replicate")` over the last 1 dim: `padding` is
/// `[left, right]` of the last dim, the new elements filled with copies of the edge elements.
#[kernel("aten::replication_pad1d.out")]
pub fn replication_pad1d_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    padding: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    pad(Mode::Replicate, 1, input, padding, out)
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
            let mut o = TensorBuf::zeros(ScalarType::Long, &[1, 1, 6]).unwrap();
            replication_pad1d_out(ctx, &x, &[2, 1], &mut o).unwrap();
            assert_eq!(o.data::<i64>().unwrap(), &[1, 1, 1, 2, 3, 3]);
        });
    }
}
