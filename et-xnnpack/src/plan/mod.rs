//! A delegate's plan, built once at `init` in method memory: the value table, one step per
//! node, packed weights, and the intermediate buffer laid out by liveness.
//!
//! Everything is checked here so that execute only moves numbers: every node's kind is
//! registered, every value id exists, every node reads values that something wrote (a
//! delegate input, a constant, or an earlier node) and writes a value nothing else writes,
//! shapes agree with what the node computes, and every buffer fits.

use core::mem::{align_of, size_of};
use core::ptr::NonNull;

use et_runtime::backend::{BackendInitContext, DelegateError};
use et_runtime::Error;
use et_xnnpack_schema::{Datatype, Graph, NodeDatatype, NodeKind};

use crate::nodes::{self, Step};
use crate::plain::Plain;

mod elem;
mod liveness;
mod values;

pub(crate) use elem::{qd8_params_offset, Elem, Quant};
pub(crate) use values::{Shape, Storage, Value, MAX_RANK};

/// Alignment of every buffer the plan hands out (a cache line).
pub(crate) const ALIGN: usize = 64;

/// A built plan. Its arrays live in method memory, which outlives the handle.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) values: NonNull<Value>,
    pub(crate) num_values: usize,
    pub(crate) steps: NonNull<Step>,
    pub(crate) num_steps: usize,
    /// Each step's node kind, to name the step in profiles.
    kinds: NonNull<NodeKind>,
    /// Every value's data pointer; externals are bound at each execute.
    pub(crate) data: NonNull<*mut u8>,
    /// The value indices of the delegate's inputs and outputs.
    externals: NonNull<u32>,
    num_externals: usize,
    /// Per-node scratch (reused by every node).
    pub(crate) scratch: NonNull<u8>,
    pub(crate) scratch_len: usize,
    /// How many arguments the delegate call passes.
    pub(crate) num_args: usize,
}

impl Plan {
    /// Value `v` (an index the builder handed out, below `num_values`).
    pub(crate) fn value(&self, v: u32) -> &Value {
        debug_assert!((v as usize) < self.num_values);
        // SAFETY: steps and the externals list only hold indices below `num_values`; the
        // table lives in method memory as long as the plan.
        unsafe { &*self.values.as_ptr().add(v as usize) }
    }

    /// Each step's node kind.
    pub(crate) fn kinds(&self) -> &[NodeKind] {
        // SAFETY: `num_steps` entries written at init, in method memory.
        unsafe { core::slice::from_raw_parts(self.kinds.as_ptr(), self.num_steps) }
    }

    /// The value indices of the delegate's inputs and outputs.
    pub(crate) fn externals(&self) -> &[u32] {
        // SAFETY: `num_externals` entries written at init, in method memory.
        unsafe { core::slice::from_raw_parts(self.externals.as_ptr(), self.num_externals) }
    }
}

/// What node `prepare` functions use: the value table and method memory.
pub(crate) struct Builder<'a, 'c> {
    ctx: &'a BackendInitContext<'c>,
    values: &'a mut [Value],
    /// Value index of each id (`u32::MAX`: no value has that id).
    ids: &'a [u32],
    node: u32,
    kind: NodeKind,
    scratch: usize,
    /// What the node being prepared took: `alloc`'s bytes with their alignment padding,
    /// and its scratch. Debug builds hold them against the kind's bounds, which size
    /// the method memory estimate.
    node_packed: core::cell::Cell<usize>,
    node_scratch: usize,
}

impl Builder<'_, '_> {
    /// An error about the node being prepared.
    pub(crate) fn fail(&self, error: Error, message: &'static str) -> DelegateError {
        DelegateError::at_node(error, message, self.node, self.kind.name())
    }

    /// An error for a node whose fields or values are malformed.
    pub(crate) fn invalid(&self, message: &'static str) -> DelegateError {
        self.fail(Error::InvalidProgram, message)
    }

    fn index(&self, id: u32) -> Result<usize, DelegateError> {
        match self.ids.get(id as usize) {
            Some(&i) if i != u32::MAX => Ok(i as usize),
            _ => Err(self.invalid("the node names a value id the graph does not have")),
        }
    }

