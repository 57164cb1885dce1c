//! Executing a plan: bind the call's tensors to the delegate's inputs and outputs, then
//! run the steps in order, each with the same scratch.

use core::ptr::NonNull;

use et_runtime::backend::KernelArgs;
use et_runtime::{Arena, Error, KernelContext, KernelError, KernelResult, ScalarType};

use core::mem::{align_of, size_of};

use crate::plain::Plain;
use crate::plan::{Plan, Shape, Storage, Value};

fn fail(error: Error, message: &'static str) -> KernelError {
    KernelError::new(error, message)
}

/// What a step sees while it runs: value shapes and data, and the scratch.
#[derive(Debug)]
pub(crate) struct Frame<'f> {
    plan: &'f Plan,
}

impl Frame<'_> {
    fn value(&self, v: u32) -> &Value {
        self.plan.value(v)
    }

    /// Value `v`'s shape.
    pub(crate) fn shape(&self, v: u32) -> Shape {
        self.value(v).shape
    }

    fn ptr(&self, v: u32) -> *mut u8 {
        // SAFETY: as in `value`: `v < num_values`, and `data` has `num_values` entries.
        unsafe { *self.plan.data.as_ptr().add(v as usize) }
    }

    /// The data of an fp32 step's inputs and its output ([`input`](Self::input) and
    /// [`output`](Self::output) for each).
    #[allow(
        clippy::mut_from_ref,
        reason = "the output's bytes are disjoint from everything else a step can reach"
    )]
    pub(crate) fn operands<const N: usize>(
        &self,
        inputs: [u32; N],
        output: u32,
    ) -> KernelResult<([&[f32]; N], &mut [f32])> {
        // Proved at init by `Builder::write`; not re-checked per step.
        debug_assert!(!inputs.contains(&output));
        let mut ins: [&[f32]; N] = [&[]; N];
        for (slot, v) in ins.iter_mut().zip(inputs) {
            *slot = self.input(v)?;
        }
        Ok((ins, self.output(output)?))
    }

    /// Input `v`'s data as `T`s. `T` must be the value's element type or bytes; a value
    /// whose bytes do not divide into aligned `T`s is an internal error.
    ///
    /// The plan guarantees what makes the views sound: a step's output is none of its
    /// inputs, intermediate values live at the same node never share bytes (liveness),
    /// constants are never written, and the call's output tensors overlap none of its
    /// inputs (checked by [`bind`]); so the one mutable view, [`output`](Self::output),
    /// aliases nothing else handed out, and the borrows end with the step.
    pub(crate) fn input<T: Plain>(&self, v: u32) -> KernelResult<&[T]> {
        let (ptr, len) = self.typed::<T>(v)?;
        // SAFETY: `ptr` points to the value's `bytes()` bytes (bound externals, constants
        // checked at init, or a slice of the intermediate buffer sized by liveness), valid
        // while the step runs, aligned for `T` (checked by `typed`); every bit pattern is
        // a `T` (`Plain`); no mutable view of an input exists during the step.
        Ok(unsafe { core::slice::from_raw_parts(ptr, len) })
    }

    /// Output `v`'s data as `T`s (see [`input`](Self::input)).
    #[allow(
        clippy::mut_from_ref,
        reason = "the output's bytes are disjoint from everything else a step can reach"
    )]
    pub(crate) fn output<T: Plain>(&self, v: u32) -> KernelResult<&mut [T]> {
        let value = self.value(v);
        if value.is_constant() || matches!(value.storage, Storage::Input { .. }) {
            return Err(fail(
                Error::Internal,
                "a step writes a constant or an input",
            ));
        }
        let (ptr, len) = self.typed::<T>(v)?;
        // SAFETY: as in `input`; the plan proved the output is none of the step's inputs
        // and shares no bytes with a value live at the same node, so this is the only
        // view of these bytes while the step runs.
        Ok(unsafe { core::slice::from_raw_parts_mut(ptr, len) })
    }

    fn typed<T: Plain>(&self, v: u32) -> KernelResult<(*mut T, usize)> {
        let ptr = self.ptr(v).cast::<T>();
        let bytes = self.value(v).bytes();
        if !(ptr as usize).is_multiple_of(align_of::<T>()) || !bytes.is_multiple_of(size_of::<T>())
        {
            return Err(fail(Error::Internal, "a value is not aligned for its type"));
        }
        Ok((ptr, bytes / size_of::<T>()))
    }

    /// The plan's scratch (the running step's alone): `floats` f32s for the step, and
    /// the rest as a [`Scratch`] for kernel calls, each of which starts from empty.
    #[allow(
        clippy::mut_from_ref,
        reason = "the scratch belongs to the one step running"
    )]
    pub(crate) fn scratch(&self, floats: usize) -> KernelResult<(&mut [f32], Scratch<'_>)> {
        // SAFETY: the scratch is `scratch_len` bytes of method memory, 64-aligned, that
        // only the running step uses (steps run one at a time and execute holds the
        // method exclusively); the borrows end with the step. Every bit pattern is an f32.
        let bytes = unsafe {
            core::slice::from_raw_parts_mut(self.plan.scratch.as_ptr(), self.plan.scratch_len)
        };
        let (head, rest) = bytes
            .split_at_mut_checked(floats.saturating_mul(4).next_multiple_of(64))
            .ok_or(fail(
                Error::MemoryAllocationFailed,
                "the node scratch is too small",
            ))?;
        // SAFETY: `head` is 64-aligned (the scratch's start) and holds at least `floats`
        // f32s; f32 has no invalid bit patterns.
        let floats =
            unsafe { core::slice::from_raw_parts_mut(head.as_mut_ptr().cast::<f32>(), floats) };
        Ok((floats, Scratch(rest)))
    }
}

