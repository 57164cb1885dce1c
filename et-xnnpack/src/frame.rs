//! What a node's step sees while it runs ([`Frame`]): value shapes and data, the scratch,
//! and the execute's pool; and what a node kind's `prepare` hands the plan ([`Step`]):
//! the function that runs the node and its parameters. A step may cut its work into
//! bands of output rows run over the execute's pool ([`Frame::split`]); every band is
//! computed by the same code whichever thread runs it, so results do not depend on the
//! thread count.

use core::mem::{align_of, size_of};
use core::ops::Range;
use core::ptr::NonNull;

use et_runtime::{Arena, Error, KernelContext, KernelError, KernelResult, Parallel};

use crate::plain::Plain;
use crate::values::{Shape, Storage, Value};

/// Runs a step of a node family with parameters `P`.
pub(crate) type RunFn<P> = fn(&P, &Frame<'_>) -> KernelResult;

/// One node's step, as its kind's `prepare` returns it: the function that runs it, on
/// which values (indices into the plan's value table) and with what packed weights.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Step<P> {
    pub(crate) run: RunFn<P>,
    pub(crate) params: P,
}

/// The plan's tables that steps read while they run: every value (with its sizes in
/// this execute) and its data, and the node scratch. Built at init in method memory;
/// an execute's binding rewrites the externals' entries and the shapes before any step
/// runs.
#[derive(Debug)]
pub(crate) struct Tables {
    pub(crate) values: NonNull<Value>,
    pub(crate) num_values: usize,
    /// Every value's data pointer; externals are bound at each execute.
    pub(crate) data: NonNull<*mut u8>,
    /// Per-node scratch (reused by every node).
    pub(crate) scratch: NonNull<u8>,
    pub(crate) scratch_len: usize,
}

impl Tables {
    /// Value `v` (an index the builder handed out, below `num_values`).
    pub(crate) fn value(&self, v: u32) -> &Value {
        debug_assert!((v as usize) < self.num_values);
        // SAFETY: steps and the externals list only hold indices below `num_values`; the
        // table lives in method memory as long as the plan.
        unsafe { &*self.values.as_ptr().add(v as usize) }
    }
}

fn fail(error: Error, message: &'static str) -> KernelError {
    KernelError::new(error, message)
}

/// The most bands one step cuts its work into. A step that cuts takes its per-band
/// scratch this many times (reserved at init, so that the plan's memory does not depend
/// on the pool an execute is given).
pub(crate) const MAX_BANDS: usize = 4;

/// The least work (multiply-adds, or the like) worth a band of its own: a few
/// microseconds on one core, well above the cost of handing a band to a worker.
const MIN_WORK_PER_BAND: usize = 1 << 17;

/// The work of one element of an elementwise step (an add, a conversion, a clamp) in
/// the units of [`MIN_WORK_PER_BAND`]: loading, converting and storing it costs about
/// as much as this many multiply-adds of a matrix product.
pub(crate) const ELEMENT_WORK: usize = 8;

/// The work of one tap of a depthwise convolution, in the same units: each tap loads
/// its input for one multiply-add (no reuse across output channels), about twice a
/// matrix product's.
pub(crate) const DEPTHWISE_TAP_WORK: usize = 2;

/// One band of a [`Frame::split`]: its rows, its run of the output and its scratch.
type Band<'b, T> = (Range<usize>, &'b mut [T], &'b mut [f32]);

/// What a step sees while it runs: value shapes and data, the scratch, and the pool of
/// the execute.
pub(crate) struct Frame<'f> {
    tables: &'f Tables,
    ctx: &'f KernelContext<'f>,
}

impl core::fmt::Debug for Frame<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Frame")
            .field("tables", &self.tables)
            .field("workers", &self.ctx.workers())
            .finish()
    }
}

impl<'f> Frame<'f> {
    /// The frame of an execute's steps over `tables`, on `ctx`'s pool.
    pub(crate) fn new(tables: &'f Tables, ctx: &'f KernelContext<'f>) -> Self {
        Frame { tables, ctx }
    }
}

