//! The targeted corruptions of a `.pte`: each reaches one field the loader reads, located
//! through the schema's vtable offsets, and sets it to values a well-formed exporter never
//! writes. (Data files and XNNPACK payloads: [`crate::targeted_data`].)

use std::collections::BTreeMap;

use et_schema::fields as pf;

use crate::locate::{field, root, sample, table, vector, Targets, Write};

/// Values for a 32-bit signed size or index field: negative, huge, boundary.
const I32_BAD: &[i64] = &[-1, i32::MIN as i64, i32::MAX as i64, 1 << 20];
/// Values for a 64-bit size or offset.
const I64_BAD: &[i64] = &[-1, i64::MIN, i64::MAX, 1 << 40, 1 << 62];
/// How many elements of a long list (values, instructions) get corruptions: the suite
/// stays bounded on large programs.
const CAP: usize = 48;

/// Every targeted corruption of the `.pte` flatbuffer in `buf` (root at 0).
pub fn program(buf: &[u8]) -> Targets {
    let mut t = Targets::default();
    let Some(p) = root(buf, 0) else { return t };
    type P<'a> = pf::Program<'a>;
    let n_segments = vector(buf, p, P::VT_SEGMENTS).map_or(0, |v| v.len);
    if let Some(segs) = vector(buf, p, P::VT_SEGMENTS) {
        let file = buf.len() as i64;
        for i in 0..segs.len {
            let s = segs.table(buf, i);
            let f = |vt| s.and_then(|s| field(buf, s, vt));
            let past = [file, file + 1, u64::MAX as i64, i64::MAX, -16];
            t.field(
                format!("segment {i} offset"),
                f(pf::DataSegment::VT_OFFSET),
                8,
                &past,
            );
            t.field(
                format!("segment {i} size"),
                f(pf::DataSegment::VT_SIZE),
                8,
                &past,
            );
        }
    }
    if let Some(cs) = table(buf, p, P::VT_CONSTANT_SEGMENT) {
        type S<'a> = pf::SubsegmentOffsets<'a>;
        let idx = [n_segments as i64, u32::MAX as i64];
        t.field(
            "constant segment index",
            field(buf, cs, S::VT_SEGMENT_INDEX),
            4,
            &idx,
        );
        if let Some(offs) = vector(buf, cs, S::VT_OFFSETS) {
            for i in sample(offs.len, CAP) {
                let label = format!("constant offset {i}");
                t.field(label, Some(offs.at(i, 8)), 8, I64_BAD);
            }
        }
    }
    if let Some(named) = vector(buf, p, P::VT_NAMED_DATA) {
        for i in sample(named.len, CAP) {
            let nd = named.table(buf, i);
            let pos = nd.and_then(|nd| field(buf, nd, pf::NamedData::VT_SEGMENT_INDEX));
            let idx = [n_segments as i64, u32::MAX as i64];
            t.field(format!("named data {i} segment"), pos, 4, &idx);
        }
    }
    if let Some(cb) = vector(buf, p, P::VT_CONSTANT_BUFFER) {
        t.field("constant buffer count", Some(cb.len_pos), 4, &[0, 1 << 30]);
    }
    let n_constants = vector(buf, p, P::VT_CONSTANT_BUFFER).map_or(0, |v| v.len) as i64;
    let n_delegate_data = vector(buf, p, P::VT_BACKEND_DELEGATE_DATA).map_or(0, |v| v.len) as i64;
    if let Some(plans) = vector(buf, p, P::VT_EXECUTION_PLAN) {
        for i in 0..plans.len {
            if let Some(plan) = plans.table(buf, i) {
                let ctx = Ctx {
                    n_segments: n_segments as i64,
                    n_constants,
                    n_delegate_data,
                };
                plan_targets(buf, plan, &format!("plan {i}"), &ctx, &mut t);
            }
        }
    }
    t
}

struct Ctx {
    n_segments: i64,
    n_constants: i64,
    n_delegate_data: i64,
}