    /// The fp32 value read as input `id` of the node (see [`read_any`](Self::read_any)).
    pub(crate) fn read(&mut self, id: u32) -> Result<u32, DelegateError> {
        let i = self.read_any(id)?;
        self.require_f32(i)
    }

    /// The fp32 value written as output `id` (see [`write_any`](Self::write_any)).
    pub(crate) fn write(&mut self, id: u32, inputs: &[u32]) -> Result<u32, DelegateError> {
        let i = self.write_any(id, inputs)?;
        self.require_f32(i)
    }

    /// Refuses a value that is not fp32: for node kinds (or variants) that run on floats.
    pub(crate) fn require_f32(&self, i: u32) -> Result<u32, DelegateError> {
        if self.values[i as usize].elem != Elem::F32 {
            return Err(self.fail(
                Error::NotSupported,
                "the node has a quantized value, which this node kind runs on fp32 only",
            ));
        }
        Ok(i)
    }

    /// The value read as input `id` of the node, of any datatype: it must be written
    /// before this node.
    pub(crate) fn read_any(&mut self, id: u32) -> Result<u32, DelegateError> {
        let i = self.index(id)?;
        let node = self.node;
        let v = &mut self.values[i];
        let available = match v.storage {
            Storage::Input { .. } | Storage::Constant { .. } => true,
            Storage::Unused | Storage::Internal { .. } | Storage::Output { .. } => v.def < node,
        };
        if !available {
            return Err(self.invalid("the node reads a value no earlier node writes"));
        }
        v.last_use = v.last_use.max(node);
        Ok(i as u32)
    }

    /// The value written as output `id` of the node, of any datatype: written by no other
    /// node, not an input or constant, and different from the node's inputs (`inputs`).
    pub(crate) fn write_any(&mut self, id: u32, inputs: &[u32]) -> Result<u32, DelegateError> {
        let i = self.index(id)?;
        if inputs.contains(&(i as u32)) {
            return Err(self.invalid("the node writes one of its own inputs"));
        }
        let node = self.node;
        let v = &mut self.values[i];
        match v.storage {
            Storage::Unused | Storage::Output { .. } if v.def == u32::MAX => {
                v.def = node;
                v.last_use = v.last_use.max(node);
                Ok(i as u32)
            }
            Storage::Unused | Storage::Output { .. } => {
                Err(self.invalid("the node writes a value an earlier node wrote"))
            }
            _ => Err(self.invalid("the node writes a delegate input or a constant")),
        }
    }

    /// Value `i`'s shape.
    pub(crate) fn shape(&self, i: u32) -> Shape {
        self.values[i as usize].shape
    }

    /// Value `i`.
    pub(crate) fn value(&self, i: u32) -> &Value {
        &self.values[i as usize]
    }

    /// Constant value `i`'s bytes, if it is a constant (`None` otherwise).
    pub(crate) fn constant_bytes(&self, i: u32) -> Option<&[u8]> {
        match self.values[i as usize].storage {
            Storage::Constant { data, len } => {
                // SAFETY: `data` points to `len` bytes of program data (named data or the
                // payload) that outlive the method and that nothing writes.
                Some(unsafe { core::slice::from_raw_parts(data, len) })
            }
            _ => None,
        }
    }

    /// Constant fp32 value `i` as `f32`s, if it is a constant (`None` otherwise).
    pub(crate) fn constant(&self, i: u32) -> Option<&[f32]> {
        let v = &self.values[i as usize];
        match v.storage {
            Storage::Constant { data, len }
                if v.elem == Elem::F32 && (data as usize).is_multiple_of(align_of::<f32>()) =>
            {
                // SAFETY: `data` points to `len` bytes of program data (named data or the
                // payload) that outlive the method; `len` is `numel * 4` (checked when the
                // value was read) and the pointer is 4-aligned (checked here). Every bit
                // pattern is an `f32`, and nothing writes constant data.
                Some(unsafe { core::slice::from_raw_parts(data.cast::<f32>(), len / 4) })
            }
            _ => None,
        }
    }

