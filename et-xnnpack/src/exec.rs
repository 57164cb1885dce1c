//! Executing a plan: bind the call's tensors to the delegate's inputs and outputs, then
//! run the steps in order, each in a [`Frame`] over the plan's tables and the
//! execute's pool.

use core::ptr::NonNull;

use et_runtime::backend::KernelArgs;
use et_runtime::{Error, KernelContext, KernelError, KernelResult};

use crate::elem::Elem;
use crate::frame::Frame;
use crate::nodes::AnyStep;
use crate::plan::Plan;
use crate::values::{Shape, Storage, Value};

fn fail(error: Error, message: &'static str) -> KernelError {
    KernelError::new(error, message)
}

/// Binds the call's tensors: each delegate input must be a tensor of the value's dtype and
/// rank with sizes (in its dim order, as XNNPACK sees it) at most the graph's, the
/// outputs get the sizes the graph computes from those (resized when the inputs are
/// smaller: a dynamic shape), and no output may overlap an input or another output.
/// Visits only the externals (listed at init), not every value.
fn bind(plan: &Plan, args: &KernelArgs<'_>) -> KernelResult {
    if args.len() != plan.num_args {
        return Err(fail(
            Error::InvalidArgument,
            "the delegate call passes a different number of tensors than its graph has inputs and outputs",
        ));
    }
    let externals = plan.externals();
    let mut dynamic = false;
    for &v in externals {
        let value = plan.tables.value(v);
        if let Storage::Input { arg } = value.storage {
            let t = args.tensor(arg as usize)?;
            let shape = input_shape(t, value)?;
            dynamic |= shape != value.bound;
            let ptr = match value.elem {
                Elem::Qs8(_) => t.data::<i8>()?.as_ptr().cast::<u8>(),
                Elem::Qu8(_) => t.data::<u8>()?.as_ptr(),
                _ => t.data::<f32>()?.as_ptr().cast::<u8>(),
            }
            .cast_mut();
            // SAFETY: `v < num_values` (the builder lists value indices); the tables are
            // the plan's, written only here and at init, while execute holds the method
            // exclusively, and no reference into them is held across these writes.
            unsafe {
                (*plan.tables.values.as_ptr().add(v as usize)).shape = shape;
                *plan.tables.data.as_ptr().add(v as usize) = ptr;
            }
        }
    }
    reshape(plan, dynamic)?;
    for &v in externals {
        let value = plan.tables.value(v);
        if let Storage::Output { arg } = value.storage {
            let shape = value.shape;
            // SAFETY: the reference is dropped at the end of this block, before another
            // argument is taken or a step runs; overlaps are refused below.
            let t = unsafe { args.tensor_mut(arg as usize)? };
            if shape != value.bound {
                resize_to(t, &shape)?;
            }
            check_tensor(t, value)?;
            let ptr = match value.elem {
                Elem::Qs8(_) => t.data_mut::<i8>()?.as_mut_ptr().cast::<u8>(),
                Elem::Qu8(_) => t.data_mut::<u8>()?.as_mut_ptr(),
                _ => t.data_mut::<f32>()?.as_mut_ptr().cast::<u8>(),
            };
            // SAFETY: as for the inputs above.
            unsafe { *plan.tables.data.as_ptr().add(v as usize) = ptr };
        }
    }
    let range = |v: u32| {
        // SAFETY: as above; bound just now.
        let start = unsafe { *plan.tables.data.as_ptr().add(v as usize) } as usize;
        (start, start + plan.tables.value(v).bytes())
    };
    for (k, &a) in externals.iter().enumerate() {
        let a_is_output = matches!(plan.tables.value(a).storage, Storage::Output { .. });
        for &b in &externals[..k] {
            let b_is_output = matches!(plan.tables.value(b).storage, Storage::Output { .. });
            let ((s1, e1), (s2, e2)) = (range(a), range(b));
            if (a_is_output || b_is_output) && s1 < e2 && s2 < e1 {
                return Err(fail(
                    Error::InvalidArgument,
                    "a delegate output overlaps another of the call's tensors",
                ));
            }
        }
    }
    Ok(())
}