fn plan_targets(buf: &[u8], plan: usize, at: &str, ctx: &Ctx, t: &mut Targets) {
    type E<'a> = pf::ExecutionPlan<'a>;
    let values = vector(buf, plan, E::VT_VALUES);
    let n_values = values.map_or(0, |v| v.len) as i64;
    // One value index of each kind: an index field pointed at a value of the wrong kind.
    let mut kinds = BTreeMap::new();
    let tag_of = |i: usize| {
        let v = values?.table(buf, i)?;
        crate::locate::rd(buf, field(buf, v, pf::EValue::VT_VAL_TYPE)?, 1)
    };
    for i in 0..n_values as usize {
        if let Some(tag) = tag_of(i) {
            kinds.entry(tag).or_insert(i as i64);
        }
    }
    let mut index_bad: Vec<i64> = vec![-1, n_values, n_values + 1, i32::MAX as i64];
    index_bad.extend(kinds.values());
    let n_buffers = vector(buf, plan, E::VT_NON_CONST_BUFFER_SIZES).map_or(0, |v| v.len);
    if let Some(sizes) = vector(buf, plan, E::VT_NON_CONST_BUFFER_SIZES) {
        for i in 0..sizes.len {
            t.field(
                format!("{at} planned buffer {i} size"),
                Some(sizes.at(i, 8)),
                8,
                I64_BAD,
            );
        }
        t.field(
            format!("{at} planned buffer count"),
            Some(sizes.len_pos),
            4,
            &[0, 1 << 30],
        );
    }
    if let Some(values) = values {
        t.field(
            format!("{at} value count"),
            Some(values.len_pos),
            4,
            &[0, n_values + 1, 1 << 30],
        );
        for i in sample(values.len, CAP * 2) {
            let Some(v) = values.table(buf, i) else {
                continue;
            };
            let at = format!("{at} value {i}");
            let tag_pos = field(buf, v, pf::EValue::VT_VAL_TYPE);
            let current = tag_of(i).map_or(-1, |t| t as i64);
            let tags: Vec<i64> = (0..=12).chain([255]).filter(|&x| x != current).collect();
            t.field(format!("{at} union tag"), tag_pos, 1, &tags);
            let Some(val) = table(buf, v, pf::EValue::VT_VAL) else {
                continue;
            };
            match tag_of(i).unwrap_or(0) as u8 {
                5 => tensor_targets(buf, val, &at, ctx, n_buffers, t),
                2 => t.field(
                    format!("{at} int"),
                    field(buf, val, pf::Int::VT_INT_VAL),
                    8,
                    I64_BAD,
                ),
                7 => list_targets(buf, val, pf::IntList::VT_ITEMS, 8, &at, &index_bad, t),
                10 => list_targets(buf, val, pf::TensorList::VT_ITEMS, 4, &at, &index_bad, t),
                11 => list_targets(
                    buf,
                    val,
                    pf::OptionalTensorList::VT_ITEMS,
                    4,
                    &at,
                    &index_bad,
                    t,
                ),
                8 | 9 => {
                    let items = vector(buf, val, pf::DoubleList::VT_ITEMS);
                    let len = items.map(|v| v.len_pos);
                    t.field(
                        format!("{at} list length"),
                        len,
                        4,
                        &[1 << 30, u32::MAX as i64],
                    );
                }
                _ => {}
            }
        }
    }
    for (vt, what) in [(E::VT_INPUTS, "input"), (E::VT_OUTPUTS, "output")] {
        if let Some(io) = vector(buf, plan, vt) {
            for i in 0..io.len {
                t.field(format!("{at} {what} {i}"), Some(io.at(i, 4)), 4, &index_bad);
            }
            t.field(
                format!("{at} {what} count"),
                Some(io.len_pos),
                4,
                &[0, 1 << 30],
            );
        }
    }
    let n_ops = vector(buf, plan, E::VT_OPERATORS).map_or(0, |v| v.len) as i64;
    let n_delegates = vector(buf, plan, E::VT_DELEGATES).map_or(0, |v| v.len) as i64;
    if let Some(ops) = vector(buf, plan, E::VT_OPERATORS) {
        t.field(format!("{at} operator count"), Some(ops.len_pos), 4, &[0]);
    }
    if let Some(dels) = vector(buf, plan, E::VT_DELEGATES) {
        type R<'a> = pf::BackendDelegateDataReference<'a>;
        for i in 0..dels.len {
            let processed = dels
                .table(buf, i)
                .and_then(|d| table(buf, d, pf::BackendDelegate::VT_PROCESSED));
            let f = |vt| processed.and_then(|p| field(buf, p, vt));
            t.field(
                format!("{at} delegate {i} location"),
                f(R::VT_LOCATION),
                1,
                &[1, 2, -1],
            );
            let idx = [ctx.n_delegate_data, ctx.n_segments, u32::MAX as i64];
            t.field(format!("{at} delegate {i} index"), f(R::VT_INDEX), 4, &idx);
        }
    }
    if let Some(chains) = vector(buf, plan, E::VT_CHAINS) {
        for c in 0..chains.len {
            let Some(chain) = chains.table(buf, c) else {
                continue;
            };
            let at = format!("{at} chain {c}");
            let ctx = InstrCtx {
                index_bad: &index_bad,
                n_ops,
                n_delegates,
            };
            chain_targets(buf, chain, &at, &ctx, t);
        }
    }
}

