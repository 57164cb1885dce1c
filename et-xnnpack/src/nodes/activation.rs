//! The one-input elementwise kinds (activations and math): Clamp, Abs, Negate, Square,
//! SquareRoot, ReciprocalSquareRoot, Exp, Log, Floor, Ceiling, Sigmoid, Tanh, Gelu,
//! Hardswish, Sin, Cos, ELU and LeakyReLU, each one arm of `run`; the fused output range
//! applies after it.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use super::quantized::Quantized;
use crate::builder::{check_flags, other_family, Builder};
use crate::compute::clamp::Clamp;
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::Shape;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum UnaryOp {
    Clamp,
    Abs,
    Negate,
    Square,
    SquareRoot,
    ReciprocalSquareRoot,
    Exp,
    Log,
    Floor,
    Ceiling,
    Sigmoid,
    Tanh,
    Gelu,
    Hardswish,
    Sin,
    Cos,
    Elu(f32),
    LeakyRelu(f32),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Unary {
    input: u32,
    output: u32,
    op: UnaryOp,
    clamp: Clamp,
}

fn prepare_with(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    op: UnaryOp,
    (input, output, flags): (u16, u16, u16),
) -> Result<Step<Unary>, DelegateError> {
    check_flags(b, node.u32(flags), 0)?;
    let input = b.read(node.u32(input))?;
    let output = b.write(node.u32(output), &[input])?;
    if b.shape(input) != b.shape(output) {
        return Err(b.invalid("the output's sizes differ from the input's"));
    }
    Ok(Step {
        run,
        params: Unary {
            input,
            output,
            op,
            clamp: Clamp::of(node),
        },
    })
}

type N1<'a> = xf::_XNNNode1x1<'a>;
const FIELDS_1X1: (u16, u16, u16) = (N1::VT_INPUT_ID, N1::VT_OUTPUT_ID, N1::VT_FLAGS);

macro_rules! simple {
    ($($name:ident => $op:expr;)*) => {$(
        pub(super) fn $name(
            b: &mut Builder<'_, '_>,
            node: &NodeView<'_>,
        ) -> Result<Step<Unary>, DelegateError> {
            prepare_with(b, node, $op, FIELDS_1X1)
        }
    )*};
}

simple! {
    prepare_abs => UnaryOp::Abs;
    prepare_negate => UnaryOp::Negate;
    prepare_square => UnaryOp::Square;
    prepare_sqrt => UnaryOp::SquareRoot;
    prepare_rsqrt => UnaryOp::ReciprocalSquareRoot;
    prepare_exp => UnaryOp::Exp;
    prepare_log => UnaryOp::Log;
    prepare_floor => UnaryOp::Floor;
    prepare_ceiling => UnaryOp::Ceiling;
    prepare_sigmoid => UnaryOp::Sigmoid;
    prepare_tanh => UnaryOp::Tanh;
    prepare_gelu => UnaryOp::Gelu;
    prepare_hardswish => UnaryOp::Hardswish;
    prepare_sin => UnaryOp::Sin;
    prepare_cos => UnaryOp::Cos;
}

/// Clamp on fp32.
pub(super) fn prepare_clamp(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Unary>, DelegateError> {
    prepare_with(b, node, UnaryOp::Clamp, FIELDS_1X1)
}

/// Clamp on qint8: the integer clamp of `quantized::prepare_clamp`.
pub(super) fn prepare_clamp_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Quantized>, DelegateError> {
    let input = b.read_any(node.u32(N1::VT_INPUT_ID))?;
    if b.value(input).elem == Elem::F32 {
        return Err(other_family(b));
    }
    check_flags(b, node.u32(N1::VT_FLAGS), 0)?;
    let output = b.write_any(node.u32(N1::VT_OUTPUT_ID), &[input])?;
    super::quantized::prepare_clamp(b, node, input, output)
}

pub(super) fn prepare_elu(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Unary>, DelegateError> {
    type E<'a> = xf::XNNELU<'a>;
    let alpha = node.f32(E::VT_ALPHA);
    prepare_with(
        b,
        node,
        UnaryOp::Elu(alpha),
        (E::VT_INPUT_ID, E::VT_OUTPUT_ID, E::VT_FLAGS),
    )
}

pub(super) fn prepare_leaky_relu(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Unary>, DelegateError> {
    type L<'a> = xf::XNNLeakyReLU<'a>;
    let slope = node.f32(L::VT_NEGATIVE_SLOPE);
    let fields = (L::VT_INPUT_ID, L::VT_OUTPUT_ID, L::VT_FLAGS);
    prepare_with(b, node, UnaryOp::LeakyRelu(slope), fields)
}

impl Unary {
    /// The output value and its sizes for this execute's input sizes: the input's.
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        Ok((self.output, shape(self.input)))
    }
}

fn run(p: &Unary, frame: &Frame<'_>) -> KernelResult {
    let ([x], out) = frame.operands([p.input], p.output)?;
    compute(p.op, x, out);
    p.clamp.apply(out);
    Ok(())
}

/// `op` of each element of `x` into `out`, before the clamp.
fn compute(op: UnaryOp, x: &[f32], out: &mut [f32]) {
    use et_ops::vmath;
    // The two have the same sizes; the slice functions want the same lengths.
    let n = x.len().min(out.len());
    let (x, out) = (&x[..n], &mut out[..n]);
    // One match outside the loop, so each op's loop is a plain (vectorizable) map; the
    // transcendental ones run et-ops' vectorized functions.
    match op {
        UnaryOp::Clamp => map(x, out, |v| v),
        UnaryOp::Abs => map(x, out, f32::abs),
        UnaryOp::Negate => map(x, out, |v| -v),
        UnaryOp::Square => map(x, out, |v| v * v),
        UnaryOp::SquareRoot => map(x, out, libm::sqrtf),
        UnaryOp::ReciprocalSquareRoot => map(x, out, |v| 1.0 / libm::sqrtf(v)),
        UnaryOp::Exp => vmath::exp(x, out),
        UnaryOp::Log => map(x, out, libm::logf),
        UnaryOp::Floor => map(x, out, libm::floorf),
        UnaryOp::Ceiling => map(x, out, libm::ceilf),
        UnaryOp::Sigmoid => vmath::sigmoid(x, out),
        UnaryOp::Tanh => vmath::tanh(x, out),
        UnaryOp::Gelu => vmath::gelu(x, out),
        UnaryOp::Hardswish => vmath::hardswish(x, out),
        UnaryOp::Sin => map(x, out, libm::sinf),
        UnaryOp::Cos => map(x, out, libm::cosf),
        UnaryOp::Elu(alpha) => vmath::elu(x, alpha, out),
        UnaryOp::LeakyRelu(slope) => map(x, out, |v| if v >= 0.0 { v } else { v * slope }),
    }
}

#[inline(always)]
fn map(x: &[f32], out: &mut [f32], f: impl Fn(f32) -> f32) {
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    type Reference = fn(f64) -> f64;

    const INPUTS: [f32; 16] = [
        0.0,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -2.5,
        3.0,
        -7.25,
        1e-30,
        88.0,
        89.0,
        -100.0,
        1e30,
        0.1,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];

    fn same(got: f32, want: f64) -> bool {
        if want.is_nan() {
            return got.is_nan();
        }
        let want = want as f32;
        if want.is_infinite() || want == 0.0 {
            return got == want && got.is_sign_negative() == want.is_sign_negative();
        }
        (got - want).abs() <= 2e-7 * want.abs().max(f32::MIN_POSITIVE)
    }

    #[test]
    fn math_kinds_match_the_f64_definitions() {
        let ops: [(UnaryOp, Reference); 11] = [
            (UnaryOp::Negate, |v| -v),
            (UnaryOp::Square, |v| v * v),
            (UnaryOp::SquareRoot, f64::sqrt),
            (UnaryOp::ReciprocalSquareRoot, |v| 1.0 / v.sqrt()),
            (UnaryOp::Abs, f64::abs),
            (UnaryOp::Floor, f64::floor),
            (UnaryOp::Ceiling, f64::ceil),
            (UnaryOp::Log, f64::ln),
            (UnaryOp::Exp, f64::exp),
            (UnaryOp::Sin, f64::sin),
            (UnaryOp::Cos, f64::cos),
        ];
        for (op, reference) in ops {
            let mut out = [0.0f32; INPUTS.len()];
            compute(op, &INPUTS, &mut out);
            let bad: Vec<_> = INPUTS
                .iter()
                .zip(&out)
                .filter(|&(&x, &y)| {
                    // sin and cos of huge or infinite arguments: only NaN-ness is defined.
                    let trig = matches!(op, UnaryOp::Sin | UnaryOp::Cos);
                    !(same(y, reference(f64::from(x))) || trig && x.abs() > 1e6 && !x.is_infinite())
                })
                .collect();
            assert!(bad.is_empty(), "{op:?}: {bad:?}");
        }
    }
}