impl Frame<'_> {
    fn value(&self, v: u32) -> &Value {
        self.tables.value(v)
    }

    /// Value `v`'s shape in this execute.
    pub(crate) fn shape(&self, v: u32) -> Shape {
        self.value(v).shape
    }

    /// Value `v`'s elements in this execute.
    pub(crate) fn numel(&self, v: u32) -> usize {
        self.value(v).numel()
    }

    /// The rows of `Qd8` value `v` in this execute.
    pub(crate) fn rows(&self, v: u32) -> usize {
        self.value(v).rows()
    }

    fn ptr(&self, v: u32) -> *mut u8 {
        // SAFETY: as in `value`: `v < num_values`, and `data` has `num_values` entries.
        unsafe { *self.tables.data.as_ptr().add(v as usize) }
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
    /// inputs (checked when an execute binds them); so the one mutable view,
    /// [`output`](Self::output), aliases nothing else handed out, and the borrows end
    /// with the step.
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
            core::slice::from_raw_parts_mut(self.tables.scratch.as_ptr(), self.tables.scratch_len)
        };
        let (head, rest) = bytes
            .split_at_mut_checked(
                floats
                    .saturating_mul(4)
                    .checked_next_multiple_of(64)
                    .unwrap_or(usize::MAX),
            )
            .ok_or(fail(
                Error::MemoryAllocationFailed,
                "the node scratch is too small",
            ))?;
        // SAFETY: `head` is 64-aligned (the scratch's start) and holds at least `floats`
        // f32s; f32 has no invalid bit patterns.
        let floats =
            unsafe { core::slice::from_raw_parts_mut(head.as_mut_ptr().cast::<f32>(), floats) };
        Ok((
            floats,
            Scratch {
                bytes: rest,
                pool: self.ctx.parallel(),
            },
        ))
    }

    /// Cuts `rows` (output rows, `work_per_row` multiply-adds each) into bands, one per
    /// worker of the execute's pool (at most [`MAX_BANDS`], none below the work worth a
    /// thread), and runs `task(band, out_band, scratch)` for each over the pool:
    /// `out_band` is the band's run of `out` (`per_row` elements a row) and `scratch`
    /// its own `scratch_floats` floats (the step's scratch must hold [`MAX_BANDS`]
    /// times `scratch_floats` rounded up to 16). Without a pool, one band of all rows.
    pub(crate) fn split<T: Send>(
        &self,
        rows: usize,
        work_per_row: usize,
        (out, per_row): (&mut [T], usize),
        scratch_floats: usize,
        task: impl Fn(Range<usize>, &mut [T], &mut [f32]) + Sync,
    ) -> KernelResult {
        self.split_by(rows, 1, work_per_row, (out, per_row), scratch_floats, task)
    }

    /// [`split`](Self::split) for an elementwise step: `task(band, out_band)` over bands
    /// of the first `len` elements of `out` (at most its length), each element
    /// [`ELEMENT_WORK`].
    pub(crate) fn split_elements<T: Send>(
        &self,
        len: usize,
        out: &mut [T],
        task: impl Fn(Range<usize>, &mut [T]) + Sync,
    ) -> KernelResult {
        let len = len.min(out.len());
        self.split(
            len,
            ELEMENT_WORK,
            (&mut out[..len], 1),
            0,
            |band, out, _| task(band, out),
        )
    }

    /// [`split`](Self::split) with every band but the last a whole number of `unit`
    /// rows (a product cut into column panels: the rows are columns, `unit` a panel).
    pub(crate) fn split_by<T: Send>(
        &self,
        rows: usize,
        unit: usize,
        work_per_row: usize,
        (out, per_row): (&mut [T], usize),
        scratch_floats: usize,
        task: impl Fn(Range<usize>, &mut [T], &mut [f32]) + Sync,
    ) -> KernelResult {
        let by_work = rows.saturating_mul(work_per_row) / MIN_WORK_PER_BAND;
        let wanted = self
            .ctx
            .workers()
            .min(MAX_BANDS)
            .min(by_work)
            .min(rows)
            .max(1);
        let chunk = rows
            .div_ceil(wanted)
            .max(1)
            .checked_next_multiple_of(unit.max(1))
            .unwrap_or(usize::MAX);
        let bands = rows.div_ceil(chunk).max(1);
        let per_band = scratch_floats
            .checked_next_multiple_of(16)
            .unwrap_or(usize::MAX);
        let (scratch, _) = self.scratch(per_band.saturating_mul(bands))?;
        if out.len() < rows.saturating_mul(per_row) {
            return Err(fail(
                Error::Internal,
                "a step's output is smaller than its rows",
            ));
        }
        if bands == 1 {
            task(0..rows, out, &mut scratch[..scratch_floats]);
            return Ok(());
        }
        let mut items: [Option<Band<'_, T>>; MAX_BANDS] = Default::default();
        let (mut out, mut scratch) = (out, scratch);
        for (b, item) in items.iter_mut().enumerate().take(bands) {
            let band = b * chunk..((b + 1) * chunk).min(rows);
            let (here, rest) = core::mem::take(&mut out).split_at_mut(band.len() * per_row);
            let (mine, others) = core::mem::take(&mut scratch).split_at_mut(per_band);
            (out, scratch) = (rest, others);
            *item = Some((band, here, &mut mine[..scratch_floats]));
        }
        self.ctx.parallel_each(&mut items[..bands], |_, item| {
            if let Some((band, out, scratch)) = item.take() {
                task(band, out, scratch);
            }
        });
        Ok(())
    }
}

/// Scratch memory for kernel calls inside a step (GEMMs): each call gets a context over
/// all of it, so a loop of calls reuses the same bytes, and the execute's pool.
pub(crate) struct Scratch<'s> {
    bytes: &'s mut [u8],
    pool: Option<&'s dyn Parallel>,
}

impl core::fmt::Debug for Scratch<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Scratch")
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl Scratch<'_> {
    /// Runs `f` with a fresh kernel context over the scratch (a product cuts itself for
    /// the pool when the scratch holds every part's packing buffers).
    pub(crate) fn with<R>(&mut self, f: impl FnOnce(&KernelContext<'_>) -> R) -> R {
        let arena = Arena::new(&mut *self.bytes);
        f(&KernelContext::new(&arena).with_parallel(self.pool))
    }
}