    /// `n` zeroed elements of method memory (packed integer weights, requantization
    /// tables), valid as long as the method.
    pub(crate) fn alloc<T: Plain>(&self, n: usize) -> Result<&'static mut [T], DelegateError> {
        let bytes = n
            .checked_mul(size_of::<T>())
            .ok_or(self.invalid("packed weights overflow"))?;
        self.node_packed
            .set(self.node_packed.get().saturating_add(bytes.max(1) + ALIGN));
        let p = self
            .ctx
            .allocate(bytes.max(1), ALIGN)
            .map_err(|e| self.fail(e, "method memory is too small for the packed weights"))?;
        // SAFETY: `allocate` returned `bytes` fresh bytes aligned to 64 (enough for any
        // `Plain` type), part of method memory, which outlives every step that uses them;
        // no one else holds them. Zero bytes are a valid `T` (`Plain`).
        unsafe {
            core::ptr::write_bytes(p, 0, bytes);
            Ok(core::slice::from_raw_parts_mut(p.cast::<T>(), n))
        }
    }

    /// Records that the node's `run` takes `bytes` of scratch.
    pub(crate) fn scratch(&mut self, bytes: usize) {
        self.scratch = self.scratch.max(bytes);
        self.node_scratch = self.node_scratch.max(bytes);
    }
}

/// `n` elements of method memory for a table, uninitialized.
fn arena_raw<T>(ctx: &BackendInitContext<'_>, n: usize) -> Result<NonNull<T>, DelegateError> {
    let bytes = n.checked_mul(size_of::<T>()).ok_or(DelegateError::new(
        Error::InvalidProgram,
        "the graph is too large",
    ))?;
    let p = ctx
        .allocate(bytes.max(1), align_of::<T>().max(8))
        .map_err(|e| DelegateError::new(e, "method memory is too small for the XNNPACK plan"))?;
    NonNull::new(p.cast::<T>()).ok_or(DelegateError::new(Error::Internal, "null allocation"))
}

/// `n` elements of method memory, each set to `fill`. The table lives as long as the
/// method (method memory), which is why the result may be `'static` for the plan: the
/// plan never outlives the method that holds its handle.
fn arena_array<T: Copy>(
    ctx: &BackendInitContext<'_>,
    n: usize,
    fill: T,
) -> Result<&'static mut [T], DelegateError> {
    let p = arena_raw::<T>(ctx, n)?.as_ptr();
    for k in 0..n {
        // SAFETY: `k < n`, inside the fresh allocation of `n` elements of `T`.
        unsafe { p.add(k).write(fill) };
    }
    // SAFETY: all `n` elements were written above; the memory is method memory, handed to
    // no one else, and the plan that refers to it is destroyed with the method.
    Ok(unsafe { core::slice::from_raw_parts_mut(p, n) })
}