/// Sets every value that is not a delegate input to the sizes this execute gives it:
/// the planned ones, or with a `dynamic` input each node's output as its kind computes
/// it from its inputs' (see [`crate::dynamic`]).
fn reshape(plan: &Plan, dynamic: bool) -> KernelResult {
    for v in 0..plan.tables.num_values {
        // SAFETY: `v < num_values`; as in `bind`, nothing else refers into the table.
        let value = unsafe { &mut *plan.tables.values.as_ptr().add(v) };
        if !matches!(value.storage, Storage::Input { .. }) {
            value.shape = value.bound;
        }
    }
    if !dynamic {
        return Ok(());
    }
    let shape = |v: u32| plan.tables.value(v).shape;
    for s in 0..plan.num_steps {
        // SAFETY: `s < num_steps`, all written at init.
        let step = unsafe { &*plan.steps.as_ptr().add(s) };
        let reshaped = match step {
            AnyStep::Unary(step) => step.params.reshape(&shape),
            AnyStep::Binary(step) => step.params.reshape(&shape),
            AnyStep::FullyConnected(step) => step.params.reshape(&shape),
            AnyStep::QuantizedFc(step) => step.params.reshape(&shape),
            AnyStep::Copy(step) => step.params.reshape(&shape),
            AnyStep::Convert(step) => step.params.reshape(&shape),
            AnyStep::Concat(step) => step.params.reshape(&shape),
            _ => Err("a delegate node of this kind cannot run on a dynamic shape yet"),
        };
        let (out, sizes) = reshaped.map_err(|m| fail(Error::NotSupported, m))?;
        let bound = plan.tables.value(out).bound;
        let fits = sizes.rank() == bound.rank()
            && sizes.dims().iter().zip(bound.dims()).all(|(s, b)| s <= b);
        if !fits {
            return Err(fail(
                Error::InvalidArgument,
                "a node's dynamic output exceeds the delegate graph's bound",
            ));
        }
        // SAFETY: `out < num_values` (a step's value index); as above.
        unsafe { (*plan.tables.values.as_ptr().add(out as usize)).shape = sizes };
    }
    Ok(())
}

/// Refuses a delegate tensor whose dtype is not the one `value`'s datatype is passed as.
fn check_dtype(t: &et_runtime::Tensor, value: &Value) -> KernelResult {
    if Some(t.dtype()) != value.elem.external_dtype() {
        return Err(fail(
            Error::InvalidType,
            "a delegate tensor's dtype is not its graph value's (float32, or int8/uint8 for a quantized value)",
        ));
    }
    Ok(())
}

/// A delegate input's sizes, in the value's dim order: its value's dtype, the value's rank (a 0-dim
/// tensor counts as the one-element value the serializer writes), each size at most
/// the graph's.
fn input_shape(t: &et_runtime::Tensor, value: &Value) -> KernelResult<Shape> {
    check_dtype(t, value)?;
    let bound = value.bound;
    if t.dim() == 0 && bound.dims().iter().all(|&d| d == 1) {
        return Ok(bound);
    }
    let mut shape = bound;
    if t.dim() != bound.rank() {
        return Err(fail(
            Error::InvalidArgument,
            "a delegate input's rank differs from the graph's",
        ));
    }
    for (i, &d) in t.dim_order().iter().enumerate() {
        let size = t.sizes()[usize::from(d)];
        if size > bound.dims()[i] {
            return Err(fail(
                Error::InvalidArgument,
                "a delegate input is larger than the graph's sizes (its upper bound)",
            ));
        }
        shape.set(i, size);
    }
    Ok(shape)
}

/// Resizes an output tensor to `shape` (dims in the tensor's dim order).
fn resize_to(t: &mut et_runtime::Tensor, shape: &Shape) -> KernelResult {
    if t.dim() != shape.rank() {
        return Err(fail(
            Error::InvalidArgument,
            "a delegate output's rank differs from the graph's",
        ));
    }
    let mut sizes = [0usize; crate::values::MAX_RANK];
    for (i, &d) in t.dim_order().iter().enumerate() {
        sizes[usize::from(d)] = shape.dims()[i];
    }
    t.resize(&sizes[..shape.rank()])
}

fn check_tensor(t: &et_runtime::Tensor, value: &Value) -> KernelResult {
    check_dtype(t, value)?;
    let dims = value.shape.dims();
    let order = t.dim_order();
    let same = t.dim() == dims.len()
        && order
            .iter()
            .zip(dims)
            .all(|(&d, &size)| t.sizes().get(usize::from(d)) == Some(&size));
    // A 0-dim tensor is a one-element value to XNNPACK (the serializer writes it as [1]).
    let scalar = t.dim() == 0 && dims.iter().all(|&d| d == 1);
    if !same && !scalar {
        return Err(fail(
            Error::InvalidArgument,
            "a delegate output's sizes differ from the graph's",
        ));
    }
    Ok(())
}

/// Runs the plan on the call's tensors. In a profiled execute each step is timed as the
/// delegate's step of the same index as its payload node.
pub(crate) fn execute(
    plan: NonNull<Plan>,
    ctx: &KernelContext<'_>,
    args: &KernelArgs<'_>,
) -> KernelResult {
    // SAFETY: the handle points to the plan `init` built in method memory; execute runs
    // with the method held exclusively, so nothing else uses the plan meanwhile.
    let plan = unsafe { plan.as_ref() };
    bind(plan, args)?;
    let frame = Frame::new(&plan.tables, ctx);
    for s in 0..plan.num_steps {
        // SAFETY: `s < num_steps`, all written at init.
        let step = unsafe { &*plan.steps.as_ptr().add(s) };
        let start = ctx.step_start();
        step.run(&frame)?;
        ctx.step_end(start, s as u32);
    }
    Ok(())
}