fn list_targets(
    buf: &[u8],
    list: usize,
    vt: u16,
    width: usize,
    at: &str,
    bad: &[i64],
    t: &mut Targets,
) {
    let Some(items) = vector(buf, list, vt) else {
        return;
    };
    for i in sample(items.len, 4) {
        t.field(
            format!("{at} element {i}"),
            Some(items.at(i, width)),
            width,
            bad,
        );
    }
    t.field(
        format!("{at} list length"),
        Some(items.len_pos),
        4,
        &[0, 1 << 30],
    );
}

fn tensor_targets(
    buf: &[u8],
    tensor: usize,
    at: &str,
    ctx: &Ctx,
    n_buffers: usize,
    t: &mut Targets,
) {
    type T<'a> = pf::Tensor<'a>;
    let f = |vt| field(buf, tensor, vt);
    t.field(
        format!("{at} scalar type"),
        f(T::VT_SCALAR_TYPE),
        1,
        &[-1, 8, 9, 10, 30, 127],
    );
    t.field(
        format!("{at} storage offset"),
        f(T::VT_STORAGE_OFFSET),
        4,
        I32_BAD,
    );
    let bad_idx = [ctx.n_constants, ctx.n_constants + 1, u32::MAX as i64];
    t.field(
        format!("{at} data buffer"),
        f(T::VT_DATA_BUFFER_IDX),
        4,
        &bad_idx,
    );
    t.field(
        format!("{at} dynamism"),
        f(T::VT_SHAPE_DYNAMISM),
        1,
        &[1, 2, 3, -1],
    );
    let rank = vector(buf, tensor, T::VT_SIZES);
    if let Some(sizes) = rank {
        for d in 0..sizes.len {
            let values = [-1, 0, i32::MAX as i64, i32::MIN as i64, 65536];
            t.field(format!("{at} size {d}"), Some(sizes.at(d, 4)), 4, &values);
        }
        // Sizes whose product overflows every integer type.
        let huge = |v: u64| {
            (0..sizes.len)
                .map(|d| Write {
                    pos: sizes.at(d, 4),
                    width: 4,
                    value: v,
                })
                .collect()
        };
        t.multi(format!("{at} sizes all i32::MAX"), huge(i32::MAX as u64));
        t.multi(format!("{at} sizes all 65536"), huge(65536));
        t.field(
            format!("{at} rank"),
            Some(sizes.len_pos),
            4,
            &[17, 64, 1 << 30],
        );
    }
    if let Some(order) = vector(buf, tensor, T::VT_DIM_ORDER) {
        let n = order.len as i64;
        for d in 0..order.len {
            // Out of range, or a duplicate of the next entry: not a permutation.
            let dup = crate::locate::rd(buf, order.at((d + 1) % order.len, 1), 1).unwrap_or(0);
            let values = [n, 255, dup as i64];
            t.field(
                format!("{at} dim order {d}"),
                Some(order.at(d, 1)),
                1,
                &values,
            );
        }
        let rank = rank.map_or(0, |r| r.len as i64);
        t.field(
            format!("{at} dim order length"),
            Some(order.len_pos),
            4,
            &[rank + 1, 0],
        );
    }
    if let Some(alloc) = table(buf, tensor, T::VT_ALLOCATION_INFO) {
        type A<'a> = pf::AllocationDetails<'a>;
        let f = |vt| field(buf, alloc, vt);
        let ids = [0, n_buffers as i64, n_buffers as i64 + 1, u32::MAX as i64];
        t.field(format!("{at} memory id"), f(A::VT_MEMORY_ID), 4, &ids);
        let offs = [u32::MAX as i64, 0x7fff_fff0, 1 << 20];
        t.field(
            format!("{at} memory offset"),
            f(A::VT_MEMORY_OFFSET_LOW),
            4,
            &offs,
        );
        t.field(
            format!("{at} memory offset high"),
            f(A::VT_MEMORY_OFFSET_HIGH),
            4,
            &[1, u32::MAX as i64],
        );
    }
    if let Some(extra) = table(buf, tensor, T::VT_EXTRA_TENSOR_INFO) {
        type X<'a> = pf::ExtraTensorInfo<'a>;
        let loc = field(buf, extra, X::VT_LOCATION);
        t.field(format!("{at} data location"), loc, 1, &[0, 1, 2, -1]);
        let seg = field(buf, extra, X::VT_MUTABLE_DATA_SEGMENTS_IDX);
        t.field(format!("{at} mutable segment"), seg, 8, I64_BAD);
    }
}

