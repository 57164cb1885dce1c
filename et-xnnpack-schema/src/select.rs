//! The XNNPACK part of a build's selection: the node kinds, each with the datatype
//! family its nodes run on, that a model's payloads use.

extern crate std;

use std::collections::BTreeSet;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

use selection::{split_metadata_entry, DelegateMetadata};

use crate::{Graph, NodeDatatype, NodeKind, BACKEND_ID};

/// The `kernel_metadata` list of the XNNPACK node kinds a build keeps: each entry a kind
/// without the `XNN` prefix (`Conv2d`: every datatype family of it) or a kind, a colon
/// and one family (`Conv2d:fp32`; the families are [`NodeDatatype`]'s).
pub const NODE_KINDS_KEY: &str = "etch::xnnpack_node_kinds";

/// Reads XNNPACK payloads for a selection: every node's kind and datatype family
/// (`Conv2d:fp32`), and checks hand-written entries against the schema's kinds and the
/// known families.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeKinds;

impl DelegateMetadata for NodeKinds {
    fn backend_id(&self) -> &str {
        BACKEND_ID
    }

    fn key(&self) -> &str {
        NODE_KINDS_KEY
    }

    fn read_payload(&self, payload: &[u8], entries: &mut BTreeSet<String>) -> Result<(), String> {
        let graph = Graph::parse(payload).map_err(|e| e.to_string())?;
        for variant in graph.node_variants() {
            let variant = variant.map_err(|(n, e)| format!("node {n}: {e}"))?;
            // A tag the schema does not define has no kernel in any build: nothing to
            // select (`etch check` names it).
            if variant.kind.is_defined() {
                entries.insert(variant.to_string());
            }
        }
        Ok(())
    }

    fn check_entry(&self, entry: &str) -> Result<(), String> {
        let (kind, family) = split_metadata_entry(entry);
        if NodeKind::from_name(kind).is_none() {
            let known: Vec<&str> = NodeKind::names().collect();
            return Err(format!(
                "`{entry}` is not an XNNPACK node kind (names without the XNN prefix: {})",
                known.join(", ")
            ));
        }
        match family {
            Some(family) if NodeDatatype::from_name(family).is_none() => {
                let known: Vec<&str> = NodeDatatype::names().collect();
                Err(format!(
                    "`{entry}` names an unknown datatype family (write `Kind` for every \
                     family or `Kind:FAMILY` with FAMILY one of {})",
                    known.join(", ")
                ))
            }
            _ => Ok(()),
        }
    }
}
