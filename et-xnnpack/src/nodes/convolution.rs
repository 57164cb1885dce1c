//! What the convolution kinds share: a convolution node's values and window, read and
//! checked once for Conv2d (both families) and DepthwiseConv2d, whose quantized forms
//! and a qint8 FullyConnected (as the pointwise convolution of its rows) are prepared
//! from the same [`ConvNode`]; and a bias constant's data.

use et_runtime::backend::DelegateError;
use et_runtime::Error;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{NodeView, INVALID_ID};

use crate::builder::{check_flags, Builder};
use crate::compute::window::Window;
use crate::elem::Elem;

pub(super) type N<'a> = xf::_XNNNodeConv<'a>;

/// The node fields of a convolution's window, in [`Window::new`]'s order.
const CONV_WINDOW: [u16; 10] = [
    N::VT_PADDING_TOP,
    N::VT_PADDING_RIGHT,
    N::VT_PADDING_BOTTOM,
    N::VT_PADDING_LEFT,
    N::VT_KERNEL_HEIGHT,
    N::VT_KERNEL_WIDTH,
    N::VT_SUBSAMPLING_HEIGHT,
    N::VT_SUBSAMPLING_WIDTH,
    N::VT_DILATION_HEIGHT,
    N::VT_DILATION_WIDTH,
];

/// What a convolution node reads and writes, checked: (input, output, filter, bias) value
/// indices and the window.
pub(crate) struct ConvNode {
    pub(crate) input: u32,
    pub(crate) output: u32,
    pub(crate) filter: u32,
    pub(crate) bias: Option<u32>,
    pub(crate) window: Window,
    pub(crate) groups: usize,
    pub(crate) group_in: usize,
    pub(crate) group_out: usize,
    /// The input is quantized (the quantized variants check the other values' types).
    pub(crate) quantized: bool,
}

/// Reads and checks a convolution node's values and geometry: NHWC input with
/// `groups * group_in` channels, output `[batch, out_h, out_w, groups * group_out]`,
/// constant filter and bias.
pub(crate) fn read_conv(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<ConvNode, DelegateError> {
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    if node.u32(N::VT_ADJUSTMENT_HEIGHT) != 0 || node.u32(N::VT_ADJUSTMENT_WIDTH) != 0 {
        return Err(b.invalid("a convolution has output adjustment (only transposed ones do)"));
    }
    let input = b.read_any(node.u32(N::VT_INPUT1_ID))?;
    let quantized = b.value(input).elem != Elem::F32;
    let filter = b.read_any(node.u32(N::VT_FILTER_ID))?;
    let bias_id = node.u32(N::VT_BIAS_ID);
    let bias = if bias_id == INVALID_ID {
        None
    } else {
        Some(b.read_any(bias_id)?)
    };
    let output = b.write_any(
        node.u32(N::VT_OUTPUT_ID),
        &[input, filter, bias.unwrap_or(filter)],
    )?;
    if !quantized {
        for v in [filter, output, bias.unwrap_or(filter)] {
            b.require_f32(v)?;
        }
    }
    let groups = node.u32(N::VT_GROUPS) as usize;
    let group_in = node.u32(N::VT_GROUP_INPUT_CHANNELS) as usize;
    let group_out = node.u32(N::VT_GROUP_OUTPUT_CHANNELS) as usize;
    let (is, os) = (b.shape(input), b.shape(output));
    if is.rank() != 4 || os.rank() != 4 {
        return Err(b.invalid("a convolution's input or output is not 4-D (NHWC)"));
    }
    let [batch, in_h, in_w, in_c] = [is.dims()[0], is.dims()[1], is.dims()[2], is.dims()[3]];
    let window = Window::new(node, CONV_WINDOW, batch, in_h, in_w).ok_or_else(|| {
        b.invalid("the convolution window is empty or larger than the padded input")
    })?;
    let channels_in = groups.checked_mul(group_in);
    let channels_out = groups.checked_mul(group_out);
    if groups == 0 || channels_in != Some(in_c) {
        return Err(b.invalid("the input channels differ from groups * group_input_channels"));
    }
    if os.dims() != [batch, window.out_h, window.out_w, channels_out.unwrap_or(0)] {
        return Err(b.invalid("the output's sizes differ from what the window and channels give"));
    }
    if !b.value(filter).is_constant() {
        return Err(b.fail(
            Error::NotSupported,
            "a filter computed at run time is not supported",
        ));
    }
    if let Some(bias) = bias {
        if !b.value(bias).is_constant() || b.shape(bias).numel() != channels_out {
            return Err(b.invalid("the bias is not a constant with one element per output channel"));
        }
    }
    Ok(ConvNode {
        input,
        output,
        filter,
        bias,
        window,
        groups,
        group_in,
        group_out,
        quantized,
    })
}

/// The constant data of a checked bias.
pub(crate) fn bias_ptr(
    b: &Builder<'_, '_>,
    bias: Option<u32>,
) -> Result<Option<*const f32>, DelegateError> {
    bias.map(|v| {
        b.constant(v)
            .map(|d| d.as_ptr())
            .ok_or_else(|| b.invalid("the bias is not 4-byte aligned"))
    })
    .transpose()
}
