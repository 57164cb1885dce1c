//! A delegate's plan, built once at `init` in method memory: the value table, one step per
//! node, packed weights, and the intermediate buffer laid out by liveness.
//!
//! Everything is checked here so that execute only moves numbers: every node's kind is
//! registered, every value id exists, every node reads values that something wrote (a
//! delegate input, a constant, or an earlier node) and writes a value nothing else writes,
//! shapes agree with what the node computes, and every buffer fits.

use core::mem::size_of;
use core::ptr::NonNull;

use et_runtime::backend::{BackendInitContext, DelegateError};
use et_runtime::Error;
use et_xnnpack_schema::{Datatype, Graph, NodeDatatype, NodeKind, QuantParams};

use crate::builder::{Builder, ALIGN};
use crate::elem::Elem;
use crate::frame::Tables;
use crate::nodes::{self, AnyStep};
use crate::values::{self, Shape, Storage, Value};

mod arena;
mod liveness;

use arena::{arena_array, arena_raw};

/// A built plan. Its arrays live in method memory, which outlives the handle.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The value table, every value's data and the node scratch.
    pub(crate) tables: Tables,
    pub(crate) steps: NonNull<AnyStep>,
    pub(crate) num_steps: usize,
    /// Each step's node kind, to name the step in profiles.
    kinds: NonNull<NodeKind>,
    /// The value indices of the delegate's inputs and outputs.
    externals: NonNull<u32>,
    num_externals: usize,
    /// How many arguments the delegate call passes.
    pub(crate) num_args: usize,
}

impl Plan {
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
    let steps = arena_raw::<AnyStep>(ctx, num_steps)?;
    let kinds = arena_array(ctx, num_steps, NodeKind(0))?;
    let mut b = Builder::new(ctx, values, ids);
    for (i, kind) in kinds.iter_mut().enumerate() {
        let node = graph
            .node(i)
            .map_err(|e| DelegateError::new(e.error, e.reason()))?;
        b.start_node(i as u32, node.kind);
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
        let step = (spec.prepare)(&mut b, &node)?;
        let (packed, scratch) = b.node_taken();
        debug_assert!(
            packed <= (spec.packed)(graph, &node),
            "node {i} ({}) allocated {} bytes, over its kind's bound {}",
            node.kind.name(),
            packed,
            (spec.packed)(graph, &node)
        );
        debug_assert!(
            scratch <= (spec.scratch)(graph, &node),
            "node {i} ({}) takes {} scratch bytes, over its kind's bound {}",
            node.kind.name(),
            scratch,
            (spec.scratch)(graph, &node)
        );
        // SAFETY: `i < num_steps`, inside the table; steps are `Copy` (no drop needed for
        // the ones left unwritten when an error returns early).
        unsafe { steps.as_ptr().add(i).write(step) };
    }
    let (values, scratch_len) = b.finish();
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
        tables: Tables {
            values: NonNull::from(&mut values[0..]).cast(),
            num_values,
            data: NonNull::from(&mut data[0..]).cast(),
            scratch: NonNull::new(scratch).ok_or(invalid("null scratch"))?,
            scratch_len,
        },
        steps,
        num_steps,
        kinds: NonNull::from(&mut kinds[0..]).cast(),
        externals: NonNull::from(&mut externals[0..]).cast(),
        num_externals,
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
        + n * (size_of::<AnyStep>() + size_of::<NodeKind>())
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
                let numel = (0..view.rank())
                    .try_fold(1usize, |acc, d| acc.checked_mul(view.dim(d) as usize))?;
                match view.datatype {
                    Datatype::FP32 if constant => Some(0),
                    Datatype::FP32 => numel.checked_mul(4),
                    _ if constant => Some(4 * constant_scales(&view, numel)),
                    d if d.0 == QDINT8.0 => numel.checked_mul(9),
                    _ => numel.checked_mul(5),
                }
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

/// How many scales loading constant `view` (of `numel` elements) copies into method
/// memory: one per channel or per block as its quantization says (a 4-bit LLM weight has
/// one per 32 or more elements), at most one per element.
fn constant_scales(view: &et_xnnpack_schema::ValueView<'_>, numel: usize) -> usize {
    let scales = match view.quant {
        Some(QuantParams::PerTensor { .. }) => 1,
        Some(QuantParams::PerChannel { channel_dim, .. }) => usize::try_from(channel_dim)
            .ok()
            .filter(|&d| d < view.rank())
            .map_or(numel, |d| view.dim(d) as usize),
        Some(QuantParams::PerChannelGroup { group_size, .. }) => {
            numel / usize::try_from(group_size).unwrap_or(1).max(1)
        }
        _ => numel,
    };
    scales.min(numel).max(1)
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
