//! StaticReshape and Copy: the same elements in the same order, under the output's sizes.
//! A reshape's `new_shape` must agree with the output value's sizes (a 0 stands for the
//! one dim XNNPACK infers).

use et_runtime::backend::DelegateError;
use et_runtime::{Error, KernelResult};
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, Builder};
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::Shape;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Copy {
    input: u32,
    output: u32,
}

/// Checks that a value moved as is keeps its meaning: input and output of the same type
/// and quantization, fp32 or 8-bit per tensor (the types whose bytes are just their
/// elements). Whether the elements are single bytes.
pub(crate) fn same_plain_elem(
    b: &Builder<'_, '_>,
    input: u32,
    output: u32,
) -> Result<bool, DelegateError> {
    let elem = b.value(input).elem;
    if elem != b.value(output).elem {
        return Err(b.fail(
            Error::NotSupported,
            "the input and output datatypes or quantization differ (a data move cannot requantize)",
        ));
    }
    match elem {
        Elem::F32 => Ok(false),
        Elem::Qs8(_) | Elem::Qu8(_) => Ok(true),
        _ => Err(b.fail(
            Error::NotSupported,
            "moving values of this datatype is not implemented (fp32, qint8 and quint8 are)",
        )),
    }
}

fn prepare_with(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    (input, output, flags): (u16, u16, u16),
) -> Result<Step<Copy>, DelegateError> {
    check_flags(b, node.u32(flags), 0)?;
    let input = b.read_any(node.u32(input))?;
    let output = b.write_any(node.u32(output), &[input])?;
    same_plain_elem(b, input, output)?;
    if b.value(input).numel() != b.value(output).numel() {
        return Err(b.invalid("the output has a different number of elements than the input"));
    }
    Ok(Step {
        run,
        params: Copy { input, output },
    })
}

pub(super) fn prepare_reshape(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Copy>, DelegateError> {
    type R<'a> = xf::XNNStaticReshape<'a>;
    let step = prepare_with(b, node, (R::VT_INPUT_ID, R::VT_OUTPUT_ID, R::VT_FLAGS))?;
    let new_shape = node.table.vector(R::VT_NEW_SHAPE);
    let out = b.shape(step.params.output);
    let agrees = new_shape.is_some_and(|v| {
        v.len() == out.rank()
            && (0..v.len()).all(|i| {
                let d = v.uint(i, 4) as usize;
                d == 0 || d == out.dims()[i]
            })
    });
    if !agrees {
        return Err(b.invalid("the reshape's new_shape disagrees with its output's sizes"));
    }
    Ok(step)
}

pub(super) fn prepare_copy(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
) -> Result<Step<Copy>, DelegateError> {
    type N<'a> = xf::_XNNNode1x1<'a>;
    prepare_with(b, node, (N::VT_INPUT_ID, N::VT_OUTPUT_ID, N::VT_FLAGS))
}

impl Copy {
    /// The output value and its sizes for this execute's input sizes (see
    /// [`crate::dynamic::reshaped`]).
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        let out = crate::dynamic::reshaped(shape(self.input), shape(self.output))?;
        Ok((self.output, out))
    }
}

fn run(p: &Copy, frame: &Frame<'_>) -> KernelResult {
    // Bytes: the same for every element type this runs on (see `same_plain_elem`).
    let x = frame.input::<u8>(p.input)?;
    let out = frame.output::<u8>(p.output)?;
    out.copy_from_slice(x);
    Ok(())
}
