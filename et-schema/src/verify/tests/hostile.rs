//! Hand-made hostile buffers: a small valid program built with the flatbuffers builder,
//! corrupted one structural rule at a time; each must be refused.

use super::{check, read};
use crate::generated::{checked_root, fb};
use crate::verify::*;
use std::time::Instant;
use std::vec;
use std::vec::Vec;

// --- hand-made hostile buffers ------------------------------------------------------

/// A small valid program built with the flatbuffers builder, and where its parts are.
struct Built {
    buf: Vec<u8>,
    root: usize,
    /// Length prefix of `execution_plan[0].values`.
    values: usize,
    /// The EValue `values[0]` (an Int) and `values[1]` (a Tensor).
    evalue: usize,
    /// First byte of the plan name.
    name: usize,
    name_len: usize,
}

fn vector_pos<T>(buf: &[u8], v: flatbuffers::Vector<'_, T>) -> usize {
    v.bytes().as_ptr() as usize - buf.as_ptr() as usize - 4
}

fn build() -> Built {
    use flatbuffers::FlatBufferBuilder;
    let mut b = FlatBufferBuilder::new();
    let sizes = b.create_vector(&[2i32, 3]);
    let dim_order = b.create_vector(&[0u8, 1]);
    let fqn = b.create_string("w");
    let extra = fb::ExtraTensorInfo::create(
        &mut b,
        &fb::ExtraTensorInfoArgs {
            fully_qualified_name: Some(fqn),
            ..Default::default()
        },
    );
    let tensor = fb::Tensor::create(
        &mut b,
        &fb::TensorArgs {
            scalar_type: fb::ScalarType::FLOAT,
            sizes: Some(sizes),
            dim_order: Some(dim_order),
            extra_tensor_info: Some(extra),
            ..Default::default()
        },
    );
    let int = fb::Int::create(&mut b, &fb::IntArgs { int_val: 7 });
    let values = [
        fb::EValue::create(
            &mut b,
            &fb::EValueArgs {
                val_type: fb::KernelTypes::Int,
                val: Some(int.as_union_value()),
            },
        ),
        fb::EValue::create(
            &mut b,
            &fb::EValueArgs {
                val_type: fb::KernelTypes::Tensor,
                val: Some(tensor.as_union_value()),
            },
        ),
    ];
    let values = b.create_vector(&values);
    let args = b.create_vector(&[0i32, 1]);
    let call = fb::KernelCall::create(
        &mut b,
        &fb::KernelCallArgs {
            op_index: 0,
            args: Some(args),
        },
    );
    let instr = fb::Instruction::create(
        &mut b,
        &fb::InstructionArgs {
            instr_args_type: fb::InstructionArguments::KernelCall,
            instr_args: Some(call.as_union_value()),
        },
    );
    let instrs = b.create_vector(&[instr]);
    let chain = fb::Chain::create(
        &mut b,
        &fb::ChainArgs {
            instructions: Some(instrs),
            ..Default::default()
        },
    );
    let chains = b.create_vector(&[chain]);
    let name = b.create_string("forward");
    let plan = fb::ExecutionPlan::create(
        &mut b,
        &fb::ExecutionPlanArgs {
            name: Some(name),
            values: Some(values),
            chains: Some(chains),
            ..Default::default()
        },
    );
    let plans = b.create_vector(&[plan]);
    let program = fb::Program::create(
        &mut b,
        &fb::ProgramArgs {
            version: 0,
            execution_plan: Some(plans),
            ..Default::default()
        },
    );
    fb::finish_program_buffer(&mut b, program);
    let buf = b.finished_data().to_vec();

    let p = checked_root(&buf).unwrap();
    let plan = p.execution_plan().unwrap().get(0);
    let values = plan.values().unwrap();
    let name = plan.name().unwrap();
    Built {
        root: p._tab.loc(),
        values: vector_pos(&buf, values),
        evalue: values.get(0)._tab.loc(),
        name: name.as_ptr() as usize - buf.as_ptr() as usize,
        name_len: name.len(),
        buf: buf.clone(),
    }
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}
fn put_u16(buf: &mut [u8], at: usize, v: u16) {
    buf[at..at + 2].copy_from_slice(&v.to_le_bytes());
}
fn get_u16(buf: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([buf[at], buf[at + 1]])
}
fn vtable_of(buf: &[u8], table: usize) -> usize {
    let soffset = i32::from_le_bytes(buf[table..table + 4].try_into().unwrap());
    (table as i64 - i64::from(soffset)) as usize
}

/// Applies `corrupt` to a fresh copy of the valid program and expects a rejection
/// (and no panic from either verifier).
fn rejects(what: &str, corrupt: impl FnOnce(&Built, &mut Vec<u8>)) {
    let built = build();
    let mut buf = built.buf.clone();
    corrupt(&built, &mut buf);
    assert_eq!(
        verify_program(&buf),
        Err(Error::InvalidProgram),
        "accepted: {what}"
    );
    let _ = flatbuffers::root::<fb::Program>(&buf);
}

