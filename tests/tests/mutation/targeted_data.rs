//! The targeted corruptions of a `.ptd` data file and of an XNNPACK delegate payload,
//! located like those of [`crate::targeted`].

use et_schema::flat_tensor_fields as tf;
use et_xnnpack_schema::fields as xf;

use crate::locate::{all_fields, field, root, table, vector, Targets, Vector};

/// Every targeted corruption of a `.ptd` (FlatTensor) file, root at 0.
pub fn data_file(buf: &[u8]) -> Targets {
    let mut t = Targets::default();
    let Some(r) = root(buf, 0) else { return t };
    type F<'a> = tf::FlatTensor<'a>;
    let n_segments = vector(buf, r, F::VT_SEGMENTS).map_or(0, |v| v.len) as i64;
    if let Some(segs) = vector(buf, r, F::VT_SEGMENTS) {
        let file = buf.len() as i64;
        for i in 0..segs.len {
            let s = segs.table(buf, i);
            let f = |vt| s.and_then(|s| field(buf, s, vt));
            let past = [file, u64::MAX as i64, i64::MAX, 1 << 40];
            t.field(
                format!("ptd segment {i} offset"),
                f(tf::DataSegment::VT_OFFSET),
                8,
                &past,
            );
            t.field(
                format!("ptd segment {i} size"),
                f(tf::DataSegment::VT_SIZE),
                8,
                &past,
            );
        }
        t.field("ptd segment count", Some(segs.len_pos), 4, &[0, 1 << 30]);
    }
    if let Some(named) = vector(buf, r, F::VT_NAMED_DATA) {
        for i in 0..named.len {
            let Some(nd) = named.table(buf, i) else {
                continue;
            };
            type N<'a> = tf::NamedData<'a>;
            let idx = [-1, n_segments, u32::MAX as i64];
            t.field(
                format!("ptd entry {i} segment"),
                field(buf, nd, N::VT_SEGMENT_INDEX),
                4,
                &idx,
            );
            let Some(layout) = table(buf, nd, N::VT_TENSOR_LAYOUT) else {
                continue;
            };
            type L<'a> = tf::TensorLayout<'a>;
            let st = field(buf, layout, L::VT_SCALAR_TYPE);
            t.field(format!("ptd entry {i} scalar type"), st, 1, &[-1, 9, 127]);
            if let Some(sizes) = vector(buf, layout, L::VT_SIZES) {
                for d in 0..sizes.len {
                    let at = format!("ptd entry {i} size {d}");
                    t.field(at, Some(sizes.at(d, 4)), 4, &[-1, 0, i32::MAX as i64]);
                }
            }
            if let Some(order) = vector(buf, layout, L::VT_DIM_ORDER) {
                for d in 0..order.len {
                    let at = format!("ptd entry {i} dim order {d}");
                    t.field(at, Some(order.at(d, 1)), 1, &[order.len as i64, 255]);
                }
            }
        }
    }
    t
}

