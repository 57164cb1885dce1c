//! The mutation suite: fixture programs (small ones, control flow, dynamic shapes, two
//! methods, `tiny_transformer`, XNNPACK-delegated ones, one with a `.ptd`, a bundled
//! program) cut at every length (a stride on large files), with thousands of seeded byte
//! and bit mutations, and with targeted corruptions of the fields the loader reads
//! (located through the schema's vtable offsets, so each reaches its field). Every file
//! goes through load, load_method on every method, inputs, execute and outputs; each step
//! must return `Ok` or `Err`. A panic fails the test naming the fixture and the case (a
//! random case by its seed), a hang ends the process naming it, and every buffer is
//! allocated through `MethodBuffers::allocate` under a limit.
//!
//! `cargo test -p etch-tests --test mutation -- --nocapture` prints the counts.
//! `ETCH_MUTATION_DIVISOR=N` runs one case in N (for valgrind:
//! `scripts/valgrind-mutation.sh`).

use std::ops::Range;

use et_runtime::{DataFile, FileLoader, Program};
use et_schema::bundled::BundledProgram;
use et_schema::ExtendedHeader;
use etch_tests::{dtype_of, fixture, fixtures_dir, IoSpec};

// Link the kernel library and the XNNPACK backend.
use et_ops as _;
use et_xnnpack as _;

mod findings;
mod harness;
mod locate;
mod targeted;
mod targeted_data;

use harness::{run_bundled, run_program, run_program_with, Inputs, Prng, Stats};
use locate::Targets;

/// One case in this many runs (1 normally; more under valgrind).
fn divisor() -> usize {
    std::env::var("ETCH_MUTATION_DIVISOR")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// The inputs of fixture `name`'s io.yaml (none when it has no io.yaml).
fn inputs_of(name: &str) -> Inputs {
    // A fixture in a subdirectory (`q8/q8_fire`) has its io there.
    let (dir, name) = match name.rsplit_once('/') {
        Some((sub, base)) => (fixtures_dir().join(sub), base),
        None => (fixtures_dir(), name),
    };
    if !dir.join(format!("{name}.io.yaml")).exists() {
        return Inputs::default();
    }
    let spec = IoSpec::read(&dir, name);
    Inputs {
        method: spec.method.clone(),
        tensors: spec
            .inputs
            .iter()
            .map(|t| {
                let data = std::fs::read(dir.join(&t.file)).unwrap();
                (dtype_of(&t.dtype), t.sizes.clone(), data)
            })
            .collect(),
    }
}

/// The flatbuffer part of a `.pte` (before its segments), where random mutations mostly
/// go: the rest is tensor data, which any bytes fill validly.
fn flatbuffer_region(bytes: &[u8]) -> Range<usize> {
    match ExtendedHeader::parse(bytes) {
        Ok(Some(h)) if h.segment_base_offset > 0 => {
            0..(h.segment_base_offset as usize).min(bytes.len())
        }
        _ => 0..bytes.len(),
    }
}

/// Where the first delegate payload of `forward` lies in the file, if any.
pub fn payload_range(bytes: &[u8]) -> Option<Range<usize>> {
    let loader = FileLoader::from_bytes(bytes);
    let program = Program::load(&loader).ok()?;
    let payload = program.delegates("forward").ok()?.next()?.ok()?.payload;
    let start = payload.as_ptr() as usize - loader.bytes().as_ptr() as usize;
    Some(start..start + payload.len())
}

const INTERESTING: &[u32] = &[0, 1, 0xff, 0xffff, 0x7fff_ffff, 0x8000_0000, u32::MAX];

/// The file after a few random edits (bytes, bits, interesting words, zeroed or copied
/// runs) chosen by `seed`; three in four land in one of the `focus` ranges.
pub fn random_mutation(original: &[u8], focus: &[Range<usize>], seed: u64) -> Vec<u8> {
    let mut rng = Prng::new(seed);
    let mut b = original.to_vec();
    let len = b.len();
    if len == 0 {
        return b;
    }
    for _ in 0..1 + rng.below(4) {
        let at = match focus.get(rng.below(focus.len().max(1))) {
            Some(r) if !r.is_empty() && rng.below(4) != 0 => r.start + rng.below(r.len()),
            _ => rng.below(len),
        };
        match rng.below(5) {
            0 => b[at] = rng.next() as u8,
            1 => b[at] ^= 1 << rng.below(8),
            2 => {
                let at = (at & !3).min(len.saturating_sub(4));
                let v = INTERESTING[rng.below(INTERESTING.len())].to_le_bytes();
                let n = 4.min(len - at);
                b[at..at + n].copy_from_slice(&v[..n]);
            }
            3 => {
                let n = (1 + rng.below(16)).min(len - at);
                b[at..at + n].fill(0);
            }
            _ => {
                let from = rng.below(len);
                let n = (4 + rng.below(28)).min(len - at).min(len - from);
                b.copy_within(from..from + n, at);
            }
        }
    }
    b
}

/// The mutations of one fixture file, run through `run` (which gets the mutated bytes).
struct Plan<'a> {
    name: &'a str,
    original: &'a [u8],
    focus: Vec<Range<usize>>,
    random: usize,
    /// Truncations tried: about this many (every length below it).
    truncations: usize,
    targets: Targets,
}

