//! Multiply and Subtract on qint8 values, with NumPy broadcasting, in XNNPACK's integer
//! arithmetic: Multiply is `compute::qmul`; Subtract is the quantized Add with the second
//! input's multiplier negated (`quantized::prepare_add`), as XNNPACK runs it.

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use super::quantized::{checked_range, qs8, Quantized};
use crate::builder::{check_flags, other_family, Builder};
use crate::compute::qelementwise::check_broadcast;
use crate::compute::qmul::{self, MulParams};
use crate::elem::Elem;
use crate::frame::{Frame, Step};

#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantizedMul {
    a: u32,
    b: u32,
    output: u32,
    params: MulParams,
}

type N<'a> = xf::_XNNNode2x1<'a>;

/// The node's two inputs and output, in the qint8 family, sizes checked to broadcast.
fn operands(b: &mut Builder<'_, '_>, node: &NodeView<'_>) -> Result<[u32; 3], DelegateError> {
    check_flags(b, node.u32(N::VT_FLAGS), 0)?;
    let x = b.read_any(node.u32(N::VT_INPUT1_ID))?;
    let y = b.read_any(node.u32(N::VT_INPUT2_ID))?;
    let output = b.write_any(node.u32(N::VT_OUTPUT_ID), &[x, y])?;
    if b.value(x).elem == Elem::F32 {
        return Err(other_family(b));
    }
    check_broadcast(&b.shape(x), &b.shape(y), &b.shape(output))
        .map_err(|message| b.invalid(message))?;
    Ok([x, y, output])
}

pub(super) fn prepare_multiply(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<QuantizedMul>, DelegateError> {
    let [x, y, output] = operands(b, node)?;
    let (qa, qb, qy) = (qs8(b, x)?, qs8(b, y)?, qs8(b, output)?);
    let clamp = checked_range(b, node)?;
    let params = MulParams::new(qa, qb, qy, clamp.min, clamp.max).ok_or_else(|| {
        b.fail(
            Error::NotSupported,
            "a qint8 Multiply whose product to output scale ratio is outside [2^-16, 2^8) (XNNPACK's range)",
        )
    })?;
    Ok(Step {
        run: run_multiply,
        params: QuantizedMul {
            a: x,
            b: y,
            output,
            params,
        },
    })
}

pub(super) fn prepare_subtract(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Quantized>, DelegateError> {
    let operands = operands(b, node)?;
    super::quantized::prepare_add(b, node, operands.into(), true)
}

fn run_multiply(p: &QuantizedMul, frame: &Frame<'_>) -> KernelResult {
    let (sa, sb, so) = (frame.shape(p.a), frame.shape(p.b), frame.shape(p.output));
    let (a, b) = (frame.input::<i8>(p.a)?, frame.input::<i8>(p.b)?);
    let out = frame.output::<i8>(p.output)?;
    #[cfg(target_arch = "x86_64")]
    if et_ops::gemm::avx2_fma_available() {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above); the function only
        // compiles the same safe code for that instruction set.
        unsafe { qmul::mul_avx2(&p.params, (a, b, out), (&sa, &sb, &so)) };
        return Ok(());
    }
    qmul::mul(&p.params, (a, b, out), (&sa, &sb, &so));
    Ok(())
}
