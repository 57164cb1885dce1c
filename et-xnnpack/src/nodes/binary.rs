//! The two-input elementwise kinds with NumPy broadcasting: Add, Subtract, Multiply, Div,
//! Minimum, Maximum and PReLU (`x` where `x >= 0`, else `x * slope`), each one arm of
//! `run`; the fused output range applies after it.

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use super::bands::{elementwise, Shapes};
use super::quantized::Quantized;
use crate::builder::{check_flags, other_family, Builder};
use crate::compute::broadcast::{broadcast_shape, zip_broadcast};
use crate::compute::clamp::Clamp;
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::Shape;

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
) -> Result<Step<Binary>, DelegateError> {
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
        params: Binary {
            a: x,
            b: y,
            output,
            op,
            clamp: Clamp::of(node),
        },
    })
}

macro_rules! kinds {
    ($($name:ident => $op:ident;)*) => {$(
        pub(super) fn $name(
            b: &mut Builder<'_, '_>,
            node: &NodeView<'_>,
        ) -> Result<Step<Binary>, DelegateError> {
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
pub(super) fn prepare_add_qint8(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Quantized>, DelegateError> {
    type N<'a> = xf::_XNNNode2x1<'a>;
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let x = b.read_any(node.u32(N::VT_INPUT1_ID))?;
    let y = b.read_any(node.u32(N::VT_INPUT2_ID))?;
    let output = b.write_any(node.u32(N::VT_OUTPUT_ID), &[x, y])?;
    if b.value(x).elem == Elem::F32 {
        return Err(other_family(b));
    }
    super::quantized::prepare_add(b, node, (x, y, output), false)
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

fn run(p: &Binary, frame: &Frame<'_>) -> KernelResult {
    let ([x, y], out) = frame.operands([p.a, p.b], p.output)?;
    let shapes = (frame.shape(p.a), frame.shape(p.b), frame.shape(p.output));
    let (op, clamp) = (p.op, p.clamp);
    elementwise(frame, (x, y), out, shapes, |x, y, out, shapes| {
        compute(op, x, y, out, shapes);
        clamp.apply(out);
    })
}

/// `op` of the broadcast inputs into `out`, before the clamp; with AVX2 where the CPU
/// has it (the same operations eight lanes at a time, so the same floats).
fn compute(op: BinaryOp, x: &[f32], y: &[f32], out: &mut [f32], shapes: Shapes<'_>) {
    #[cfg(target_arch = "x86_64")]
    if et_ops::gemm::avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 (checked just now); the function is safe code.
        unsafe { compute_avx2(op, x, y, out, shapes) };
        return;
    }
    compute_with(op, x, y, out, shapes);
}

/// [`compute_with`] compiled for AVX2, which the compiler vectorizes eight wide.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn compute_avx2(op: BinaryOp, x: &[f32], y: &[f32], out: &mut [f32], shapes: Shapes<'_>) {
    compute_with(op, x, y, out, shapes);
}

#[inline(always)]
fn compute_with(op: BinaryOp, x: &[f32], y: &[f32], out: &mut [f32], shapes: Shapes<'_>) {
    match op {
        BinaryOp::Add => apply(x, y, out, shapes, |a, b| a + b),
        BinaryOp::Subtract => apply(x, y, out, shapes, |a, b| a - b),
        BinaryOp::Multiply => apply(x, y, out, shapes, |a, b| a * b),
        BinaryOp::Div => apply(x, y, out, shapes, |a, b| a / b),
        BinaryOp::Minimum => apply(x, y, out, shapes, f32::min),
        BinaryOp::Maximum => apply(x, y, out, shapes, f32::max),
        BinaryOp::PRelu => apply(x, y, out, shapes, |a, s| if a >= 0.0 { a } else { a * s }),
    }
}

#[inline(always)]
fn apply(x: &[f32], y: &[f32], out: &mut [f32], shapes: Shapes<'_>, f: impl Fn(f32, f32) -> f32) {
    zip_broadcast(x, y, out, shapes, f);
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::values::Shape;
    use std::{vec, vec::Vec};

    type Reference = fn(f32, f32) -> f32;

    /// Element `flat` of the output, read from an input of sizes `dims` broadcast to
    /// `out` (sizes aligned at the right; a size-1 dim repeats).
    fn pick(v: &[f32], dims: &[usize], out: &[usize], flat: usize) -> f32 {
        let (mut rem, mut index, mut stride) = (flat, 0, 1);
        for d in (0..out.len()).rev() {
            let c = rem % out[d];
            rem /= out[d];
            let Some(k) = (d + dims.len()).checked_sub(out.len()) else {
                continue;
            };
            index += if dims[k] == 1 { 0 } else { c * stride };
            stride *= dims[k];
        }
        v[index]
    }

    #[test]
    fn minimum_maximum_and_prelu_broadcast_like_numpy() {
        let cases: [(&[usize], &[usize], &[usize]); 4] = [
            (&[2, 3, 4], &[2, 3, 4], &[2, 3, 4]),
            (&[2, 3, 4], &[4], &[2, 3, 4]),
            (&[1, 3, 1], &[2, 1, 5], &[2, 3, 5]),
            (&[1, 4, 3, 2], &[4, 1, 1], &[1, 4, 3, 2]),
        ];
        let ops: [(BinaryOp, Reference); 3] = [
            (BinaryOp::Minimum, |a, b| if a < b { a } else { b }),
            (BinaryOp::Maximum, |a, b| if a > b { a } else { b }),
            (BinaryOp::PRelu, |a, s| if a < 0.0 { a * s } else { a }),
        ];
        for (xs, ys, os) in cases {
            let nx: usize = xs.iter().product();
            let ny: usize = ys.iter().product();
            let x: Vec<f32> = (0..nx).map(|i| (i as f32 * 0.37).sin() * 3.0).collect();
            let y: Vec<f32> = (0..ny).map(|i| (i as f32 * 0.91).cos() * 2.0).collect();
            let shapes = (
                Shape::new(xs).unwrap(),
                Shape::new(ys).unwrap(),
                Shape::new(os).unwrap(),
            );
            for (op, reference) in ops {
                let mut out = vec![f32::NAN; os.iter().product()];
                compute(op, &x, &y, &mut out, (&shapes.0, &shapes.1, &shapes.2));
                for (i, &got) in out.iter().enumerate() {
                    let want = reference(pick(&x, xs, os, i), pick(&y, ys, os, i));
                    assert_eq!(got, want, "{op:?} {xs:?} {ys:?} at {i}");
                }
            }
        }
    }
}