/// Builds the plan of `graph` in method memory. `named` resolves named-data keys.
pub(crate) fn build<'n>(
    ctx: &BackendInitContext<'_>,
    graph: &Graph<'_>,
    named: &dyn Fn(&str) -> Option<&'n [u8]>,
) -> Result<Plan, DelegateError> {
    let invalid = |m| DelegateError::new(Error::InvalidProgram, m);
    let num_values = graph.num_values();
    let num_args = graph.num_externs() as usize;
    // Read every value; index them by id.
    let empty = Value {
        shape: Shape::default(),
        bound: Shape::default(),
        elem: Elem::F32,
        storage: Storage::Unused,
        def: u32::MAX,
        last_use: 0,
    };
    let values = arena_array(ctx, num_values, empty)?;
    let ids = arena_array(ctx, num_values, u32::MAX)?;
    for (i, slot) in values.iter_mut().enumerate() {
        let view = graph
            .value(i)
            .map_err(|e| DelegateError::new(e.error, e.reason()))?;
        *slot = values::read_value(graph, &view, named, &mut |n| arena_raw::<f32>(ctx, n))?;
        if let Storage::Input { arg } | Storage::Output { arg } = slot.storage {
            if arg as usize >= num_args {
                return Err(invalid(
                    "a delegate input or output has an id past num_externs",
                ));
            }
        }
        // Ids index the table; the serializer numbers values 0..n.
        let id = ids
            .get_mut(view.id as usize)
            .ok_or(invalid("a value id is not below the number of values"))?;
        if *id != u32::MAX {
            return Err(invalid("two values have the same id"));
        }
        *id = i as u32;
    }
    // Prepare every node.
    let num_steps = graph.num_nodes();
    let steps = arena_raw::<Step>(ctx, num_steps)?;
    let kinds = arena_array(ctx, num_steps, NodeKind(0))?;
    let mut b = Builder {
        ctx,
        values,
        ids,
        node: 0,
        kind: NodeKind(0),
        scratch: 0,
        node_packed: core::cell::Cell::new(0),
        node_scratch: 0,
    };
    for (i, kind) in kinds.iter_mut().enumerate() {
        let node = graph
            .node(i)
            .map_err(|e| DelegateError::new(e.error, e.reason()))?;
        b.node = i as u32;
        b.kind = node.kind;
        *kind = node.kind;
        let datatype = graph
            .node_datatype(&node)
            .map_err(|e| b.fail(e.error, e.reason()))?;
        let spec = nodes::find(node.kind, datatype).ok_or_else(|| {
            if !nodes::has_kind(node.kind) {
                return b.fail(
                    Error::NotSupported,
                    "this node kind is not in this build (unknown to etch, or left out by the selection)",
                );
            }
            b.fail(Error::NotSupported, missing_datatype(datatype))
        })?;
        b.node_packed.set(0);
        b.node_scratch = 0;
        let step = (spec.prepare)(&mut b, &node)?;
        debug_assert!(
            b.node_packed.get() <= (spec.packed)(graph, &node),
            "node {i} ({}) allocated {} bytes, over its kind's bound {}",
            node.kind.name(),
            b.node_packed.get(),
            (spec.packed)(graph, &node)
        );
        debug_assert!(
            b.node_scratch <= (spec.scratch)(graph, &node),
            "node {i} ({}) takes {} scratch bytes, over its kind's bound {}",
            node.kind.name(),
            b.node_scratch,
            (spec.scratch)(graph, &node)
        );
        // SAFETY: `i < num_steps`, inside the table; steps are `Copy` (no drop needed for
        // the ones left unwritten when an error returns early).
        unsafe { steps.as_ptr().add(i).write(step) };
    }
    let scratch_len = b.scratch;
    let values = b.values;
    // SAFETY: all `num_steps` steps were written above, in method memory handed to no
    // one else yet; the borrow ends before the plan takes the pointer.
    nodes::fold_clamps(
        unsafe { core::slice::from_raw_parts_mut(steps.as_ptr(), num_steps) },
        values,
    );
    // Every delegate output must be written.
    if values
        .iter()
        .any(|v| matches!(v.storage, Storage::Output { .. }) && v.def == u32::MAX)
    {
        return Err(invalid("a delegate output is written by no node"));
    }
    let buffer_len = liveness::assign_offsets(ctx, values)?;
    let buffer = ctx.allocate(buffer_len.max(1), ALIGN).map_err(|e| {
        DelegateError::new(e, "method memory is too small for the intermediate values")
    })?;
    let scratch = ctx
        .allocate(scratch_len.max(1), ALIGN)
        .map_err(|e| DelegateError::new(e, "method memory is too small for the node scratch"))?;
    let num_externals = values
        .iter()
        .filter(|v| matches!(v.storage, Storage::Input { .. } | Storage::Output { .. }))
        .count();
    let externals = arena_array(ctx, num_externals, 0u32)?;
    let external_values = values
        .iter()
        .enumerate()
        .filter(|(_, v)| matches!(v.storage, Storage::Input { .. } | Storage::Output { .. }));
    for (slot, (i, _)) in externals.iter_mut().zip(external_values) {
        *slot = i as u32;
    }
    let data = arena_array(ctx, num_values, core::ptr::null_mut::<u8>())?;
    for (slot, v) in data.iter_mut().zip(values.iter()) {
        *slot = match v.storage {
            Storage::Constant { data, .. } => data.cast_mut(),
            // SAFETY: `offset + size <= buffer_len` (liveness), inside the buffer.
            Storage::Internal { offset } => unsafe { buffer.add(offset) },
            _ => core::ptr::null_mut(),
        };
    }
    Ok(Plan {
        values: NonNull::from(&mut values[0..]).cast(),
        num_values,
        steps,
        num_steps,
        kinds: NonNull::from(&mut kinds[0..]).cast(),
        data: NonNull::from(&mut data[0..]).cast(),
        externals: NonNull::from(&mut externals[0..]).cast(),
        num_externals,
        scratch: NonNull::new(scratch).ok_or(invalid("null scratch"))?,
        scratch_len,
        num_args,
    })
}

