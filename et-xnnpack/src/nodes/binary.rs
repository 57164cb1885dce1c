//! The two-input elementwise kinds with NumPy broadcasting: Add, Subtract, Multiply, Div,
//! Minimum, Maximum and PReLU (`x` where `x >= 0`, else `x * slope`), each one arm of
//! `run`; the fused output range applies after it.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_schema::xnnpack::fields as xf;
use et_schema::xnnpack::NodeView;

use super::{check_flags, register, wrong_params, Clamp, Params, Step};
use crate::compute::broadcast::{broadcast_shape, zip_broadcast};
use crate::exec::Frame;
use crate::plan::{Builder, Elem, Shape};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Div,
    Minimum,
    Maximum,
    PRelu,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Binary {
    a: u32,
    b: u32,
    output: u32,
    op: BinaryOp,
    clamp: Clamp,
}

fn prepare(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    op: BinaryOp,
) -> Result<Step, DelegateError> {
    type N<'a> = xf::_XNNNode2x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let x = b.read(node.u32(N::VT_INPUT1_ID))?;
    let y = b.read(node.u32(N::VT_INPUT2_ID))?;
    let output = b.write(node.u32(N::VT_OUTPUT_ID), &[x, y])?;
    if broadcast_shape(&b.shape(x), &b.shape(y)) != Some(b.shape(output)) {
        return Err(b.invalid("the output's sizes are not the broadcast of the inputs'"));
    }
    Ok(Step {
        run,
        params: Params::Binary(Binary {
            a: x,
            b: y,
            output,
            op,
            clamp: Clamp::of(node),
        }),
    })
}

macro_rules! kinds {
    ($($name:ident => $op:ident;)*) => {$(
        fn $name(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step, DelegateError> {
            prepare(b, node, BinaryOp::$op)
        }
    )*};
}

kinds! {
    prepare_add => Add;
    prepare_subtract => Subtract;
    prepare_multiply => Multiply;
    prepare_div => Div;
    prepare_minimum => Minimum;
    prepare_maximum => Maximum;
    prepare_prelu => PRelu;
}

/// Add on qint8 (the only binary kind with a quantized family): `quantized::prepare_add`.
fn prepare_add_qint8(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<Step, DelegateError> {
    type N<'a> = xf::_XNNNode2x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let x = b.read_any(node.u32(N::VT_INPUT1_ID))?;
    let y = b.read_any(node.u32(N::VT_INPUT2_ID))?;
    let output = b.write_any(node.u32(N::VT_OUTPUT_ID), &[x, y])?;
    if b.value(x).elem == Elem::F32 {
        return Err(super::other_family(b));
    }
    super::quantized::prepare_add(b, node, (x, y, output), false)
}

register! {
    XNNAdd: fp32 => prepare_add;
    XNNAdd: qint8 => prepare_add_qint8;
    XNNSubtract: fp32 => prepare_subtract;
    XNNMultiply: fp32 => prepare_multiply;
    XNNDiv: fp32 => prepare_div;
    XNNMinimum: fp32 => prepare_minimum;
    XNNMaximum: fp32 => prepare_maximum;
    XNNPReLU: fp32 => prepare_prelu;
}

impl Binary {
    /// The output value and its sizes for this execute's input sizes: the inputs'
    /// broadcast.
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        let out = crate::dynamic::broadcast(shape(self.a), shape(self.b), shape(self.output))?;
        Ok((self.output, out))
    }
}

fn run(step: &Step, frame: &Frame<'_>) -> KernelResult {
    let Params::Binary(p) = step.params else {
        return Err(wrong_params());
    };
    let ([x, y], out) = frame.operands([p.a, p.b], p.output)?;
    let (sx, sy, so) = (frame.shape(p.a), frame.shape(p.b), frame.shape(p.output));
    match p.op {
        BinaryOp::Add => apply(x, y, out, (&sx, &sy, &so), |a, b| a + b),
        BinaryOp::Subtract => apply(x, y, out, (&sx, &sy, &so), |a, b| a - b),
        BinaryOp::Multiply => apply(x, y, out, (&sx, &sy, &so), |a, b| a * b),
        BinaryOp::Div => apply(x, y, out, (&sx, &sy, &so), |a, b| a / b),
        BinaryOp::Minimum => apply(x, y, out, (&sx, &sy, &so), f32::min),
        BinaryOp::Maximum => apply(x, y, out, (&sx, &sy, &so), f32::max),
        BinaryOp::PRelu => apply(
            x,
            y,
            out,
            (&sx, &sy, &so),
            |a, s| if a >= 0.0 { a } else { a * s },
        ),
    }
    p.clamp.apply(out);
    Ok(())
}

type Shapes<'s> = (
    &'s crate::plan::Shape,
    &'s crate::plan::Shape,
    &'s crate::plan::Shape,
);

#[inline(always)]
fn apply(x: &[f32], y: &[f32], out: &mut [f32], shapes: Shapes<'_>, f: impl Fn(f32, f32) -> f32) {
    zip_broadcast(x, y, out, shapes, f);
}
