//! The geometry of a sliding window (convolution, pooling) over an NHWC input.

use et_xnnpack_schema::NodeView;

/// The geometry of a 2-D convolution or pooling window over an NHWC input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    pub(crate) batch: usize,
    pub(crate) in_h: usize,
    pub(crate) in_w: usize,
    pub(crate) out_h: usize,
    pub(crate) out_w: usize,
    pub(crate) kernel_h: usize,
    pub(crate) kernel_w: usize,
    pub(crate) stride_h: usize,
    pub(crate) stride_w: usize,
    pub(crate) dilation_h: usize,
    pub(crate) dilation_w: usize,
    pub(crate) pad_top: usize,
    pub(crate) pad_left: usize,
}

impl Window {
    /// Each of `P` pixels' input column (from output column `ow` on) of its first tap
    /// column `kw0`, and the input row offset (in pixels) of tap row `i` of output row
    /// `oh` of image `n`: what the direct and depthwise kernels index the input by. The
    /// columns saturate when the tap range is empty (then unused).
    #[inline(always)]
    pub(crate) fn offsets<const P: usize>(
        &self,
        n: usize,
        oh: usize,
        ow: usize,
        kw0: usize,
    ) -> ([usize; P], impl Fn(usize) -> usize + '_) {
        let col = core::array::from_fn(|p| {
            ((ow + p) * self.stride_w + kw0 * self.dilation_w).saturating_sub(self.pad_left)
        });
        let row = move |i: usize| {
            (n * self.in_h + oh * self.stride_h + i * self.dilation_h - self.pad_top) * self.in_w
        };
        (col, row)
    }

    /// The window of node fields `(top, right, bottom, left, kh, kw, sh, sw, dh, dw)`
    /// over `[batch, in_h, in_w, _]`; `None` when a size is 0 or the output would be empty.
    pub(crate) fn new(
        node: &NodeView<'_>,
        fields: [u16; 10],
        batch: usize,
        in_h: usize,
        in_w: usize,
    ) -> Option<Window> {
        let f = fields.map(|vt| node.u32(vt) as usize);
        let [top, right, bottom, left, kernel_h, kernel_w, stride_h, stride_w, dh, dw] = f;
        // XNNPACK treats a dilation of 0 as 1 (the serializer writes 1).
        let (dilation_h, dilation_w) = (dh.max(1), dw.max(1));
        if kernel_h == 0 || kernel_w == 0 || stride_h == 0 || stride_w == 0 {
            return None;
        }
        let span = |k: usize, d: usize| (k - 1).checked_mul(d)?.checked_add(1);
        let padded_h = in_h.checked_add(top)?.checked_add(bottom)?;
        let padded_w = in_w.checked_add(left)?.checked_add(right)?;
        let out_h = padded_h.checked_sub(span(kernel_h, dilation_h)?)? / stride_h + 1;
        let out_w = padded_w.checked_sub(span(kernel_w, dilation_w)?)? / stride_w + 1;
        Some(Window {
            batch,
            in_h,
            in_w,
            out_h,
            out_w,
            kernel_h,
            kernel_w,
            stride_h,
            stride_w,
            dilation_h,
            dilation_w,
            pad_top: top,
            pad_left: left,
        })
    }

    /// The input row of tap `kh` for output row `oh`, if inside the input.
    #[inline(always)]
    pub(crate) fn in_row(&self, oh: usize, kh: usize) -> Option<usize> {
        (oh * self.stride_h + kh * self.dilation_h)
            .checked_sub(self.pad_top)
            .filter(|&h| h < self.in_h)
    }

    /// The input column of tap `kw` for output column `ow`, if inside the input.
    #[inline(always)]
    pub(crate) fn in_col(&self, ow: usize, kw: usize) -> Option<usize> {
        (ow * self.stride_w + kw * self.dilation_w)
            .checked_sub(self.pad_left)
            .filter(|&w| w < self.in_w)
    }

    /// The input row XNNPACK's max pooling reads for tap `kh` of output row `oh`: the
    /// tap's row when inside the input; a tap in the padding moves toward the input in
    /// steps of the dilation (onto another tap of the same window when there is one, so
    /// padding never wins), then clamps to the edge. The input must have rows.
    #[inline(always)]
    pub(crate) fn pool_row(&self, oh: usize, kh: usize) -> usize {
        let at = oh * self.stride_h + kh * self.dilation_h;
        toward_input(at, self.pad_top, self.in_h, self.dilation_h)
    }

    /// [`pool_row`](Self::pool_row) for columns.
    #[inline(always)]
    pub(crate) fn pool_col(&self, ow: usize, kw: usize) -> usize {
        let at = ow * self.stride_w + kw * self.dilation_w;
        toward_input(at, self.pad_left, self.in_w, self.dilation_w)
    }

    /// A 1x1 window with unit stride and no padding: the output pixels are the input's.
    /// The 1x1 window over `pixels` one-pixel images: a matrix product, one row per
    /// pixel (a FullyConnected seen as a convolution).
    pub(crate) fn pointwise(pixels: usize) -> Window {
        Window {
            batch: pixels,
            in_h: 1,
            in_w: 1,
            out_h: 1,
            out_w: 1,
            kernel_h: 1,
            kernel_w: 1,
            stride_h: 1,
            stride_w: 1,
            dilation_h: 1,
            dilation_w: 1,
            pad_top: 0,
            pad_left: 0,
        }
    }

    /// The output rows of all images (`batch * out_h`): the unit a step's work is cut
    /// into for threads, each band of rows writing its own run of the output.
    pub(crate) fn out_rows(&self) -> usize {
        self.batch * self.out_h
    }

    pub(crate) fn is_pointwise(&self) -> bool {
        self.kernel_h == 1
            && self.kernel_w == 1
            && self.stride_h == 1
            && self.stride_w == 1
            && self.pad_top == 0
            && self.pad_left == 0
            && self.out_h == self.in_h
            && self.out_w == self.in_w
    }
}

/// Padded position `at` (before the `pad` leading positions come the input's `len`) moved
/// into the input in steps of `step`, then clamped: XNNPACK's max-pooling indirection in
/// closed form (its loops step one dilation at a time).
#[inline(always)]
fn toward_input(mut at: usize, pad: usize, len: usize, step: usize) -> usize {
    if at < pad {
        at += (pad - at).div_ceil(step) * step;
    }
    let end = len + pad;
    if at >= end {
        at = at.saturating_sub((at - end + 1).div_ceil(step) * step);
    }
    at.saturating_sub(pad).min(len - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// XNNPACK's stepping, one dilation at a time.
    fn stepping(mut at: usize, pad: usize, len: usize, step: usize) -> usize {
        while at < pad {
            at += step;
        }
        while at >= len + pad {
            at = at.saturating_sub(step);
        }
        at.saturating_sub(pad).min(len - 1)
    }

    #[test]
    fn padded_taps_move_into_the_input_as_xnnpack_steps_them() {
        for len in 1..6 {
            for pad in 0..5 {
                for step in 1..5 {
                    for at in 0..(len + 2 * pad + 3 * step) {
                        assert_eq!(
                            toward_input(at, pad, len, step),
                            stepping(at, pad, len, step),
                            "at {at} pad {pad} len {len} step {step}"
                        );
                    }
                }
            }
        }
        // Undilated: the nearest edge.
        assert_eq!(toward_input(0, 2, 5, 1), 0);
        assert_eq!(toward_input(8, 2, 5, 1), 4);
        // Dilation 2 from -1 lands on input 1, the window's next tap.
        assert_eq!(toward_input(1, 2, 5, 2), 1);
    }
}
