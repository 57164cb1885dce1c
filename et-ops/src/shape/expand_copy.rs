//! Materialized broadcast to a larger shape.

use et_runtime::kernel;
use et_runtime::{KernelContext, KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{copy_view, istrides};

/// `out = self.expand(size)`, materialized. `size` may add leading dims; `-1` keeps an
/// existing dim; an existing dim of size 1 can grow (its elements repeat).
#[kernel("aten::expand_copy.out")]
pub fn expand_copy_out(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    size: &[i64],
    _implicit: bool,
    out: &mut Tensor,
) -> KernelResult {
    let n = size.len();
    let m = input.dim();
    if n > MAX_DIM || n < m {
        return Err(KernelError::invalid(
            "expand size must have at least the input's rank",
        ));
    }
    let lead = n - m;
    let in_strides = istrides(input)?;
    let mut sizes = [0usize; MAX_DIM];
    // Repeated elements read the same source element: stride 0.
    let mut strides = [0isize; MAX_DIM];
    for (i, &s) in size.iter().enumerate() {
        if i < lead {
            sizes[i] = usize::try_from(s)
                .map_err(|_| KernelError::invalid("new expand dims cannot be -1"))?;
            continue;
        }
        let have = input.size(i - lead);
        let want = if s == -1 {
            have
        } else {
            usize::try_from(s).map_err(|_| KernelError::invalid("invalid expand size"))?
        };
        if want == have {
            strides[i] = in_strides[i - lead];
        } else if have != 1 {
            return Err(KernelError::invalid(
                "expanded size must match a non-singleton dim",
            ));
        }
        sizes[i] = want;
    }
    copy_view(out, &sizes[..n], input, &strides[..n], 0)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use et_runtime::{Arena, ScalarType, TensorBuf};

    #[test]
    fn expands() {
        let mut scratch = std::vec![0u8; 1 << 12];
        let arena = Arena::new(&mut scratch);
        let ctx = KernelContext::new(&arena);
        let x = TensorBuf::from_slice(&[1, 3], &[1i16, 2, 3]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Short, &[2, 2, 3]).unwrap();
        expand_copy_out(&ctx, &x, &[2, 2, -1], false, &mut out).unwrap();
        assert_eq!(
            out.data::<i16>().unwrap(),
            &[1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3]
        );

        let x = TensorBuf::from_slice(&[3, 1], &[1i16, 2, 3]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Short, &[3, 2]).unwrap();
        expand_copy_out(&ctx, &x, &[3, 2], false, &mut out).unwrap();
        assert_eq!(out.data::<i16>().unwrap(), &[1, 1, 2, 2, 3, 3]);

        assert!(expand_copy_out(&ctx, &x, &[2, 2], false, &mut out).is_err());
        assert!(expand_copy_out(&ctx, &x, &[-1, 3, 2], false, &mut out).is_err());

        // 0-dim input.
        let x = TensorBuf::from_slice(&[], &[7i16]).unwrap();
        let mut out = TensorBuf::zeros(ScalarType::Short, &[2]).unwrap();
        expand_copy_out(&ctx, &x, &[2], false, &mut out).unwrap();
        assert_eq!(out.data::<i16>().unwrap(), &[7, 7]);
    }
}