struct InstrCtx<'a> {
    index_bad: &'a [i64],
    n_ops: i64,
    n_delegates: i64,
}

fn chain_targets(buf: &[u8], chain: usize, at: &str, ctx: &InstrCtx<'_>, t: &mut Targets) {
    type C<'a> = pf::Chain<'a>;
    let Some(instrs) = vector(buf, chain, C::VT_INSTRUCTIONS) else {
        return;
    };
    // An empty chain, and one claiming more instructions than it has.
    t.field(
        format!("{at} instruction count"),
        Some(instrs.len_pos),
        4,
        &[0, instrs.len as i64 + 1],
    );
    for (vt, what) in [(C::VT_INPUTS, "input"), (C::VT_OUTPUTS, "output")] {
        if let Some(io) = vector(buf, chain, vt) {
            for i in sample(io.len, 4) {
                t.field(
                    format!("{at} {what} {i}"),
                    Some(io.at(i, 4)),
                    4,
                    ctx.index_bad,
                );
            }
        }
    }
    let n = instrs.len as i64;
    for i in sample(instrs.len, CAP) {
        let Some(instr) = instrs.table(buf, i) else {
            continue;
        };
        instruction_targets(buf, instr, &format!("{at} instruction {i}"), n, ctx, t);
    }
}

fn instruction_targets(
    buf: &[u8],
    instr: usize,
    at: &str,
    n: i64,
    ctx: &InstrCtx<'_>,
    t: &mut Targets,
) {
    type I<'a> = pf::Instruction<'a>;
    let Some(tag_pos) = field(buf, instr, I::VT_INSTR_ARGS_TYPE) else {
        return;
    };
    let tag = buf[tag_pos];
    let tags: Vec<i64> = (0..=6)
        .chain([255])
        .filter(|&x| x != i64::from(tag))
        .collect();
    t.field(format!("{at} union tag"), Some(tag_pos), 1, &tags);
    let Some(args) = table(buf, instr, I::VT_INSTR_ARGS) else {
        return;
    };
    let f = |vt| field(buf, args, vt);
    let index_list = |t: &mut Targets, vt, what: &str| {
        if let Some(list) = vector(buf, args, vt) {
            for k in sample(list.len, 3) {
                t.field(
                    format!("{at} {what} {k}"),
                    Some(list.at(k, 4)),
                    4,
                    ctx.index_bad,
                );
            }
            t.field(
                format!("{at} {what} count"),
                Some(list.len_pos),
                4,
                &[0, 1 << 30],
            );
        }
    };
    match tag {
        1 => {
            let ops = [-1, ctx.n_ops, i32::MAX as i64];
            t.field(
                format!("{at} operator"),
                f(pf::KernelCall::VT_OP_INDEX),
                4,
                &ops,
            );
            index_list(t, pf::KernelCall::VT_ARGS, "argument");
        }
        2 => {
            let d = [-1, ctx.n_delegates, i32::MAX as i64];
            t.field(
                format!("{at} delegate"),
                f(pf::DelegateCall::VT_DELEGATE_INDEX),
                4,
                &d,
            );
            index_list(t, pf::DelegateCall::VT_ARGS, "argument");
        }
        3 => {
            t.field(
                format!("{at} move from"),
                f(pf::MoveCall::VT_MOVE_FROM),
                4,
                ctx.index_bad,
            );
            t.field(
                format!("{at} move to"),
                f(pf::MoveCall::VT_MOVE_TO),
                4,
                ctx.index_bad,
            );
        }
        4 => {
            type J<'a> = pf::JumpFalseCall<'a>;
            let cond = f(J::VT_COND_VALUE_INDEX);
            t.field(format!("{at} condition"), cond, 4, ctx.index_bad);
            // A jump to every instruction, one past the end, and beyond.
            let dests: Vec<i64> = (-1..=n + 1)
                .chain([i32::MAX as i64, i32::MIN as i64])
                .collect();
            t.field(
                format!("{at} destination"),
                f(J::VT_DESTINATION_INSTRUCTION),
                4,
                &dests,
            );
        }
        5 => {
            t.field(
                format!("{at} freed value"),
                f(pf::FreeCall::VT_VALUE_INDEX),
                4,
                ctx.index_bad,
            );
        }
        _ => {}
    }
}
