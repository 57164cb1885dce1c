//! The 2-D transpose split over the context's pool: a contiguous `[a, b]` into a
//! contiguous `[b, a]`, by bands of whole output rows ([`for_each_band`]), each band
//! copied by the strided walk's own tiled transpose ([`Walk::move_bytes`]).
//!
//! Every permutation that moves a leading group of dims behind the rest is this
//! transpose (`permute_copy` with dims `[1, 0]`, `[2, 0, 1]`, ...); mv2's `[1000, 1280]`
//! classifier weight is one, transposed in every execute.

use core::sync::atomic::{AtomicBool, Ordering};

use et_runtime::{KernelContext, KernelError, KernelResult};

use super::walk::Walk;
use crate::util::split::for_each_band;

/// Fewer elements than this stay on one thread.
const SPLIT_MIN: usize = 1 << 16;

/// `dst[j, i] = src[i, j]` for a row-major `[a, b]` `src` and `[b, a]` `dst`, both of
/// `elem`-byte elements given as bytes.
pub fn transpose_bytes(
    ctx: &KernelContext<'_>,
    src: &[u8],
    dst: &mut [u8],
    elem: usize,
    a: usize,
    b: usize,
) -> KernelResult {
    let row = a
        .checked_mul(elem)
        .ok_or(KernelError::invalid("transpose overflows"))?;
    let total = row
        .checked_mul(b)
        .ok_or(KernelError::invalid("transpose overflows"))?;
    let dst = dst
        .get_mut(..total)
        .ok_or(KernelError::invalid("transpose exceeds its tensors"))?;
    if total == 0 {
        return Ok(());
    }
    // The walk checks every band's reads and writes; a failure in any band is reported
    // once the split has returned.
    let failed = AtomicBool::new(false);
    for_each_band(ctx, dst, row, SPLIT_MIN * elem, |start, band| {
        let (j0, rows) = (start / row, band.len() / row);
        let moved = Walk::copy(&[rows, a], &[a as isize, 1], &[1, b as isize])
            .and_then(|walk| walk.move_bytes(elem, band, 0, src, j0));
        if moved.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
    });
    if failed.load(Ordering::Relaxed) {
        return Err(KernelError::invalid("transpose exceeds its tensors"));
    }
    Ok(())
}
