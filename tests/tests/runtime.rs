//! The runtime core on real programs, with a few hand-registered float32 kernels (this
//! test binary does not link the kernel library): loading, metadata, control flow,
//! bounded dynamic shapes, prim ops, missing kernels and backends, malformed files.

use et_runtime::{
    DataFile, Error, FileLoader, KernelError, LoadDetail, MemoryManager, Program, ScalarType,
};
use etch_tests::{
    bytes_of, compare, fixture, fixtures_dir, load_and_run_bytes, load_and_run_with_data, run_case,
    IoSpec, MethodBuffers,
};

mod hand_kernels;

// --- Helpers ---------------------------------------------------------------------------

fn all_fixture_programs() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".pte"))
        .collect();
    names.sort();
    names
}

fn run_fixture(name: &str) {
    let spec = IoSpec::read(&fixtures_dir(), name);
    let got = run_case(&fixtures_dir(), &spec).unwrap_or_else(|e| panic!("{name}: {e}"));
    compare(&fixtures_dir(), &spec, &got).unwrap_or_else(|e| panic!("{name}: {e}"));
}

// --- Tests ----------------------------------------------------------------------------

#[test]
fn every_fixture_program_loads_with_metadata() {
    for name in all_fixture_programs() {
        let loader = FileLoader::open(fixture(&name)).unwrap();
        let program = Program::load(&loader).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(program.num_methods() >= 1, "{name}");
        for m in program.method_names() {
            let meta = program.method_meta(m).unwrap();
            assert!(meta.num_outputs() >= 1, "{name}.{m}");
            for c in meta.kernel_calls() {
                c.unwrap_or_else(|e| panic!("{name}.{m}: {e}"));
            }
        }
    }
}

