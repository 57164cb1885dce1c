//! The qint8 family of ELU, Sigmoid, Tanh, Hardswish and LeakyReLU, as XNNPACK runs
//! them (`compute::lut`): the first four as a 256-entry table built at init from the
//! float function, LeakyReLU with its fixed-point kernel. The node's output range, when
//! it has one, clamps in int8.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::{Graph, NodeView};

use super::quantized::{checked_range, qs8};
use crate::builder::{check_flags, other_family, Builder};
use crate::compute::lut::{self, LeakyParams, LutOp};
use crate::compute::requant::quantize_bound;
use crate::elem::{Elem, Quant};
use crate::frame::{Frame, Step};

#[derive(Clone, Copy, Debug)]
pub(crate) enum QuantizedUnary {
    Lut {
        input: u32,
        output: u32,
        /// In method memory, built at init.
        table: &'static [i8; 256],
    },
    Leaky {
        input: u32,
        output: u32,
        params: LeakyParams,
    },
}

/// A unary node's input and output values, their quantization, and its output range
/// quantized.
type Operands = ([u32; 2], [Quant; 2], (i8, i8));

/// The node's input and output (same sizes, qint8), their quantization and the output
/// range quantized. `fields`: the input, output and flags fields of the kind's table.
fn operands(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    (input, output, flags): (u16, u16, u16),
) -> Result<Operands, DelegateError> {
    check_flags(b, node.u32(flags), 0)?;
    let input = b.read_any(node.u32(input))?;
    if b.value(input).elem == Elem::F32 {
        return Err(other_family(b));
    }
    let output = b.write_any(node.u32(output), &[input])?;
    let (x, y) = (qs8(b, input)?, qs8(b, output)?);
    if b.shape(input) != b.shape(output) {
        return Err(b.invalid("the output's sizes differ from the input's"));
    }
    let clamp = checked_range(b, node)?;
    let range = (
        quantize_bound(clamp.min, y.scale, y.zero_point) as i8,
        quantize_bound(clamp.max, y.scale, y.zero_point) as i8,
    );
    Ok(([input, output], [x, y], range))
}

fn prepare_lut(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    op: LutOp,
    fields: (u16, u16, u16),
) -> Result<Step<QuantizedUnary>, DelegateError> {
    let ([input, output], [x, y], range) = operands(b, node, fields)?;
    let table: &'static mut [i8; 256] = b
        .alloc::<i8>(256)?
        .try_into()
        .map_err(|_| b.fail(Error::Internal, "a lookup table of the wrong length"))?;
    *table = lut::table(op, x, y, range);
    Ok(Step {
        run,
        params: QuantizedUnary::Lut {
            input,
            output,
            table,
        },
    })
}

type N1<'a> = xf::_XNNNode1x1<'a>;
const FIELDS_1X1: (u16, u16, u16) = (N1::VT_INPUT_ID, N1::VT_OUTPUT_ID, N1::VT_FLAGS);

pub(super) fn prepare_sigmoid(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedUnary>, DelegateError> {
    prepare_lut(b, node, LutOp::Sigmoid, FIELDS_1X1)
}

pub(super) fn prepare_tanh(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedUnary>, DelegateError> {
    prepare_lut(b, node, LutOp::Tanh, FIELDS_1X1)
}

pub(super) fn prepare_hardswish(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedUnary>, DelegateError> {
    prepare_lut(b, node, LutOp::Hardswish, FIELDS_1X1)
}

pub(super) fn prepare_elu(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedUnary>, DelegateError> {
    type E<'a> = xf::XNNELU<'a>;
    // Any alpha: XNNPACK's definition checks none (a NaN entry rounds to 0, as there).
    let alpha = node.f32(E::VT_ALPHA);
    let fields = (E::VT_INPUT_ID, E::VT_OUTPUT_ID, E::VT_FLAGS);
    prepare_lut(b, node, LutOp::Elu(alpha), fields)
}

pub(super) fn prepare_leaky_relu(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedUnary>, DelegateError> {
    type L<'a> = xf::XNNLeakyReLU<'a>;
    let slope = node.f32(L::VT_NEGATIVE_SLOPE);
    let fields = (L::VT_INPUT_ID, L::VT_OUTPUT_ID, L::VT_FLAGS);
    let ([input, output], [x, y], range) = operands(b, node, fields)?;
    let params = LeakyParams::new(x, y, slope, range).ok_or_else(|| {
        b.fail(
            Error::NotSupported,
            "a qint8 LeakyReLU whose scale ratio or slope is outside XNNPACK's fixed-point range",
        )
    })?;
    Ok(Step {
        run,
        params: QuantizedUnary::Leaky {
            input,
            output,
            params,
        },
    })
}

/// The method memory a node's lookup table takes (LeakyReLU's fixed-point kernel takes
/// none; the bound covers every kind alike).
pub(super) fn table_bytes(_: &Graph<'_>, _: &NodeView<'_>) -> usize {
    256 + crate::builder::ALIGN
}

fn run(q: &QuantizedUnary, frame: &Frame<'_>) -> KernelResult {
    match *q {
        QuantizedUnary::Lut {
            input,
            output,
            table,
        } => {
            let x = frame.input::<i8>(input)?;
            lut::lookup(table, x, frame.output::<i8>(output)?);
        }
        QuantizedUnary::Leaky {
            input,
            output,
            params,
        } => {
            let x = frame.input::<i8>(input)?;
            let out = frame.output::<i8>(output)?;
            #[cfg(target_arch = "x86_64")]
            if et_ops::gemm::avx2_fma_available() {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above); the
                // function only compiles the same safe code for that instruction set.
                unsafe { lut::leaky_relu_avx2(&params, x, out) };
                return Ok(());
            }
            lut::leaky_relu(&params, x, out);
        }
    }
    Ok(())
}