impl Plan<'_> {
    fn run(
        &self,
        stats: &mut Stats,
        kinds: &mut Vec<(&'static str, usize)>,
        run: impl Fn(&[u8]) -> bool,
    ) {
        let d = divisor();
        let n = self.original.len();
        let stride = (n / self.truncations).max(1) * d;
        let mut count = 0;
        for len in (0..n).step_by(stride) {
            count += 1;
            stats.case(
                || format!("{} cut to {len} bytes", self.name),
                || run(&self.original[..len]),
            );
        }
        kinds.push(("truncations", count));
        let base = fnv(self.name);
        let mut count = 0;
        for k in (0..self.random as u64).step_by(d) {
            let seed = base ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let bytes = random_mutation(self.original, &self.focus, seed);
            count += 1;
            stats.case(
                || format!("{} random seed {seed:#x}", self.name),
                || run(&bytes),
            );
        }
        kinds.push(("random", count));
        let mut count = 0;
        for m in self.targets.list.iter().step_by(d) {
            let bytes = m.apply(self.original);
            count += 1;
            stats.case(|| format!("{}: {}", self.name, m.label), || run(&bytes));
        }
        kinds.push(("targeted", count));
    }
}

/// A stable per-fixture seed base.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The whole treatment for a program fixture without a data file.
fn mutate_program(name: &str, random: usize) {
    mutate(name, random, true);
}

/// [`mutate_program`]; `runs` says whether the unmodified file runs (without its data
/// file, one does not).
fn mutate(name: &str, random: usize, runs: bool) {
    let original = std::fs::read(fixture(&format!("{name}.pte"))).unwrap();
    let inputs = inputs_of(name);
    assert_eq!(
        run_program(&original, None, &inputs),
        runs,
        "{name} unmodified"
    );
    let mut focus = vec![flatbuffer_region(&original)];
    let mut targets = targeted::program(&original);
    if let Some(payload) = payload_range(&original) {
        targets
            .list
            .extend(targeted_data::payload(&original, payload.clone()).list);
        focus.push(payload);
    }
    let plan = Plan {
        name,
        original: &original,
        focus,
        random,
        truncations: 4000,
        targets,
    };
    let (mut stats, mut kinds) = (Stats::default(), Vec::new());
    plan.run(&mut stats, &mut kinds, |b| run_program(b, None, &inputs));
    stats.finish(name, &kinds);
}

#[test]
fn add() {
    mutate_program("add", 10_000);
}

#[test]
fn cond_control_flow() {
    mutate_program("cond", 10_000);
}

#[test]
fn dynamic_shapes() {
    mutate_program("dynamic", 10_000);
}

#[test]
fn two_methods() {
    mutate_program("two_methods", 5000);
}

#[test]
fn mlp() {
    mutate_program("mlp", 10_000);
}

#[test]
fn tiny_transformer() {
    mutate_program("tiny_transformer", 5000);
}

#[test]
fn mlp_xnnpack_delegated() {
    mutate_program("mlp_xnnpack", 10_000);
}

#[test]
fn small_cnn_xnnpack_delegated() {
    mutate_program("small_cnn_xnnpack", 5000);
}

/// Without its `.ptd`: the delegate is refused at init, after the payload's estimates.
#[test]
fn mv2_xnnpack_ptd_program() {
    mutate("mv2_xnnpack_ptd", 3000, false);
}

#[test]
fn mlp_xnnpack_qd8_delegated() {
    mutate_program("mlp_xnnpack_qd8", 5000);
}

