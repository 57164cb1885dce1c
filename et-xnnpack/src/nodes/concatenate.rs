//! Concatenate2 to Concatenate5: the inputs joined along `axis`. The qint8 family moves
//! bytes: XNNPACK defines it only when every input has the output's scale and zero
//! point (it refuses others at definition, so no program it runs requantizes here).

use et_runtime::backend::DelegateError;
use et_runtime::KernelResult;
use et_xnnpack_schema::fields as xf;
use et_xnnpack_schema::NodeView;

use crate::builder::{check_flags, other_family, Builder};
use crate::elem::Elem;
use crate::frame::{Frame, Step};
use crate::values::Shape;

type C<'a> = xf::_XNNCat<'a>;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Concat {
    inputs: [u32; 5],
    count: usize,
    output: u32,
    /// Elements before the axis (outer) and bytes per input slab (its axis size times
    /// inner, times the element size).
    outer: usize,
    slabs: [usize; 5],
    axis: usize,
}

impl Concat {
    /// The output value and its sizes for this execute's input sizes: the first input's
    /// outside the axis. Only the dims outside the axis may be dynamic (the slabs along
    /// it are planned).
    pub(crate) fn reshape(
        &self,
        shape: &dyn Fn(u32) -> Shape,
    ) -> Result<(u32, Shape), &'static str> {
        let first = shape(self.inputs[0]);
        let mut out = shape(self.output);
        for k in 0..self.count {
            let s = shape(self.inputs[k]);
            if s.rank() != out.rank()
                || (0..s.rank()).any(|d| d != self.axis && s.dims()[d] != first.dims()[d])
            {
                return Err("Concatenate: the inputs' dynamic sizes differ outside the axis");
            }
        }
        for d in 0..out.rank() {
            if d != self.axis {
                out.set(d, first.dims()[d]);
            }
        }
        let planned: usize = (0..self.count)
            .map(|k| shape(self.inputs[k]).dims()[self.axis])
            .sum();
        if planned != out.dims()[self.axis] {
            return Err(
                "Concatenate: a dynamic size along the concatenation axis is not supported",
            );
        }
        Ok((self.output, out))
    }
}

/// The fp32 family, or (`QUANTIZED`) the qint8 one.
fn prepare<const QUANTIZED: bool>(
    b: &mut Builder<'_, '_>,
    node: &NodeView<'_>,
    count: usize,
) -> Result<Step<Concat>, DelegateError> {
    check_flags(b, node.u32(C::VT_FLAGS), 0)?;
    let fields = [
        C::VT_INPUT1_ID,
        C::VT_INPUT2_ID,
        C::VT_INPUT3_ID,
        C::VT_INPUT4_ID,
        C::VT_INPUT5_ID,
    ];
    let mut inputs = [0u32; 5];
    for k in 0..count {
        inputs[k] = b.read_any(node.u32(fields[k]))?;
    }
    let output = b.write_any(node.u32(C::VT_OUTPUT_ID), &inputs[..count])?;
    if (b.value(output).elem == Elem::F32) == QUANTIZED {
        return Err(other_family(b));
    }
    let mut bytes = false;
    for &input in &inputs[..count] {
        bytes = super::copy::same_plain_elem(b, input, output)?;
    }
    let elem_size = if bytes { 1 } else { 4 };
    // Unused slots repeat the first input, so every slot names a value the step reads.
    for k in count..5 {
        inputs[k] = inputs[0];
    }
    let os = b.shape(output);
    let axis = node.u32(C::VT_AXIS) as usize;
    if axis >= os.rank() {
        return Err(b.invalid("the axis is past the output's rank"));
    }
    let inner: usize = os.dims()[axis + 1..].iter().product();
    let mut slabs = [0usize; 5];
    let mut total = 0;
    for k in 0..count {
        let s = b.shape(inputs[k]);
        let same_elsewhere = s.rank() == os.rank()
            && (0..s.rank()).all(|d| d == axis || s.dims()[d] == os.dims()[d]);
        if !same_elsewhere {
            return Err(b.invalid("an input differs from the output outside the axis"));
        }
        slabs[k] = s.dims()[axis] * inner * elem_size;
        total += s.dims()[axis];
    }
    if total != os.dims()[axis] {
        return Err(b.invalid("the inputs' sizes along the axis do not add up to the output's"));
    }
    Ok(Step {
        run,
        params: Concat {
            inputs,
            count,
            output,
            outer: os.dims()[..axis].iter().product(),
            slabs,
            axis,
        },
    })
}

macro_rules! kinds {
    ($($name:ident => $n:literal;)*) => {$(
        pub(super) fn $name<const QUANTIZED: bool>(
            b: &mut Builder<'_, '_>,
            node: &NodeView<'_>,
        ) -> Result<Step<Concat>, DelegateError> {
            prepare::<QUANTIZED>(b, node, $n)
        }
    )*};
}

kinds! {
    prepare2 => 2;
    prepare3 => 3;
    prepare4 => 4;
    prepare5 => 5;
}

fn run(p: &Concat, frame: &Frame<'_>) -> KernelResult {
    // Bytes, whatever the element type: the slabs are counted in bytes.
    let mut srcs: [&[u8]; 5] = [&[]; 5];
    for (src, &v) in srcs.iter_mut().zip(&p.inputs) {
        *src = frame.input::<u8>(v)?;
    }
    let out = frame.output::<u8>(p.output)?;
    let row: usize = p.slabs[..p.count].iter().sum();
    // Fewer outer slabs than planned under a dynamic input.
    let outer = out.len().checked_div(row).unwrap_or(p.outer);
    for o in 0..outer {
        let mut at = o * row;
        for (src, &slab) in srcs.iter().zip(&p.slabs).take(p.count) {
            out[at..at + slab].copy_from_slice(&src[o * slab..(o + 1) * slab]);
            at += slab;
        }
    }
    Ok(())
}
