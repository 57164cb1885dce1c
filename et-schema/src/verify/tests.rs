//! The structural check against flatbuffers' own verifier and flatc's accessors, on the
//! fixtures, their truncations and random mutations.

extern crate std;

use super::*;
use crate::generated::{checked_root, fb};
use core::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use std::vec::Vec;
use std::{fs, vec};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures");

// --- schema description ---------------------------------------------------------

/// The deepest table nesting of the schema description, panicking on a cycle.
fn depth_of(t: T, seen: &mut Vec<u8>) -> u32 {
    assert!(
        !seen.contains(&(t as u8)),
        "schema description has a cycle through {}",
        TABLE_NAMES[t as usize]
    );
    seen.push(t as u8);
    let mut deepest = 0;
    for &f in TABLE_FIELDS[t as usize] {
        let children = match f {
            Table(c) | Tables(c) => vec![c],
            Union(u) => UNION_MEMBERS[u as usize].to_vec(),
            _ => vec![],
        };
        for c in children {
            deepest = deepest.max(1 + depth_of(c, seen));
        }
    }
    seen.pop();
    deepest
}

#[test]
fn schema_description_is_acyclic_shallow_and_well_formed() {
    let depth = depth_of(T::Program, &mut Vec::new());
    assert_eq!(
        depth, 4,
        "Program > ExecutionPlan > EValue > Tensor > ExtraTensorInfo"
    );
    assert!(depth < MAX_DEPTH);
    for (t, fields) in TABLE_FIELDS.iter().enumerate() {
        // Unions come as tag + value, in adjacent slots.
        for (i, f) in fields.iter().enumerate() {
            let next_is_value = matches!(fields.get(i + 1), Some(Union(_)));
            assert_eq!(matches!(f, UnionType), next_is_value, "{}", TABLE_NAMES[t]);
            if let F::Scalar(n) | F::Vector(n) = f {
                assert!(matches!(n, 1 | 2 | 4 | 8));
            }
        }
        let flat = &FIELDS[usize::from(FIRST[t])..usize::from(FIRST[t + 1])];
        assert_eq!(flat.len(), fields.len());
    }
    assert_eq!(depth_of(T::FtFlatTensor, &mut Vec::new()), 2);
    // Every generated table type appears (the generated code has one `*Args` struct
    // per table), for each schema.
    for (schema, generated) in SCHEMAS {
        let n_generated = generated
            .lines()
            .filter(|l| l.starts_with("pub struct ") && l.contains("Args"))
            .count();
        let described = TABLE_NAMES
            .iter()
            .filter(|n| generated_source(n).0 == schema)
            .count();
        assert_eq!(
            n_generated, described,
            "a table of {schema} is missing here"
        );
    }
    for name in TABLE_NAMES {
        let (_, generated, bare) = generated_source(name);
        assert!(
            generated.contains(&std::format!("pub struct {bare}<'a>")),
            "{name} is not a generated table"
        );
    }
}

/// Each schema and flatc's output for it.
const SCHEMAS: [(&str, &str); 2] = [
    ("program.fbs", include_str!("../program_generated.rs")),
    (
        "flat_tensor.fbs",
        include_str!("../flat_tensor_generated.rs"),
    ),
];

/// The schema a described table belongs to, flatc's output for it, and the table's name
/// there (`Ft` tables are flat_tensor.fbs's).
fn generated_source(name: &str) -> (&'static str, &'static str, &str) {
    match name.strip_prefix("Ft") {
        Some(bare) => (SCHEMAS[1].0, SCHEMAS[1].1, bare),
        None => (SCHEMAS[0].0, SCHEMAS[0].1, name),
    }
}

