//! What a node kind's `prepare` builds its step with at `init`: the [`Builder`] over the
//! value table and method memory, the checks every kind shares, and the bounds of what a
//! kind takes from method memory (read from the payload before the plan exists).

use core::mem::{align_of, size_of};

use et_runtime::backend::{BackendInitContext, DelegateError};
use et_runtime::Error;
use et_xnnpack_schema::{Graph, NodeKind};

use crate::elem::Elem;
use crate::plain::Plain;
use crate::values::{Shape, Storage, Value};

/// Alignment of every buffer the plan hands out (a cache line).
pub(crate) const ALIGN: usize = 64;

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

impl<'a, 'c> Builder<'a, 'c> {
    /// A builder over `values`, indexed by value id through `ids`, that allocates from
    /// `ctx`'s method memory.
    pub(crate) fn new(
        ctx: &'a BackendInitContext<'c>,
        values: &'a mut [Value],
        ids: &'a [u32],
    ) -> Self {
        Builder {
            ctx,
            values,
            ids,
            node: 0,
            kind: NodeKind(0),
            scratch: 0,
            node_packed: core::cell::Cell::new(0),
            node_scratch: 0,
        }
    }

    /// Starts preparing node `node` of kind `kind`: errors name it, and what it takes
    /// is counted from zero.
    pub(crate) fn start_node(&mut self, node: u32, kind: NodeKind) {
        self.node = node;
        self.kind = kind;
        self.node_packed.set(0);
        self.node_scratch = 0;
    }

    /// What the node being prepared took: `alloc`'s bytes with their alignment padding,
    /// and its scratch.
    pub(crate) fn node_taken(&self) -> (usize, usize) {
        (self.node_packed.get(), self.node_scratch)
    }

    /// The value table, and the scratch the largest node takes.
    pub(crate) fn finish(self) -> (&'a mut [Value], usize) {
        (self.values, self.scratch)
    }
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

/// The error of a `prepare` handed a node whose values belong to another datatype family
/// than the one it was registered for (the plan looks nodes up by the family their
/// values give, so only an inconsistent payload gets here).
pub(crate) fn other_family(b: &Builder<'_, '_>) -> DelegateError {
    b.fail(
        Error::NotSupported,
        "the node's values do not fit the datatype family it was looked up by",
    )
}

/// Refuses flags outside `allowed` (XNNPACK flags change a node's meaning; one this
/// backend does not implement must not be ignored).
pub(crate) fn check_flags(
    b: &Builder<'_, '_>,
    flags: u32,
    allowed: u32,
) -> Result<(), DelegateError> {
    if flags & !allowed != 0 {
        return Err(b.fail(
            Error::NotSupported,
            "the node has a flag this backend does not implement",
        ));
    }
    Ok(())
}

/// What `Builder::alloc` takes for `n` elements of `size` bytes: the bytes and at most
/// one alignment's padding (saturating).
pub(crate) fn alloc_bound(n: usize, size: usize) -> usize {
    n.saturating_mul(size).max(1).saturating_add(ALIGN)
}

/// The shape of value `id` of `graph` (for scratch bounds, before the plan exists).
pub(crate) fn graph_shape(graph: &Graph<'_>, id: u32) -> Option<Shape> {
    // Values are numbered by position (checked by `plan::build`).
    Shape::of(&graph.value(id as usize).ok()?)
}

/// The element count of value `id` of `graph` (0 when it cannot be read).
pub(crate) fn graph_numel(graph: &Graph<'_>, id: u32) -> usize {
    graph_shape(graph, id).and_then(|s| s.numel()).unwrap_or(0)
}