/// Scratch memory for kernel calls inside a step (GEMMs): each call gets a context over
/// all of it, so a loop of calls reuses the same bytes.
#[derive(Debug)]
pub(crate) struct Scratch<'s>(&'s mut [u8]);

impl Scratch<'_> {
    /// Runs `f` with a fresh kernel context over the scratch.
    pub(crate) fn with<R>(&mut self, f: impl FnOnce(&KernelContext<'_>) -> R) -> R {
        let arena = Arena::new(&mut *self.0);
        f(&KernelContext::new(&arena))
    }
}

/// Binds the call's tensors: each delegate input and output must be a float32 tensor with
/// the value's sizes (in its dim order, as XNNPACK sees it), and no output may overlap an
/// input or another output. Visits only the externals (listed at init), not every value.
fn bind(plan: &Plan, args: &KernelArgs<'_>) -> KernelResult {
    if args.len() != plan.num_args {
        return Err(fail(
            Error::InvalidArgument,
            "the delegate call passes a different number of tensors than its graph has inputs and outputs",
        ));
    }
    let externals = plan.externals();
    for &v in externals {
        let value = plan.value(v);
        let ptr = match value.storage {
            Storage::Output { arg } => {
                // SAFETY: the reference is dropped at the end of this arm, before another
                // argument is taken or a step runs; overlaps are refused below.
                let t = unsafe { args.tensor_mut(arg as usize)? };
                check_tensor(t, value)?;
                t.data_mut::<f32>()?.as_mut_ptr().cast::<u8>()
            }
            Storage::Input { arg } => {
                let t = args.tensor(arg as usize)?;
                check_tensor(t, value)?;
                t.data::<f32>()?.as_ptr().cast::<u8>().cast_mut()
            }
            _ => return Err(fail(Error::Internal, "an external value has no argument")),
        };
        // SAFETY: `v < num_values` (the builder lists value indices); the table is the
        // plan's, written only here and at init, while execute holds the method.
        unsafe { *plan.data.as_ptr().add(v as usize) = ptr };
    }
    let range = |v: u32| {
        // SAFETY: as above; bound just now.
        let start = unsafe { *plan.data.as_ptr().add(v as usize) } as usize;
        (start, start + plan.value(v).bytes())
    };
    for (k, &a) in externals.iter().enumerate() {
        let a_is_output = matches!(plan.value(a).storage, Storage::Output { .. });
        for &b in &externals[..k] {
            let b_is_output = matches!(plan.value(b).storage, Storage::Output { .. });
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

fn check_tensor(t: &et_runtime::Tensor, value: &Value) -> KernelResult {
    if t.dtype() != ScalarType::Float {
        return Err(fail(Error::InvalidType, "a delegate tensor is not float32"));
    }
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
            "a delegate tensor's sizes differ from the graph's (dynamic shapes are not supported yet)",
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
    let frame = Frame { plan };
    for s in 0..plan.num_steps {
        // SAFETY: `s < num_steps`, all written at init.
        let step = unsafe { &*plan.steps.as_ptr().add(s) };
        let start = ctx.step_start();
        (step.run)(step, &frame)?;
        ctx.step_end(start, s as u32);
    }
    Ok(())
}