const QDINT8: et_xnnpack_schema::fields::XNNDatatype =
    et_xnnpack_schema::fields::XNNDatatype::xnn_datatype_qdint8;

/// An upper bound of the method memory [`build`] takes for `graph`: the tables, every
/// value's bytes (intermediates may all be live; constants stay in program data, but
/// their scales are copied), what each node's `prepare` allocates (its kind's
/// [`PackedFn`](crate::nodes::PackedFn): a constant packed by several nodes is packed by
/// each) and the largest node scratch.
pub(crate) fn memory_bound(graph: &Graph<'_>) -> usize {
    let v = graph.num_values();
    let n = graph.num_nodes();
    let mut bytes = 4 * ALIGN
        + v * (size_of::<Value>() + 2 * size_of::<u32>() + size_of::<*mut u8>() + 16)
        + n * (size_of::<Step>() + size_of::<NodeKind>())
        + liveness::bookkeeping_bound(v);
    for i in 0..v {
        // A float value's bytes; a quantized one's bytes and its scales (at most one per
        // element), or for qdint8 its run-time row parameters (at most 8 per element,
        // for rows of 1). A constant's data is read in place: only its scales are copied.
        let size = graph
            .value(i)
            .ok()
            .and_then(|view| {
                let constant = view.constant_buffer_idx != 0;
                let per_element: usize = match view.datatype {
                    Datatype::FP32 if constant => 0,
                    Datatype::FP32 => 4,
                    _ if constant => 4,
                    d if d.0 == QDINT8.0 => 9,
                    _ => 5,
                };
                (0..view.rank())
                    .try_fold(per_element, |acc, d| acc.checked_mul(view.dim(d) as usize))
            })
            .unwrap_or(0);
        bytes = bytes.saturating_add(size.saturating_add(ALIGN));
    }
    let mut scratch = 0;
    for i in 0..n {
        if let Ok(node) = graph.node(i) {
            let spec = graph
                .node_datatype(&node)
                .ok()
                .and_then(|d| nodes::find(node.kind, d));
            if let Some(spec) = spec {
                scratch = scratch.max((spec.scratch)(graph, &node));
                bytes = bytes.saturating_add((spec.packed)(graph, &node));
            }
        }
    }
    bytes.saturating_add(scratch)
}

/// The refusal of a node whose kind this build has, but not in the node's datatype
/// family (the selection kept other families of the kind).
fn missing_datatype(datatype: NodeDatatype) -> &'static str {
    match datatype {
        NodeDatatype::Fp32 => {
            "this node's datatype fp32 is not in this build for this kind (not implemented, or left out by the selection)"
        }
        NodeDatatype::Qint8 => {
            "this node's datatype qint8 is not in this build for this kind (not implemented, or left out by the selection)"
        }
        NodeDatatype::Qdint8 => {
            "this node's datatype qdint8 is not in this build for this kind (not implemented, or left out by the selection)"
        }
    }
}

/// The shape of value `id` of `graph` (for scratch bounds, before the plan exists).
pub(crate) fn graph_shape(graph: &Graph<'_>, id: u32) -> Option<Shape> {
    // Values are numbered by position (checked by `build`).
    Shape::of(&graph.value(id as usize).ok()?)
}