/// The vtable slot of every field described here agrees with the generated `VT_*`
/// constants: for each table, the number of slots equals the number of `VT_` consts.
#[test]
fn slot_counts_match_generated_code() {
    for (t, name) in TABLE_NAMES.iter().enumerate() {
        let (_, generated, bare) = generated_source(name);
        let start = generated
            .find(&std::format!("impl<'a> {bare}<'a> {{"))
            .unwrap();
        let body = &generated[start..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let vts: Vec<u16> = body
            .lines()
            .filter_map(|l| {
                let l = l.trim();
                let rest = l.strip_prefix("pub const VT_")?;
                let v = rest.rsplit('=').next()?.trim().trim_end_matches(';');
                v.parse().ok()
            })
            .collect();
        let expect: Vec<u16> = (0..TABLE_FIELDS[t].len() as u16)
            .map(|i| 4 + 2 * i)
            .collect();
        assert_eq!(vts, expect, "{name}");
    }
}

// --- UTF-8 ------------------------------------------------------------------------

#[test]
fn is_utf8_agrees_with_core() {
    let same = |b: &[u8]| assert_eq!(is_utf8(b), core::str::from_utf8(b).is_ok(), "{b:x?}");
    same(&[]);
    // Every sequence of 1, 2 and 3 bytes.
    for x in 0..=0xff_ffffu32 {
        let [a, b, c, _] = x.to_le_bytes();
        same(&[a, b, c]);
        if x <= 0xffff {
            same(&[a, b]);
        }
        if x <= 0xff {
            same(&[a]);
        }
    }
    // 4-byte sequences: every lead byte from 0xf0, continuation bytes at every range
    // boundary; and each case between ASCII, to check positions.
    let edges = [
        0x00, 0x3f, 0x7f, 0x80, 0x81, 0x8f, 0x90, 0x9f, 0xa0, 0xa1, 0xbf, 0xc0, 0xc2, 0xe0, 0xf0,
        0xff,
    ];
    for lead in 0xf0..=0xff {
        for &b in &edges {
            for &c in &edges {
                for &d in &edges {
                    same(&[lead, b, c, d]);
                    same(&[b'a', lead, b, c, d, b'z']);
                }
            }
        }
    }
    // Longer mixed text, valid and cut at every byte.
    let text = "a\u{7f}\u{80}\u{7ff}\u{800}\u{d7ff}\u{e000}\u{fffd}\u{10000}\u{10ffff}z".as_bytes();
    for end in 0..=text.len() {
        same(&text[..end]);
        same(&text[end..]);
    }
}

// --- fixtures ---------------------------------------------------------------------

fn pte_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [FIXTURES.into(), Path::new(FIXTURES).join("opcases")] {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "pte") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn read(name: &str) -> Vec<u8> {
    fs::read(Path::new(FIXTURES).join(name)).unwrap()
}

/// The flatbuffer part of a `.pte`: up to `program_size` if there is an eh00 header.
fn program_region(file: &[u8]) -> &[u8] {
    if file.get(8..12) == Some(b"eh00") {
        let size = u64::from_le_bytes(file[16..24].try_into().unwrap());
        &file[..usize::try_from(size).unwrap()]
    } else {
        file
    }
}

/// Reads every field of every table reachable from the root through the generated
/// accessors: the generated `Debug` impls call each field accessor, the `*_as_*`
/// accessor of the tagged union member, and iterate every vector (strings are
/// printed, so read entirely). Unlike a hand-written walk, this covers fields added
/// to the schema later. Returns the length of the text, which is discarded.
fn walk_everything(buf: &[u8]) -> usize {
    struct Count(usize);
    impl core::fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let program = checked_root(buf).expect("accepted before");
    let mut count = Count(0);
    write!(count, "{program:?}").unwrap();
    // The raw union tables and the accessors Debug does not call.
    for plan in program.execution_plan().iter().flatten() {
        for v in plan.values().iter().flatten() {
            let _ = (
                v.val(),
                v.val_as_null(),
                v.val_as_tensor(),
                v.val_as_int_list(),
            );
        }
        for c in plan.chains().iter().flatten() {
            for i in c.instructions().iter().flatten() {
                let _ = (i.instr_args(), i.instr_args_as_kernel_call());
            }
        }
    }
    count.0
}

/// Runs both verifiers. Whenever ours accepts, the crate's must accept too (see the
/// module docs for the intentional differences, none of which these small inputs
/// reach), and walking the whole tree must not panic.
fn check(buf: &[u8]) -> bool {
    let ours = verify_program(buf).is_ok();
    if ours {
        if let Err(e) = flatbuffers::root::<fb::Program>(buf) {
            panic!("accepted here, rejected by the flatbuffers crate: {e}");
        }
        walk_everything(buf);
    }
    ours
}

#[test]
fn every_fixture_passes_and_agrees_with_the_crate_verifier() {
    let files = pte_files();
    assert!(files.len() > 100, "fixtures not found under {FIXTURES}");
    for path in &files {
        let file = fs::read(path).unwrap();
        for buf in [&file[..], program_region(&file)] {
            if let Err(e) = verify_program(buf) {
                panic!("{}: {e}", path.display());
            }
            if let Err(e) = flatbuffers::root::<fb::Program>(buf) {
                panic!("{}: crate verifier: {e}", path.display());
            }
        }
        if file.len() < 1 << 20 {
            assert!(walk_everything(&file) > 0);
        }
    }
}

const SMALL: [&str; 6] = [
    "add.pte",
    "cond.pte",
    "dynamic.pte",
    "custom_ops.pte",
    "mlp_xnnpack.pte",
    "tiny_transformer.pte",
];

#[test]
fn every_truncation_is_handled() {
    for name in SMALL {
        let file = read(name);
        let region = program_region(&file).len();
        // Every length within the flatbuffer, then a few into the segment data (the
        // flatbuffer is intact there, so those all pass).
        let lengths = (0..=region).chain((region..file.len()).step_by(997));
        let mut accepted = 0;
        for len in lengths {
            if check(&file[..len]) {
                accepted += 1;
                assert!(
                    len >= region - 16,
                    "{name}: accepted a cut at {len}/{region}"
                );
            }
        }
        assert!(accepted > 0, "{name}");
    }
}

/// A tiny deterministic PRNG (xorshift64).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Mutates `buf[..region]` in one of several ways aimed at flatbuffer structure.
fn mutate(rng: &mut Rng, buf: &mut [u8], region: usize) {
    let pos = rng.below(region);
    let word = |rng: &mut Rng| match rng.below(8) {
        0 => 0,
        1 => u32::MAX,
        2 => i32::MAX as u32,
        3 => 0x8000_0000,
        4 => rng.below(64) as u32,
        5 => (rng.below(64) as u32).wrapping_neg(),
        _ => rng.next() as u32,
    };
    match rng.below(6) {
        0 => buf[pos] ^= 1 << rng.below(8),
        1 => buf[pos] = rng.next() as u8,
        2 | 3 => {
            let at = pos & !3;
            if at + 4 <= region {
                let old = u32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
                let new = if rng.below(3) == 0 {
                    old.wrapping_add(rng.below(17) as u32).wrapping_sub(8)
                } else {
                    word(rng)
                };
                buf[at..at + 4].copy_from_slice(&new.to_le_bytes());
            }
        }
        4 => {
            let at = pos & !1;
            if at + 2 <= region {
                let new = match rng.below(5) {
                    0 => 0,
                    1 => 0xffff,
                    2 => rng.below(32) as u16,
                    _ => rng.next() as u16,
                };
                buf[at..at + 2].copy_from_slice(&new.to_le_bytes());
            }
        }
        _ => {
            mutate(rng, buf, region);
            mutate(rng, buf, region);
        }
    }
}

/// Mutated buffers per fixture: 10,000 take ~0.05 s per fixture in the workspace's
/// test profile (opt-level 1), ~1.5 s at opt-level 0. Set `ETCH_VERIFY_MUTATIONS` to
/// fuzz longer (1,000,000 per fixture has been run).
fn mutations() -> usize {
    std::env::var("ETCH_VERIFY_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

#[test]
fn random_mutations_are_handled() {
    let started = Instant::now();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let n = mutations();
    for name in SMALL {
        let file = read(name);
        let region = program_region(&file).len();
        let mut buf = file.clone();
        let (mut accepted, mut rejected) = (0, 0);
        for i in 0..n {
            // Up to four mutations pile up before the buffer is restored.
            if i % 4 == 0 {
                buf.copy_from_slice(&file);
            }
            mutate(&mut rng, &mut buf, region);
            if check(&buf) {
                accepted += 1;
            } else {
                rejected += 1;
            }
        }
        // Both outcomes must actually be exercised.
        assert!(
            accepted > 100 && rejected > 100,
            "{name}: {accepted}/{rejected}"
        );
    }
    std::eprintln!("mutations: {:?}", started.elapsed());
}

mod hostile;
