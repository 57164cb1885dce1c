//! Inputs that once crashed the loader (found by the fuzz targets of `scripts/fuzz.sh` or
//! by this suite), rebuilt structurally from the fixtures and kept as regression cases.

use et_xnnpack_schema::fields as xf;
use etch_tests::fixture;

use crate::harness::{run_program, Inputs, Stats};
use crate::locate::{field, root, table, vector, Write};
use crate::payload_range;

/// Writes `value` into field `vt` of every node of union kind `kind` in the delegate
/// payload of `bytes`.
fn set_node_fields(bytes: &mut [u8], kind: u8, fields: &[(u16, u32)]) -> usize {
    let payload = payload_range(bytes).expect("a delegate payload");
    let layout = et_xnnpack_schema::header::locate(&bytes[payload.clone()]).unwrap();
    let g = root(bytes, payload.start + layout.graph.start).unwrap();
    let nodes = vector(bytes, g, xf::XNNGraph::VT_XNODES).unwrap();
    let mut writes = Vec::new();
    for i in 0..nodes.len {
        let node = nodes.table(bytes, i).unwrap();
        let tag = field(bytes, node, xf::XNode::VT_XNODE_UNION_TYPE).map(|p| bytes[p]);
        if tag != Some(kind) {
            continue;
        }
        let inner = table(bytes, node, xf::XNode::VT_XNODE_UNION).unwrap();
        for &(vt, value) in fields {
            if let Some(pos) = field(bytes, inner, vt) {
                writes.push(Write {
                    pos,
                    width: 4,
                    value: value.into(),
                });
            }
        }
    }
    for w in &writes {
        bytes[w.pos..w.pos + 4].copy_from_slice(&(w.value as u32).to_le_bytes());
    }
    writes.len()
}

/// Fuzz target `program`, three inputs (mutated `mv2_xnnpack_ptd.pte`): a convolution
/// whose kernel size times input channels overflows `usize` made the payload's scratch
/// estimate overflow (a panic with overflow checks, a wrong size without).
#[test]
fn conv2d_scratch_estimate_overflow() {
    type C<'a> = xf::_XNNNodeConv<'a>;
    let mut stats = Stats::default();
    for name in ["small_cnn_xnnpack.pte", "mv2_xnnpack_ptd.pte"] {
        for value in [u32::MAX, 1 << 31, 1 << 22] {
            let mut bytes = std::fs::read(fixture(name)).unwrap();
            let fields = [
                (C::VT_KERNEL_HEIGHT, value),
                (C::VT_KERNEL_WIDTH, value),
                (C::VT_GROUP_INPUT_CHANNELS, value),
                (C::VT_GROUP_OUTPUT_CHANNELS, value),
            ];
            assert!(
                set_node_fields(&mut bytes, 7, &fields) > 0,
                "{name} has convolutions"
            );
            let label = || format!("{name}: conv kernel and channels = {value}");
            stats.case(label, || run_program(&bytes, None, &Inputs::default()));
        }
    }
    stats.finish("findings: conv2d scratch estimate", &[]);
}
