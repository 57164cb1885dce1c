//! How the node kinds that split elementwise work or means over threads walk their
//! bands: shared by the fp32 and qint8 binaries and global means, so that neither
//! family's module depends on the other's.

use core::ops::Range;

use et_runtime::KernelResult;

use crate::frame::Frame;
use crate::values::Shape;

/// The shapes of a binary's two operands and output.
pub(super) type Shapes<'s> = (&'s Shape, &'s Shape, &'s Shape);

/// Runs the binary `f` on `a` and `b` into `out`: when both have the output's shape (a
/// residual connection), over bands of elements for the pool, each band as a one-dim
/// operation of its own length; else (broadcasting, or sizes the element walk checks)
/// in one pass over the shapes.
pub(super) fn elementwise<T: Sync, U: Send>(
    frame: &Frame<'_>,
    (a, b): (&[T], &[T]),
    out: &mut [U],
    (sa, sb, so): (Shape, Shape, Shape),
    f: impl Fn(&[T], &[T], &mut [U], Shapes<'_>) + Sync,
) -> KernelResult {
    let len = so.numel().unwrap_or(0);
    if sa != so || sb != so || a.len() < len || b.len() < len || out.len() < len {
        f(a, b, out, (&sa, &sb, &so));
        return Ok(());
    }
    frame.split_elements(len, out, |band, out| {
        let flat = Shape::new(&[band.len()]).unwrap_or_default();
        f(&a[band.clone()], &b[band], out, (&flat, &flat, &flat));
    })
}

/// A band of a mean's outputs (`images x channels`, flat) as runs within one image:
/// `(image, its channels, where the run starts in the band)`.
pub(super) fn channel_runs(
    band: Range<usize>,
    channels: usize,
) -> impl Iterator<Item = (usize, Range<usize>, usize)> {
    let start = band.start;
    let mut at = start;
    core::iter::from_fn(move || {
        if at >= band.end {
            return None;
        }
        let (image, first) = (at / channels, at % channels);
        let last = channels.min(first + band.end - at);
        let run = (image, first..last, at - start);
        at += last - first;
        Some(run)
    })
}

/// The pixels of image `image` of `x` (`[images, pixels, channels]`), each its
/// `channels` values.
pub(super) fn image_pixels<T>(
    x: &[T],
    image: usize,
    (pixels, channels): (usize, usize),
) -> core::slice::ChunksExact<'_, T> {
    x[image * pixels * channels..(image + 1) * pixels * channels].chunks_exact(channels)
}