/// Operator names and kernel keys per the fixture's `selected_operators.yaml` (written
/// by ExecuTorch's own gen_oplist) must equal what the program's metadata reports.
#[test]
fn operators_and_kernel_keys_match_executorch_selection_files() {
    for name in all_fixture_programs() {
        let stem = name.trim_end_matches(".pte");
        let yaml_path = fixture(&format!("{stem}.selected_operators.yaml"));
        let yaml: serde_yaml::Value =
            serde_yaml::from_str(&std::fs::read_to_string(&yaml_path).unwrap()).unwrap();
        let mut expected: Vec<(String, Vec<String>)> = Vec::new();
        if let Some(ops) = yaml["operators"].as_mapping() {
            for (op, _) in ops {
                let op = op.as_str().unwrap().to_string();
                let mut keys: Vec<String> = yaml["et_kernel_metadata"][op.as_str()]
                    .as_sequence()
                    .map(|s| s.iter().map(|k| k.as_str().unwrap().to_string()).collect())
                    .unwrap_or_default();
                keys.sort();
                expected.push((op, keys));
            }
        }
        expected.sort();

        let loader = FileLoader::open(fixture(&name)).unwrap();
        let program = Program::load(&loader).unwrap();
        let mut got: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for m in program.method_names() {
            let meta = program.method_meta(m).unwrap();
            for i in 0..meta.num_operators() {
                got.entry(meta.operator(i).unwrap().to_string())
                    .or_default();
            }
            for c in meta.kernel_calls() {
                let c = c.unwrap();
                let keys = got.entry(c.operator.to_string()).or_default();
                let k = c.selection_key.to_string();
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
        }
        let mut got: Vec<(String, Vec<String>)> = got
            .into_iter()
            .map(|(k, mut v)| {
                v.sort();
                (k, v)
            })
            .collect();
        got.sort();
        assert_eq!(got, expected, "{name}");
    }
}

#[test]
fn noop_runs_end_to_end() {
    run_fixture("noop");
}

#[test]
fn single_kernel_and_two_methods() {
    run_fixture("add");
    run_fixture("two_methods");
}

#[test]
fn control_flow_takes_both_branches() {
    // JumpFalseCall on a bool tensor, MoveCall into the shared output, both branches.
    run_fixture("cond");
    run_fixture("cond_else");
}

#[test]
fn bounded_dynamic_shapes_through_prim_ops() {
    // sym_size writes a SymInt read back through an int list by et_view; the batch is
    // smaller than the exported bound, so out tensors resize.
    run_fixture("dynamic_view");
}

#[test]
fn dynamic_input_beyond_its_bound_is_rejected() {
    let loader = FileLoader::open(fixture("dynamic_view.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 0).unwrap();
    let (method_mem, mut planned, _) = buffers.split();
    let mut memory = MemoryManager::without_temp(method_mem, &mut planned);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    let bound = meta.input_tensor(0).unwrap();
    let mut too_big = bound.sizes().to_vec();
    too_big[0] += 1;
    let bytes = vec![0u8; too_big.iter().product::<usize>() * 4];
    assert!(method
        .set_input_bytes(0, ScalarType::Float, &too_big, &bytes)
        .is_err());
    assert_eq!(
        method.set_input_bytes(0, ScalarType::Long, bound.sizes(), &[]),
        Err(Error::InvalidArgument)
    );
    // Never-set inputs are refused at execute.
    assert_eq!(method.execute().unwrap_err().error, Error::InvalidState);
}

#[test]
fn missing_kernels_are_all_reported_with_keys() {
    // mlp calls addmm, permute_copy, relu and _softmax; none are registered here.
    let loader = FileLoader::open(fixture("mlp.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 0).unwrap();
    let (method_mem, mut planned, _) = buffers.split();
    let mut memory = MemoryManager::without_temp(method_mem, &mut planned);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert_eq!(err.error, Error::OperatorMissing);
    let LoadDetail::MissingKernels {
        count,
        first_operator,
        ..
    } = err.detail
    else {
        panic!("{err}")
    };
    let missing: Vec<String> = et_runtime::registry::missing_kernels(&meta)
        .map(|c| format!("{} {}", c.operator, c.key))
        .collect();
    assert_eq!(count, missing.len());
    assert!(
        missing
            .iter()
            .any(|m| m.starts_with("aten::addmm.out v1/6;")),
        "{missing:?}"
    );
    assert!(
        missing.iter().any(|m| m.starts_with("aten::_softmax.out")),
        "{missing:?}"
    );
    assert!(err.to_string().contains(&first_operator.to_string()));
}

#[test]
fn unregistered_backend_is_named() {
    let loader = FileLoader::open(fixture("mlp_xnnpack.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let mut method_mem = vec![0u128; 4096];
    let mut planned_mem = vec![vec![0u128; 4096]; 4];
    let mut planned: Vec<&mut [u8]> = planned_mem.iter_mut().map(|b| bytes_of(b)).collect();
    let mut memory = MemoryManager::without_temp(bytes_of(&mut method_mem), &mut planned);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert!(
        matches!(
            err.detail,
            LoadDetail::MissingBackend {
                id: "XnnpackBackend"
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("XnnpackBackend"));
}

#[test]
fn too_small_memory_is_an_error_not_a_crash() {
    let loader = FileLoader::open(fixture("add.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    // No planned buffer at all.
    let mut method_mem = vec![0u128; et_runtime::method_allocator_estimate(&meta).div_ceil(16)];
    let mut none: Vec<&mut [u8]> = Vec::new();
    let mut memory = MemoryManager::without_temp(bytes_of(&mut method_mem), &mut none);
    let err = program.load_method("forward", &mut memory).unwrap_err();
    assert!(
        matches!(
            err.detail,
            LoadDetail::PlannedBuffer {
                index: 0,
                provided: 0,
                ..
            }
        ),
        "{err}"
    );
    // A method arena too small for the value table.
    let mut tiny = vec![0u128; 4];
    let mut planned_mem = [vec![0u128; 64]];
    let mut planned: Vec<&mut [u8]> = planned_mem.iter_mut().map(|b| bytes_of(b)).collect();
    let mut memory = MemoryManager::without_temp(bytes_of(&mut tiny), &mut planned);
    assert_eq!(
        program
            .load_method("forward", &mut memory)
            .unwrap_err()
            .error,
        Error::MemoryAllocationFailed
    );
}

#[test]
fn one_memory_manager_serves_successive_loads() {
    let loader = FileLoader::open(fixture("add.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 0).unwrap();
    let (method_mem, mut planned, _) = buffers.split();
    let mut memory = MemoryManager::without_temp(method_mem, &mut planned);
    for _ in 0..100 {
        let mut method = program.load_method("forward", &mut memory).unwrap();
        method
            .set_input_bytes(0, ScalarType::Float, &[2, 3], &[0u8; 24])
            .unwrap();
        method
            .set_input_bytes(1, ScalarType::Float, &[2, 3], &[0u8; 24])
            .unwrap();
        method.execute().unwrap();
    }
}

#[test]
fn unknown_method_is_invalid_argument() {
    let loader = FileLoader::open(fixture("add.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let mut m = vec![0u128; 64];
    let mut none: Vec<&mut [u8]> = Vec::new();
    let mut memory = MemoryManager::without_temp(bytes_of(&mut m), &mut none);
    let err = program.load_method("backward", &mut memory).unwrap_err();
    assert_eq!(err.error, Error::InvalidArgument);
}

#[test]
fn truncated_programs_fail_cleanly() {
    for name in [
        "add.pte",
        "cond.pte",
        "dynamic_view.pte",
        "two_methods.pte",
        "mlp_xnnpack.pte",
    ] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        for len in 0..bytes.len() {
            load_and_run_bytes(&bytes[..len]);
        }
        // Truncations shorter than the header's declared size must be rejected.
        let loader = FileLoader::from_bytes(&bytes[..bytes.len() - 1]);
        assert!(
            Program::load(&loader).is_err(),
            "{name} truncated by one byte"
        );
    }
}

#[test]
fn corrupted_programs_fail_cleanly() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for name in ["add.pte", "cond.pte", "dynamic_view.pte", "two_methods.pte"] {
        let original = std::fs::read(fixture(name)).unwrap();
        for _ in 0..1500 {
            let mut bytes = original.clone();
            for _ in 0..(1 + next() % 4) {
                let at = (next() as usize) % bytes.len();
                bytes[at] = next() as u8;
            }
            load_and_run_bytes(&bytes);
        }
    }
}

#[test]
fn truncated_and_corrupted_data_files_fail_cleanly() {
    let pte = std::fs::read(fixture("mlp_ptd.pte")).unwrap();
    let ptd = std::fs::read(fixture("mlp_ptd.ptd")).unwrap();
    for len in 0..ptd.len() {
        load_and_run_with_data(&pte, Some(&ptd[..len]));
        let loader = FileLoader::from_bytes(&ptd[..len]);
        assert!(
            DataFile::load(&loader, "t.ptd").is_err(),
            "truncated to {len}"
        );
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..1500 {
        let mut bytes = ptd.clone();
        for _ in 0..(1 + next() % 4) {
            let at = (next() as usize) % bytes.len();
            bytes[at] = next() as u8;
        }
        load_and_run_with_data(&pte, Some(&bytes));
    }
}

#[test]
fn a_looping_program_hits_the_instruction_budget() {
    // cond_else jumps forward only; build a loop by running with a budget of 1.
    let loader = FileLoader::open(fixture("cond.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 0).unwrap();
    let (method_mem, mut planned, _) = buffers.split();
    let mut memory = MemoryManager::without_temp(method_mem, &mut planned);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    for i in 0..method.num_inputs() {
        method
            .set_input_bytes(i, ScalarType::Float, &[3], &[0u8; 12])
            .unwrap();
    }
    method.set_instruction_limit(1);
    let err = method.execute().unwrap_err();
    assert_eq!(err.error, Error::OutOfResources);
}

#[test]
fn kernel_failures_name_the_operator_and_instruction() {
    // A bool input where the kernel wants float: the hand-written kernel rejects it.
    let loader = FileLoader::open(fixture("add.pte")).unwrap();
    let program = Program::load(&loader).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut buffers = MethodBuffers::for_method(&meta, 0).unwrap();
    let (method_mem, mut planned, _) = buffers.split();
    let mut memory = MemoryManager::without_temp(method_mem, &mut planned);
    let mut method = program.load_method("forward", &mut memory).unwrap();
    method
        .set_input_bytes(0, ScalarType::Float, &[2, 3], &[0u8; 24])
        .unwrap();
    method
        .set_input_bytes(1, ScalarType::Float, &[2, 3], &[0u8; 24])
        .unwrap();
    // Static shapes cannot be resized to another shape.
    assert!(method
        .set_input_bytes(1, ScalarType::Float, &[3, 2], &[0u8; 24])
        .is_err());
    method.execute().unwrap();
    let out = method.output(0).unwrap();
    assert_eq!(out.as_tensor().unwrap().sizes(), &[2, 3]);
    let _ = KernelError::invalid("unused");
}
