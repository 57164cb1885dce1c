//! Reading the operators and kernel keys of a `.pte` the way ExecuTorch's `gen_oplist`
//! does (`codegen/tools/selective_build.cpp` plus `gen_oplist.py`).
//!
//! Delegate payloads are read too, by the [`DelegateMetadata`] of their backend
//! (`gen_oplist` does not look inside delegates).
//!
//! The program is read with et-schema (`ProgramView`, `MethodMeta::kernel_calls` and
//! their `selection_key`, which applies gen_oplist's rule for tensor lists), so malformed
//! input gives an error, never a panic or an out-of-bounds read.

use std::collections::{BTreeMap, BTreeSet};

use et_schema::{ProgramView, Verification};

use crate::error::Error;
use crate::DelegateMetadata;

/// What `gen_oplist` extracts from one program, plus what the backends read from their
/// payloads.
#[derive(Debug, Default)]
pub(crate) struct ProgramOps {
    /// Every operator in every execution plan's operator table.
    pub operators: BTreeSet<String>,
    /// For each operator some KernelCall uses: its distinct kernel keys, sorted.
    pub kernel_keys: BTreeMap<String, BTreeSet<String>>,
    /// Per backend's `kernel_metadata` key, the entries its payloads need.
    pub delegate_metadata: BTreeMap<String, BTreeSet<String>>,
}

/// Reads `bytes` as a `.pte` with et-schema's reader (after checking the identifier, the
/// extended header and the flatbuffer's structure), and each delegate payload of a
/// backend in `backends` with it.
pub(crate) fn read_program(
    bytes: &[u8],
    label: &str,
    backends: &[&dyn DelegateMetadata],
) -> Result<ProgramOps, Error> {
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
            let Some(backend) = backends
                .iter()
                .find(|b| b.backend_id() == delegate.backend_id)
            else {
                continue;
            };
            let in_delegate =
                |what: String| where_(format!("delegate {d} ({}): {what}", delegate.backend_id));
            let payload = program
                .payload(bytes, delegate.payload)
                .map_err(|e| in_delegate(format!("payload: {e}")))?;
            let entries = ops
                .delegate_metadata
                .entry(backend.key().to_owned())
                .or_default();
            backend
                .read_payload(payload, entries)
                .map_err(in_delegate)?;
        }
    }
    Ok(ops)
}