/// The int8 kinds of the XNNPACK quantizer's CNNs: MaxPooling2d, Concatenate2 and
/// Multiply on qint8, AvgPooling2d and the activations between Converts.
#[test]
fn q8_xnnpack_delegated() {
    for name in ["q8/q8_fire", "q8/q8_se", "q8/q8_pool"] {
        mutate_program(name, 2000);
    }
}

/// A program with a `.ptd`: the data file mutated under the good program, and the
/// program mutated with the good data file.
#[test]
fn mlp_with_data_file() {
    let name = "mlp_ptd";
    let pte = std::fs::read(fixture("mlp_ptd.pte")).unwrap();
    let ptd = std::fs::read(fixture("mlp_ptd.ptd")).unwrap();
    let inputs = inputs_of(name);
    assert!(
        run_program(&pte, Some(&ptd), &inputs),
        "{name} runs unmodified"
    );
    let (mut stats, mut kinds) = (Stats::default(), Vec::new());
    let data_plan = Plan {
        name: "mlp_ptd.ptd",
        original: &ptd,
        focus: vec![flatbuffer_region(&ptd)],
        random: 10_000,
        truncations: 4000,
        targets: targeted_data::data_file(&ptd),
    };
    data_plan.run(&mut stats, &mut kinds, |b| {
        run_program(&pte, Some(b), &inputs)
    });
    let program_plan = Plan {
        name: "mlp_ptd.pte",
        original: &pte,
        focus: vec![flatbuffer_region(&pte)],
        random: 5000,
        truncations: 4000,
        targets: targeted::program(&pte),
    };
    program_plan.run(&mut stats, &mut kinds, |b| {
        run_program(b, Some(&ptd), &inputs)
    });
    stats.finish(name, &kinds);
}

/// An XNNPACK delegate whose weights live in a `.ptd` (named data read at delegate
/// init): the payload mutated with the good, large data file loaded once. Each case that
/// gets through init packs mv2's weights and runs it, so the cases are sampled.
#[test]
fn mv2_xnnpack_with_data_file() {
    let name = "mv2_xnnpack_ptd";
    let pte = std::fs::read(fixture("mv2_xnnpack_ptd.pte")).unwrap();
    let data_loader = FileLoader::open(fixture("mv2_xnnpack_ptd.ptd")).unwrap();
    let data = DataFile::load(&data_loader, "mv2_xnnpack_ptd.ptd").unwrap();
    let files = [&data];
    let inputs = inputs_of(name);
    assert!(
        run_program_with(&pte, &files, &inputs),
        "{name} runs unmodified"
    );
    let payload = payload_range(&pte).unwrap();
    let all = targeted_data::payload(&pte, payload.clone()).list;
    let targets = Targets {
        list: all.iter().step_by(all.len() / 150 + 1).cloned().collect(),
    };
    let plan = Plan {
        name: "mv2_xnnpack_ptd.pte with its .ptd",
        original: &pte,
        focus: vec![payload],
        random: 100,
        truncations: 100,
        targets,
    };
    let (mut stats, mut kinds) = (Stats::default(), Vec::new());
    plan.run(&mut stats, &mut kinds, |b| {
        run_program_with(b, &files, &inputs)
    });
    stats.finish("mv2_xnnpack_ptd with its .ptd", &kinds);
}

/// A bundled program: the outer file and the program inside it.
#[test]
fn mlp_bundled() {
    let original = std::fs::read(fixture("mlp.bpte")).unwrap();
    assert!(run_bundled(&original), "mlp.bpte runs unmodified");
    // The program's own fields, at their place inside the bundle.
    let inner = BundledProgram::parse(&original).unwrap().program().unwrap();
    let offset = inner.as_ptr() as usize - original.as_ptr() as usize;
    let mut targets = targeted::program(inner);
    for w in targets.list.iter_mut().flat_map(|m| m.writes.iter_mut()) {
        w.pos += offset;
    }
    let inner_range = offset..offset + inner.len();
    let plan = Plan {
        name: "mlp.bpte",
        original: &original,
        focus: vec![inner_range],
        random: 10_000,
        truncations: 4000,
        targets,
    };
    let (mut stats, mut kinds) = (Stats::default(), Vec::new());
    plan.run(&mut stats, &mut kinds, run_bundled);
    stats.finish("mlp.bpte", &kinds);
}
