//! Reading the operators and kernel keys of a `.pte` the way ExecuTorch's `gen_oplist`
//! does (`codegen/tools/selective_build.cpp` plus `gen_oplist.py`).
//!
//! XNNPACK delegate payloads are read too, for the node kinds and datatype families they
//! use (`gen_oplist` does not look inside delegates).
//!
//! The program is read with et-schema (`ProgramView`, `MethodMeta::kernel_calls` and
//! their `selection_key`, which applies gen_oplist's rule for tensor lists), so malformed
//! input gives an error, never a panic or an out-of-bounds read.

use std::collections::{BTreeMap, BTreeSet};

use et_schema::xnnpack::Graph;
use et_schema::{ProgramView, Verification};

use crate::error::Error;

/// The backend id of ExecuTorch's XNNPACK delegate, whose payloads selection reads.
pub(crate) const XNNPACK_BACKEND: &str = "XnnpackBackend";

/// What `gen_oplist` extracts from one program, plus the XNNPACK node kinds it uses.
#[derive(Debug, Default)]
pub(crate) struct ProgramOps {
    /// Every operator in every execution plan's operator table.
    pub operators: BTreeSet<String>,
    /// For each operator some KernelCall uses: its distinct kernel keys, sorted.
    pub kernel_keys: BTreeMap<String, BTreeSet<String>>,
    /// The node kinds of every XNNPACK delegate payload with each node's datatype family
    /// (`Conv2d:fp32`; kinds without `XNN`).
    pub xnnpack_node_kinds: BTreeSet<String>,
}

/// Reads `bytes` as a `.pte` with et-schema's reader (after checking the identifier, the
/// extended header and the flatbuffer's structure).
pub(crate) fn read_program(bytes: &[u8], label: &str) -> Result<ProgramOps, Error> {
    let err = |message: String| Error::program(label, message);
    let program = ProgramView::parse(bytes, Verification::InternalConsistency)
        .map_err(|e| err(e.to_string()))?;
    let mut ops = ProgramOps::default();
    for p in 0..program.num_methods() {
        let name = program
            .method_name(p)
            .map_err(|e| err(format!("method {p} has no name: {e}")))?;
        let where_ = |what: String| err(format!("method {p} (`{name}`): {what}"));
        let meta = program
            .method_meta(name)
            .map_err(|e| where_(e.to_string()))?;
        for i in 0..meta.num_operators() {
            let op = meta
                .operator(i)
                .map_err(|e| where_(format!("operator {i}: {e}")))?;
            ops.operators.insert(op.to_string());
        }
        for call in meta.kernel_calls() {
            let call = call.map_err(|e| where_(format!("malformed kernel call: {e}")))?;
            let key = call.selection_key.to_string();
            ops.kernel_keys
                .entry(call.operator.to_string())
                .or_default()
                .insert(key);
        }
        for (d, delegate) in program.delegates(&meta).enumerate() {
            let delegate = delegate.map_err(|e| where_(format!("delegate {d}: {e}")))?;
            if delegate.backend_id != XNNPACK_BACKEND {
                continue;
            }
            let in_delegate =
                |what: String| where_(format!("delegate {d} ({XNNPACK_BACKEND}): {what}"));
            let payload = program
                .payload(bytes, delegate.payload)
                .map_err(|e| in_delegate(format!("payload: {e}")))?;
            let graph = Graph::parse(payload).map_err(|e| in_delegate(e.to_string()))?;
            for variant in graph.node_variants() {
                let variant = variant.map_err(|(n, e)| in_delegate(format!("node {n}: {e}")))?;
                // A tag the schema does not define has no kernel in any build: nothing to
                // select (`etch check` names it).
                if variant.kind.is_defined() {
                    // The precise form (`Conv2d:fp32`): the build keeps only the datatype
                    // families the nodes run on.
                    ops.xnnpack_node_kinds.insert(variant.to_string());
                }
            }
        }
    }
    Ok(ops)
}
