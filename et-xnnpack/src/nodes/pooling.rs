//! What the pooling kinds (MaxPooling2d, AvgPooling2d) share: their window's fields and
//! the window's geometry over an NHWC input, checked against the output.

use et_runtime::backend::DelegateError;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::Builder;
use crate::compute::window::Window;

/// `XNN_FLAG_KEEP_DIMS`: the output keeps the pooled dims as size 1.
pub(super) const KEEP_DIMS: u32 = 0x40;

type P<'a> = xf::_XNNPooling2D<'a>;

const POOL_WINDOW: [u16; 10] = [
    P::VT_PADDING_TOP,
    P::VT_PADDING_RIGHT,
    P::VT_PADDING_BOTTOM,
    P::VT_PADDING_LEFT,
    P::VT_POOLING_HEIGHT,
    P::VT_POOLING_WIDTH,
    P::VT_STRIDE_HEIGHT,
    P::VT_STRIDE_WIDTH,
    P::VT_DILATION_HEIGHT,
    P::VT_DILATION_WIDTH,
];

/// The window of the node over `input`, checked against `output`'s sizes, and the
/// channel count.
pub(super) fn geometry(
    b: &Builder<'_, '_>,
    node: &NodeView<'_>,
    input: u32,
    output: u32,
) -> Result<(Window, usize), DelegateError> {
    let (is, os) = (b.shape(input), b.shape(output));
    if is.rank() != 4 {
        return Err(b.invalid("the input is not 4-D (NHWC)"));
    }
    let [batch, in_h, in_w, channels] = [is.dims()[0], is.dims()[1], is.dims()[2], is.dims()[3]];
    let window = Window::new(node, POOL_WINDOW, batch, in_h, in_w)
        .ok_or_else(|| b.invalid("the pooling window is empty or larger than the padded input"))?;
    if os.dims() != [batch, window.out_h, window.out_w, channels] {
        return Err(b.invalid("the output's sizes differ from what the window gives"));
    }
    Ok((window, channels))
}
