//! What `ops`, `check` and `kernels` say about delegates: each delegate's backend and,
//! for XNNPACK payloads, the node kinds with counts (read with et-xnnpack-schema, so a
//! build without the backend can still list them).

use std::collections::BTreeMap;

use et_runtime::Program;
use et_xnnpack_schema::{Graph, NodeDatatype, NodeVariant};

use crate::Failure;

/// One delegate of a method.
pub struct DelegateSummary {
    pub backend: String,
    /// Node kinds (without the `XNN` prefix) with counts; empty for other backends.
    pub node_kinds: BTreeMap<&'static str, usize>,
    /// Each node's kind with its datatype family (`Conv2d:fp32`), once each, in node
    /// order. (A plain vector: a set or a sort of a new element type would instantiate
    /// the collection code again, kilobytes in every build of the CLI.)
    pub node_variants: Vec<NodeVariant>,
}

/// The delegates of method `name`, in order.
pub fn summarize(program: &Program<'_>, name: &str) -> Result<Vec<DelegateSummary>, Failure> {
    let mut out = Vec::new();
    for (index, d) in program.delegates(name)?.enumerate() {
        let d = d?;
        let mut node_kinds = BTreeMap::new();
        let mut node_variants = Vec::new();
        if d.backend_id == et_xnnpack_schema::BACKEND_ID {
            let graph = Graph::parse(d.payload)
                .map_err(|e| Failure(format!("method {name}, delegate {index}: {e}")))?;
            for variant in graph.node_variants() {
                let variant = variant.map_err(|(i, e)| {
                    Failure(format!("method {name}, delegate {index}, node {i}: {e}"))
                })?;
                *node_kinds.entry(variant.kind.name()).or_insert(0) += 1;
                if !node_variants.contains(&variant) {
                    node_variants.push(variant);
                }
            }
        }
        out.push(DelegateSummary {
            backend: d.backend_id.to_string(),
            node_kinds,
            node_variants,
        })
    }
    Ok(out)
}

impl DelegateSummary {
    /// `XnnpackBackend (Add x10, Conv2d x35, ...)`.
    pub fn describe(&self) -> String {
        if self.node_kinds.is_empty() {
            return self.backend.clone();
        }
        let kinds: Vec<String> = self
            .node_kinds
            .iter()
            .map(|(k, n)| format!("{k} x{n}"))
            .collect();
        format!("{} ({})", self.backend, kinds.join(", "))
    }

    /// `{"backend":..,"node_kinds":{..}}`.
    pub fn json(&self) -> String {
        let kinds: Vec<String> = self
            .node_kinds
            .iter()
            .map(|(k, n)| format!("{}:{n}", crate::format::json_str(k)))
            .collect();
        format!(
            "{{\"backend\":{},\"node_kinds\":{{{}}}}}",
            crate::format::json_str(&self.backend),
            kinds.join(",")
        )
    }

    /// The node kinds with datatype families (`Conv2d:fp32`, the selection syntax) this
    /// binary does not hold (all of them without the backend).
    pub fn missing_node_kinds(&self) -> Vec<String> {
        let linked = linked_node_variants();
        self.node_variants
            .iter()
            .filter(|v| !linked.contains(v))
            .map(ToString::to_string)
            .collect()
    }
}

/// The XNNPACK (node kind, datatype family) pairs this binary runs (empty without the
/// backend).
pub fn linked_node_variants() -> Vec<NodeVariant> {
    #[cfg(feature = "xnnpack")]
    {
        et_xnnpack::node_variants().collect()
    }
    #[cfg(not(feature = "xnnpack"))]
    {
        Vec::new()
    }
}

/// The XNNPACK node kinds this binary runs, sorted by name, each with its datatype
/// families in order (empty without the backend).
pub fn linked_node_kinds() -> Vec<(&'static str, Vec<&'static str>)> {
    let variants = linked_node_variants();
    let mut names: Vec<&'static str> = variants.iter().map(|v| v.kind.name()).collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let datatypes = NodeDatatype::ALL
                .into_iter()
                .filter(|&d| {
                    variants
                        .iter()
                        .any(|v| v.kind.name() == name && v.datatype == d)
                })
                .map(NodeDatatype::name)
                .collect();
            (name, datatypes)
        })
        .collect()
}
