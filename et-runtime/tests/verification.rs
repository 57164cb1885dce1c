//! Both verification levels on every fixture, its truncations and random corruptions:
//! `Verification::Minimal` reads the same metadata as `InternalConsistency` on good files,
//! and on damaged ones every metadata and load path returns an error instead of
//! misreading.
use et_runtime::{method_allocator_estimate, FileLoader, MemoryManager, Program, Verification};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/../tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(path).unwrap()
}

fn fixtures() -> Vec<String> {
    let dir = format!("{}/../tests/fixtures", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".pte"))
        .collect();
    names.sort();
    names
}

/// Everything the metadata API reports about a program, as text.
fn describe(program: &Program<'_>) -> String {
    let mut out = String::new();
    for name in program.method_names() {
        out += &format!("method {name}\n");
        let Ok(meta) = program.method_meta(name) else {
            out += "  no meta\n";
            continue;
        };
        out += &format!(
            "  io {} {} planned {} values {} instrs {} ops {} estimate {}\n",
            meta.num_inputs(),
            meta.num_outputs(),
            meta.num_planned_buffers(),
            meta.num_values(),
            meta.num_instructions(),
            meta.num_operators(),
            method_allocator_estimate(&meta),
        );
        for i in 0..meta.num_planned_buffers() {
            out += &format!("  buffer {:?}\n", meta.planned_buffer_size(i));
        }
        for i in 0..meta.num_inputs() {
            out += &format!("  in {:?} {:?}\n", meta.input_tag(i), meta.input_tensor(i));
        }
        for i in 0..meta.num_outputs() {
            out += &format!(
                "  out {:?} {:?}\n",
                meta.output_tag(i),
                meta.output_tensor(i)
            );
        }
        for i in 0..meta.num_operators() {
            out += &format!("  op {:?}\n", meta.operator(i));
        }
        for d in meta.delegates() {
            out += &format!("  delegate {d}\n");
        }
        for c in meta.kernel_calls() {
            match c {
                Ok(c) => {
                    out += &format!(
                        "  call {} {} {} [{}] [{}] {:?} {:?} {}\n",
                        c.instruction,
                        c.operator,
                        c.num_args,
                        c.key,
                        c.selection_key,
                        c.key.common_dtype(),
                        c.key.dtype_mask(),
                        c.key.len(),
                    )
                }
                Err(e) => out += &format!("  bad call {e:?}\n"),
            }
        }
    }
    out
}

/// Loads, describes and (when memory allows) loads and runs every method of `bytes`
/// with `verification`; must never panic. Returns the description when it loads.
fn exercise(bytes: &[u8], verification: Verification) -> Option<String> {
    let loader = FileLoader::from_bytes(bytes);
    let program = Program::load_with(&loader, verification).ok()?;
    let text = describe(&program);
    let names: Vec<&str> = program.method_names().collect();
    for name in names {
        let Ok(meta) = program.method_meta(name) else {
            continue;
        };
        let sizes: Vec<usize> = (0..meta.num_planned_buffers())
            .map(|i| meta.planned_buffer_size(i).unwrap_or(0))
            .collect();
        let estimate = method_allocator_estimate(&meta);
        let total = sizes.iter().fold(0usize, |a, &s| a.saturating_add(s));
        if total > 1 << 22 || estimate > 1 << 22 {
            continue;
        }
        let mut method_mem = vec![0u128; estimate.div_ceil(16)];
        let mut planned_mem: Vec<Vec<u128>> =
            sizes.iter().map(|s| vec![0u128; s.div_ceil(16)]).collect();
        let mut planned: Vec<&mut [u8]> = planned_mem
            .iter_mut()
            .map(|b| bytemuck(b.as_mut_slice()))
            .collect();
        let mut scratch = vec![0u128; 256];
        let mut memory = MemoryManager::new(
            bytemuck(&mut method_mem),
            &mut planned,
            bytemuck(&mut scratch),
        );
        let Ok(mut method) = program.load_method(name, &mut memory) else {
            continue;
        };
        method.set_instruction_limit(1000);
        for i in 0..method.num_inputs() {
            if let Ok(t) = method.input_tensor_mut(i) {
                let _ = t.bytes_mut().map(|b| b.fill(0));
            }
        }
        let _ = method.execute();
        for i in 0..method.num_outputs() {
            let _ = method.output(i);
        }
    }
    Some(text)
}

fn bytemuck(words: &mut [u128]) -> &mut [u8] {
    // SAFETY: any initialized `u128` memory is valid as bytes; the borrow is unique.
    unsafe { core::slice::from_raw_parts_mut(words.as_mut_ptr().cast(), words.len() * 16) }
}

/// Both verification levels read well-formed programs identically.
#[test]
fn minimal_verification_reads_the_same_metadata() {
    for name in fixtures() {
        let bytes = fixture(&name);
        let full = exercise(&bytes, Verification::InternalConsistency).unwrap();
        let minimal = exercise(&bytes, Verification::Minimal).unwrap();
        assert_eq!(full, minimal, "{name}");
        assert!(full.contains("method "), "{name}");
    }
}

/// Without the structural check, damaged programs are still errors, never panics (or
/// undefined behaviour: the reader checks every access).
#[test]
fn minimal_verification_survives_damage() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for name in [
        "add.pte",
        "cond.pte",
        "dynamic_view.pte",
        "noop.pte",
        "mlp_xnnpack.pte",
    ] {
        let original = fixture(name);
        for len in (0..original.len()).step_by(7) {
            exercise(&original[..len], Verification::Minimal);
        }
        for _ in 0..400 {
            let mut bytes = original.clone();
            for _ in 0..(1 + next() % 4) {
                let at = (next() as usize) % bytes.len();
                bytes[at] = next() as u8;
            }
            exercise(&bytes, Verification::Minimal);
        }
    }
}
