//! What `ops`, `check` and `kernels` say about delegates: each delegate's backend and,
//! for XNNPACK payloads, the node kinds with counts (read with et-schema, so a build
//! without the backend can still list them).

use std::collections::BTreeMap;

use et_runtime::Program;
use et_schema::xnnpack::Graph;

use crate::Failure;

/// One delegate of a method.
pub struct DelegateSummary {
    pub backend: String,
    /// Node kinds (without the `XNN` prefix) with counts; empty for other backends.
    pub node_kinds: BTreeMap<&'static str, usize>,
}

/// The delegates of method `name`, in order.
pub fn summarize(program: &Program<'_>, name: &str) -> Result<Vec<DelegateSummary>, Failure> {
    let mut out = Vec::new();
    for (index, d) in program.delegates(name)?.enumerate() {
        let d = d?;
        let mut node_kinds = BTreeMap::new();
        if d.backend_id == "XnnpackBackend" {
            let graph = Graph::parse(d.payload)
                .map_err(|e| Failure(format!("method {name}, delegate {index}: {e}")))?;
            for kind in graph.node_kinds() {
                let kind = kind.map_err(|(i, e)| {
                    Failure(format!("method {name}, delegate {index}, node {i}: {e}"))
                })?;
                *node_kinds.entry(kind.name()).or_insert(0) += 1;
            }
        }
        out.push(DelegateSummary {
            backend: d.backend_id.to_string(),
            node_kinds,
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

    /// The node kinds this binary does not hold (all of them without the backend).
    pub fn missing_node_kinds(&self) -> Vec<&'static str> {
        self.node_kinds
            .keys()
            .filter(|k| !node_kind_linked(k))
            .copied()
            .collect()
    }
}

#[cfg(feature = "xnnpack")]
fn node_kind_linked(kind: &str) -> bool {
    et_xnnpack::node_kinds().any(|k| k.name() == kind)
}

#[cfg(not(feature = "xnnpack"))]
fn node_kind_linked(_kind: &str) -> bool {
    false
}

/// The XNNPACK node kinds this binary runs, sorted (empty without the backend).
pub fn linked_node_kinds() -> Vec<&'static str> {
    #[cfg(feature = "xnnpack")]
    {
        let mut kinds: Vec<&'static str> = et_xnnpack::node_kinds().map(|k| k.name()).collect();
        kinds.sort_unstable();
        kinds
    }
    #[cfg(not(feature = "xnnpack"))]
    {
        Vec::new()
    }
}