#[test]
fn hostile_buffers_are_rejected() {
    let built = build();
    assert!(check(&built.buf));

    // Root offset out of range, misaligned, or pointing at itself.
    rejects("root offset past the end", |_, b| {
        let n = b.len() as u32;
        put_u32(b, 0, n)
    });
    rejects("root offset u32::MAX", |_, b| put_u32(b, 0, u32::MAX));
    rejects("misaligned root", |bt, b| put_u32(b, 0, bt.root as u32 + 2));
    rejects("root at 0 (self)", |_, b| put_u32(b, 0, 0));
    rejects("empty buffer", |_, b| b.clear());

    // The root table's vtable offset out of range in both directions.
    for soffset in [i32::MIN, i32::MAX, -(1 << 20), 1 << 20, 2] {
        rejects("vtable offset out of range", |bt, b| {
            put_u32(b, bt.root, soffset as u32)
        });
    }
    // Vtable and table sizes.
    for (what, slot, value) in [
        ("odd vtable size", 0, 9),
        ("vtable size below 4", 0, 2),
        ("vtable past the end", 0, 0xfffe),
        ("table size below 4", 2, 0),
        ("table past the end", 2, 0xffff),
    ] {
        rejects(what, |bt, b| {
            let vt = vtable_of(b, bt.root);
            put_u16(b, vt + slot, value)
        });
    }
    // A field outside the table's inline size, and one overlapping the soffset.
    rejects("field beyond the table size", |bt, b| {
        let vt = vtable_of(b, bt.root);
        let size = get_u16(b, vt + 2);
        put_u16(b, vt + 6, size)
    });
    rejects("field over the soffset", |bt, b| {
        let vt = vtable_of(b, bt.evalue);
        put_u16(b, vt + 4, 1) // the u8 union tag, at table offset 1
    });

    // Huge vector lengths (the product overflows u32; on 32-bit targets usize too).
    for len in [
        u32::MAX,
        0x4000_0000,
        0x4000_0001,
        (built.buf.len() / 4) as u32,
    ] {
        rejects("vector length huge", |bt, b| put_u32(b, bt.values, len));
    }
    // A vector element offset of 0: the "table" is the offset itself.
    rejects("self-referencing element", |bt, b| {
        put_u32(b, bt.values + 4, 0)
    });

    // Strings: no NUL terminator, invalid UTF-8, running off the end.
    rejects("string without NUL", |bt, b| {
        b[bt.name + bt.name_len] = b'x'
    });
    rejects("invalid UTF-8", |bt, b| b[bt.name] = 0xff);
    rejects("string length past the end", |bt, b| {
        put_u32(b, bt.name - 4, u32::MAX - 3)
    });
    let cut = built.name + built.name_len;
    rejects("string cut before its NUL", |_, b| b.truncate(cut));

    // Unions: tags out of range, NONE with a value, tag or value missing.
    for tag in [0u8, 12, 200, 255] {
        rejects("bad union tag", |bt, b| {
            let vt = vtable_of(b, bt.evalue);
            let at = bt.evalue + usize::from(get_u16(b, vt + 4));
            b[at] = tag
        });
    }
    rejects("union value without tag", |bt, b| {
        let vt = vtable_of(b, bt.evalue);
        put_u16(b, vt + 4, 0)
    });
    rejects("union tag without value", |bt, b| {
        let vt = vtable_of(b, bt.evalue);
        put_u16(b, vt + 6, 0)
    });
    // A tag naming another member: the value is then checked as that member's table.
    // Whatever the outcome, both verifiers must agree and nothing may panic.
    let mut as_tensor = built.buf.clone();
    let vt = vtable_of(&as_tensor, built.evalue);
    let at = built.evalue + usize::from(get_u16(&as_tensor, vt + 4));
    as_tensor[at] = 5; // Int table read as a Tensor
    check(&as_tensor);
}

/// Builds a program whose offsets are shared at every level: `fan` plans that are
/// all the same plan, with `fan` chains that are the same chain, and so on down to
/// one Frame. Its tree has `fan^4` frames in a buffer of O(fan) bytes.
fn shared_dag(fan: usize) -> Vec<u8> {
    let mut b = flatbuffers::FlatBufferBuilder::new();
    let s = b.create_string("f");
    let frame = fb::Frame::create(
        &mut b,
        &fb::FrameArgs {
            filename: Some(s),
            name: Some(s),
            context: Some(s),
            lineno: 1,
        },
    );
    let frames = b.create_vector(&vec![frame; fan]);
    let list = fb::FrameList::create(
        &mut b,
        &fb::FrameListArgs {
            items: Some(frames),
        },
    );
    let lists = b.create_vector(&vec![list; fan]);
    let chain = fb::Chain::create(
        &mut b,
        &fb::ChainArgs {
            stacktrace: Some(lists),
            ..Default::default()
        },
    );
    let chains = b.create_vector(&vec![chain; fan]);
    let plan = fb::ExecutionPlan::create(
        &mut b,
        &fb::ExecutionPlanArgs {
            chains: Some(chains),
            ..Default::default()
        },
    );
    let plans = b.create_vector(&vec![plan; fan]);
    let program = fb::Program::create(
        &mut b,
        &fb::ProgramArgs {
            execution_plan: Some(plans),
            ..Default::default()
        },
    );
    fb::finish_program_buffer(&mut b, program);
    b.finished_data().to_vec()
}

#[test]
fn shared_offsets_are_bounded_by_the_budget() {
    // Modest sharing is legal flatbuffers and passes.
    let small = shared_dag(4);
    assert!(check(&small));
    // 1000^4 = 10^12 frames reachable from a ~16 KB buffer: rejected, quickly.
    let big = shared_dag(1000);
    assert!(big.len() < 20_000);
    let started = Instant::now();
    assert_eq!(verify_program(&big), Err(Error::InvalidProgram));
    assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
}

#[test]
fn checked_root_reads_a_fixture() {
    let file = read("add.pte");
    let program = checked_root(&file).unwrap();
    let plan = program.execution_plan().unwrap().get(0);
    assert_eq!(plan.name(), Some("forward"));
    assert!(checked_root(&file[..file.len() / 2]).is_err());
}