/// Every targeted corruption of the XNNPACK payload at `payload` in `buf` (a whole
/// `.pte`): node and value fields out of range, wrong union tags, bad dims.
pub fn payload(buf: &[u8], payload: std::ops::Range<usize>) -> Targets {
    let mut t = Targets::default();
    let p = &buf[payload.clone()];
    let Ok(layout) = et_xnnpack_schema::header::locate(p) else {
        return t;
    };
    let base = payload.start + layout.graph.start;
    let Some(g) = root(buf, base) else { return t };
    type G<'a> = xf::XNNGraph<'a>;
    let values = vector(buf, g, G::VT_XVALUES);
    let n_values = values.map_or(0, |v| v.len) as i64;
    let id_bad = [n_values, n_values + 1, u32::MAX as i64, 0x8000_0000];
    let n_consts = vector(buf, g, G::VT_CONSTANT_DATA).map_or(0, |v| v.len) as i64;
    t.field(
        "payload externs",
        field(buf, g, G::VT_NUM_EXTERNS),
        4,
        &[0, n_values + 1, u32::MAX as i64],
    );
    for (vt, what) in [(G::VT_INPUT_IDS, "input"), (G::VT_OUTPUT_IDS, "output")] {
        if let Some(io) = vector(buf, g, vt) {
            for i in 0..io.len {
                t.field(format!("payload {what} {i}"), Some(io.at(i, 4)), 4, &id_bad);
            }
        }
    }
    if let Some(nodes) = vector(buf, g, G::VT_XNODES) {
        for i in 0..nodes.len {
            let Some(node) = nodes.table(buf, i) else {
                continue;
            };
            let at = format!("payload node {i}");
            let tag = field(buf, node, xf::XNode::VT_XNODE_UNION_TYPE);
            t.field(format!("{at} union tag"), tag, 1, &[0, 7, 60, 255]);
            // Every field of the node's own table is a 4-byte id, parameter or offset.
            if let Some(inner) = table(buf, node, xf::XNode::VT_XNODE_UNION) {
                for (k, pos) in all_fields(buf, inner).into_iter().enumerate() {
                    t.field(format!("{at} field {k}"), Some(pos), 4, &id_bad);
                }
            }
        }
    }
    if let Some(values) = values {
        for i in 0..values.len {
            value_targets(buf, values, i, n_values, n_consts, &mut t);
        }
    }
    t
}

fn value_targets(
    buf: &[u8],
    values: Vector,
    i: usize,
    n_values: i64,
    n_consts: i64,
    t: &mut Targets,
) {
    let Some(v) = values.table(buf, i) else {
        return;
    };
    let at = format!("payload value {i}");
    let tag = field(buf, v, xf::XValue::VT_XVALUE_UNION_TYPE);
    t.field(format!("{at} union tag"), tag, 1, &[0, 3, 255]);
    let Some(mut tv) = table(buf, v, xf::XValue::VT_XVALUE_UNION) else {
        return;
    };
    if tag.map(|p| buf[p]) == Some(2) {
        let q = tv;
        type Q<'a> = xf::XNNQuantizedTensorValue<'a>;
        let qt = field(buf, q, Q::VT_QUANT_PARAMS_TYPE);
        t.field(format!("{at} quant params tag"), qt, 1, &[0, 9, 255]);
        let Some(inner) = table(buf, q, Q::VT_TENSOR_VALUE) else {
            return;
        };
        tv = inner;
    }
    type T<'a> = xf::XNNTensorValue<'a>;
    let f = |vt| field(buf, tv, vt);
    t.field(
        format!("{at} datatype"),
        f(T::VT_DATATYPE),
        2,
        &[-1, 0, 100],
    );
    t.field(
        format!("{at} rank"),
        f(T::VT_NUM_DIMS),
        4,
        &[0, 7, u32::MAX as i64],
    );
    if let Some(dims) = vector(buf, tv, T::VT_DIMS) {
        for d in 0..dims.len {
            let dims_bad = [0, u32::MAX as i64, 1 << 20];
            t.field(format!("{at} dim {d}"), Some(dims.at(d, 4)), 4, &dims_bad);
        }
        t.field(
            format!("{at} dims length"),
            Some(dims.len_pos),
            4,
            &[0, 1 << 30],
        );
    }
    let consts = [n_consts, n_consts + 1, u32::MAX as i64];
    t.field(
        format!("{at} constant"),
        f(T::VT_CONSTANT_BUFFER_IDX),
        4,
        &consts,
    );
    t.field(
        format!("{at} external id"),
        f(T::VT_EXTERNAL_ID),
        4,
        &[n_values, u32::MAX as i64],
    );
    t.field(
        format!("{at} id out"),
        f(T::VT_ID_OUT),
        4,
        &[n_values, u32::MAX as i64],
    );
    t.field(format!("{at} flags"), f(T::VT_FLAGS), 4, &[u32::MAX as i64]);
}
