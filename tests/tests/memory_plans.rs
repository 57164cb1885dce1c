//! Programs whose memory plans go beyond one arena with planned inputs and outputs, and
//! programs newer than etch reads (fixtures in `tests/fixtures/executorch_tests/`, made by
//! `scripts/gen-memory-plan-fixtures.py`; see the README there).
//!
//! - `mem_two_arenas`: the graph inputs planned into arena 2 (`mem_id` 2), everything
//!   else into arena 1: three planned buffer sizes, `[0, 256, 64]`.
//! - `unplanned_inputs` / `unplanned_outputs` / `unplanned_io`: exported with
//!   `alloc_graph_input=False` and/or `alloc_graph_output=False`, so those tensors have no
//!   planned memory and the caller provides them.

use et_runtime::{BufferLoader, Error, Program, PROGRAM_ALIGNMENT};
use etch_tests::{compare, fixtures_dir, run_case, IoSpec};

// Link the kernel library: nothing else in this test names it.
use et_ops as _;

fn dir() -> std::path::PathBuf {
    fixtures_dir().join("executorch_tests")
}

/// Runs `case` through the loader and kernels and compares with eager PyTorch.
fn runs(case: &str) {
    let spec = IoSpec::read(&dir(), case);
    let got = run_case(&dir(), &spec).unwrap_or_else(|e| panic!("{case}: {e}"));
    compare(&dir(), &spec, &got).unwrap_or_else(|e| panic!("{case}: {e}"));
}

#[test]
fn a_plan_with_two_arenas_runs() {
    let bytes = std::fs::read(dir().join("mem_two_arenas.pte")).unwrap();
    let aligned = Aligned::new(&bytes);
    let loader = BufferLoader::new(aligned.bytes()).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    // Buffer 0 is reserved; 1 holds activations, 2 the inputs.
    assert_eq!(meta.num_planned_buffers(), 2);
    runs("mem_two_arenas");
}

#[test]
fn unplanned_inputs_run() {
    runs("unplanned_inputs");
}

#[test]
fn unplanned_outputs_run() {
    runs("unplanned_outputs");
}

#[test]
fn unplanned_inputs_and_outputs_run() {
    runs("unplanned_io");
}

/// A copy of a file at a [`PROGRAM_ALIGNMENT`]-aligned address, as `BufferLoader` needs.
struct Aligned {
    buf: Vec<u8>,
    start: usize,
    len: usize,
}

impl Aligned {
    fn new(bytes: &[u8]) -> Aligned {
        let mut buf = vec![0u8; bytes.len() + PROGRAM_ALIGNMENT];
        let start = buf.as_ptr().align_offset(PROGRAM_ALIGNMENT);
        buf[start..start + bytes.len()].copy_from_slice(bytes);
        Aligned {
            buf,
            start,
            len: bytes.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[self.start..self.start + self.len]
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

/// Gives the root `Program` table a nonzero `version` (field 0). The exporter writes
/// version 0 as the flatbuffers default, i.e. leaves the field out, so the patch points
/// the vtable's version slot at the table's `execution_plan` slot (field 1), whose
/// stored value, a nonzero offset, then reads as the version. Returns that version.
fn patch_version(b: &mut [u8]) -> u32 {
    let table = u32_at(b, 0) as usize;
    let soffset = i32::from_le_bytes(b[table..table + 4].try_into().unwrap());
    let vtable = (table as i64 - i64::from(soffset)) as usize;
    let plan_slot = u16_at(b, vtable + 6);
    assert_ne!(plan_slot, 0, "the program has an execution_plan field");
    b[vtable + 4..vtable + 6].copy_from_slice(&plan_slot.to_le_bytes());
    u32_at(b, table + plan_slot as usize)
}

#[test]
fn a_program_newer_than_etch_reads_is_refused_naming_the_version() {
    let bytes = std::fs::read(fixtures_dir().join("add.pte")).unwrap();
    let mut aligned = Aligned::new(&bytes);
    let version = patch_version(aligned.bytes_mut());
    assert!(version > 0);
    let loader = BufferLoader::new(aligned.bytes()).unwrap();
    let Err(err) = Program::load(&loader) else {
        panic!("a newer program is refused");
    };
    assert_eq!(err.error, Error::InvalidProgram);
    let text = err.to_string();
    assert!(
        text.contains("newer than etch reads") && text.contains("Program.version 0"),
        "{text}"
    );
    // The unpatched file loads.
    let good = Aligned::new(&bytes);
    assert!(Program::load(&BufferLoader::new(good.bytes()).unwrap()).is_ok());
}
