//! Edge padding of the last 1, 2 or 3 dims: `reflection_pad{1,2,3}d` mirror the input
//! about its edge elements, `replication_pad{1,2,3}d` repeat the edge elements.
//! (`constant_pad_nd`, padding with a value, is a copy operator.)

pub mod reflection_pad1d;
pub mod reflection_pad2d;
pub mod reflection_pad3d;
pub mod replication_pad1d;
pub mod replication_pad2d;
pub mod replication_pad3d;

use et_runtime::{KernelError, KernelResult, Tensor, MAX_DIM};

use crate::util::layout::{check_same_dtype, istrides, Walk};

/// How a padded position maps back into the input.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Mirror about the edge element (which is not repeated): `-1` reads index 1.
    Reflect,
    /// Repeat the edge element: `-1` reads index 0.
    Replicate,
}

impl Mode {
    /// The input index read for output index `i` of a dim of `size` padded by `before`.
    #[inline]
    fn source(self, i: usize, before: usize, size: usize) -> usize {
        let at = i as isize - before as isize;
        let last = size as isize - 1;
        let j = match self {
            Mode::Reflect if at < 0 => -at,
            Mode::Reflect if at > last => 2 * last - at,
            Mode::Reflect => at,
            Mode::Replicate => at.clamp(0, last),
        };
        j as usize
    }
}

/// The most dims a pad operator pads.
const MAX_PADDED: usize = 3;

/// Pads the last `dims` dims of `input` into `out`. `padding` lists (before, after) pairs
/// starting from the last dim, as PyTorch orders them: `[left, right, top, bottom, front,
/// back]`. Reflection needs each padding smaller than its dim; replication a non-empty dim.
/// `dims` (1, 2 or 3) is a value, not a type parameter: one loop serves the six operators
/// (about 5 KB less than one instance per count).
pub(crate) fn pad(
    mode: Mode,
    dims: usize,
    input: &Tensor,
    padding: &[i64],
    out: &mut Tensor,
) -> KernelResult {
    let n = input.dim();
    if padding.len() != 2 * dims || n < dims || dims > MAX_PADDED {
        return Err(KernelError::invalid(
            "padding needs a (before, after) pair per padded dim",
        ));
    }
    check_same_dtype(input, out)?;
    let lead = n - dims;
    let mut before = [0usize; MAX_PADDED];
    let mut sizes = [0usize; MAX_DIM];
    sizes[..n].copy_from_slice(input.sizes());
    for k in 0..dims {
        let d = n - 1 - k;
        let size = input.size(d);
        let (b, a) = (padding[2 * k], padding[2 * k + 1]);
        let limit = match mode {
            Mode::Reflect => size as i64 - 1,
            Mode::Replicate if size > 0 => i64::MAX,
            Mode::Replicate => -1,
        };
        if b < 0 || a < 0 || b > limit || a > limit {
            return Err(KernelError::invalid(
                "padding must be non-negative and, for reflection, smaller than the dim",
            ));
        }
        before[dims - 1 - k] = b as usize;
        sizes[d] = size + b as usize + a as usize;
    }
    out.resize(&sizes[..n])?;
    let (is, os) = (istrides(input)?, istrides(out)?);
    let elem = input.dtype().element_size();
    let src = input.bytes()?;
    let dst = out.bytes_mut()?;
    let lens = [dst.len() / elem.max(1), src.len() / elem.max(1)];
    // The leading (batch, channel) dims line up; the padded dims are walked here.
    let outer = Walk::copy(&sizes[..lead], &os[..lead], &is[..lead])?;
    let padded = &sizes[lead..n];
    let count: usize = padded.iter().product();
    let mut result = Ok(());
    outer.for_each([0, 0], [lens[0].max(1), lens[1].max(1)], |[ob, ib]| {
        let mut idx = [0usize; MAX_PADDED];
        for _ in 0..count {
            let (mut o, mut i) = (ob, ib);
            for k in 0..dims {
                let d = lead + k;
                o += idx[k] * os[d] as usize;
                i += mode.source(idx[k], before[k], input.size(d)) * is[d] as usize;
            }
            match (
                dst.get_mut(o * elem..(o + 1) * elem),
                src.get(i * elem..(i + 1) * elem),
            ) {
                (Some(d), Some(s)) => d.copy_from_slice(s),
                _ => result = Err(KernelError::invalid("index out of bounds for tensor data")),
            }
            // Odometer over the padded dims, innermost last.
            for k in (0..dims).rev() {
                idx[k] += 1;
                if idx[k] < padded[k] {
                    break;
                }
                idx[k] = 0;
            }
        }
    })?;
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn maps_padded_positions() {
        // Size 3, padded by 2 before: -2, -1 mirror to 2, 1 or repeat 0.
        let reflect: [usize; 7] = core::array::from_fn(|i| Mode::Reflect.source(i, 2, 3));
        assert_eq!(reflect, [2, 1, 0, 1, 2, 1, 0]);
        let repl: [usize; 7] = core::array::from_fn(|i| Mode::Replicate.source(i, 2, 3));
        assert_eq!(repl, [0, 0, 0, 1, 2, 2, 2]);
    }

    #[test]
    fn pads_two_dims() {
        let x = TensorBuf::from_slice(&[1, 2, 2], &[1i32, 2, 3, 4]).unwrap();
        let mut o = TensorBuf::zeros(ScalarType::Int, &[1, 3, 4]).unwrap();
        pad(Mode::Replicate, 2, &x, &[1, 1, 0, 1], &mut o).unwrap();
        assert_eq!(
            o.data::<i32>().unwrap(),
            &[1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]
        );
        assert!(pad(Mode::Reflect, 2, &x, &[2, 0, 0, 0], &mut o).is_err());
        assert!(pad(Mode::Reflect, 2, &x, &[1, 0], &mut o).is_err());
    }
}
