//! The `etch` binary as a user runs it: outputs, exit codes, messages.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(name)
}

fn etch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .output()
        .expect("etch runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn noop_runs_with_default_ones() {
    let o = etch(&["run", fixture("noop.pte").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).trim(),
        "Output 0: tensor(sizes=[6], dtype=float32, [1, 1, 1, 1, 1, 1])"
    );
}

/// Without the `xnnpack` feature (CI runs `cargo test -p et-cli --no-default-features`).
#[cfg(not(feature = "xnnpack"))]
#[test]
fn missing_backend_is_named_and_exits_1() {
    let o = etch(&["run", fixture("mlp_xnnpack.pte").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("XnnpackBackend"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));
}

#[test]
fn truncated_and_corrupted_programs_exit_1() {
    let dir = std::env::temp_dir().join(format!("etch-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = std::fs::read(fixture("add.pte")).unwrap();
    let truncated = dir.join("truncated.pte");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let mut corrupt = bytes.clone();
    corrupt[4..8].copy_from_slice(b"XX12");
    let corrupted = dir.join("corrupted.pte");
    std::fs::write(&corrupted, &corrupt).unwrap();
    for (path, phrase) in [
        (&truncated, "truncated"),
        (&corrupted, "not an ExecuTorch program"),
    ] {
        let o = etch(&["run", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{}", path.display());
        assert!(stderr(&o).contains(phrase), "{}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"));
    }
    let o = etch(&["run", dir.join("absent.pte").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot open"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(etch(&["run"]).status.code(), Some(2));
    assert_eq!(etch(&["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        etch(&["run", "x.pte", "--iterations", "many"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn wrong_input_size_is_rejected_with_the_expected_shape() {
    let o = etch(&[
        "run",
        fixture("add.pte").to_str().unwrap(),
        "--input",
        fixture("mv2.out0.bin").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bytes"), "{}", stderr(&o));
}

#[test]
fn ops_lists_operators_with_kernel_keys() {
    let o = etch(&["ops", fixture("add_mul.pte").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("aten::mm.out v1/6;0,1|6;0,1|6;0,1|6;0,1"),
        "{text}"
    );
    assert!(
        text.contains("aten::add.out v1/6;0,1|6;0,1|6;0,1|6;0,1"),
        "{text}"
    );
    let o = etch(&["ops", fixture("add_mul.pte").to_str().unwrap(), "--json"]);
    assert!(stdout(&o).starts_with("{\"model\":"), "{}", stdout(&o));
}

#[test]
fn ops_prints_the_measured_buffer_sizes() {
    use et_ops as _;
    use et_runtime::{FileLoader, MethodBufferSizes, Program};
    let path = fixture("mlp.pte");
    let loader = FileLoader::open(&path).unwrap();
    let program = Program::load(&loader).unwrap();
    let sizes = MethodBufferSizes::measure(&program, "forward").unwrap();
    let o = etch(&["ops", path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let line = format!(
        "memory to run it (bytes, measured): method arena {}, planned {:?}, scratch {}",
        sizes.method, sizes.planned, sizes.scratch
    );
    assert!(stdout(&o).contains(&line), "{}", stdout(&o));
    let o = etch(&["ops", path.to_str().unwrap(), "--json"]);
    let json = format!(
        "\"memory\":{{\"method\":{},\"planned\":{:?},\"scratch\":{}}}",
        sizes.method, sizes.planned, sizes.scratch
    );
    assert!(stdout(&o).contains(&json), "{}", stdout(&o));
}

#[test]
fn kernels_lists_the_registry() {
    let o = etch(&["kernels"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("aten::sym_size.int"), "{text}");
    assert!(text.contains("kernels registered"), "{text}");
    if !cfg!(feature = "xnnpack") {
        return;
    }
    // XNNPACK node kinds with their datatype families.
    assert!(text.contains("Conv2d (fp32, qint8)"), "{text}");
    assert!(
        text.contains("FullyConnected (fp32, qint8, qdint8)"),
        "{text}"
    );
    let o = etch(&["kernels", "--json"]);
    let json = stdout(&o);
    assert!(
        json.contains("\"xnnpack_node_datatypes\":{")
            && json.contains("\"Convert\":[\"qint8\",\"qdint8\"]"),
        "{json}"
    );
}

#[test]
fn select_reproduces_executorch_selection_files() {
    let dir = std::env::temp_dir().join(format!("etch-select-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = fixture("");
    let mut delegated = 0;
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let Some(stem) = name.strip_suffix(".pte") else {
            continue;
        };
        let out = dir.join(format!("{stem}.yaml"));
        // Run from the fixtures directory so debug_info records the bare file name, as
        // in the files ExecuTorch's gen_oplist wrote.
        let o = Command::new(env!("CARGO_BIN_EXE_etch"))
            .current_dir(&fixtures)
            .args(["select", &name, "-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let expected =
            std::fs::read_to_string(fixtures.join(format!("{stem}.selected_operators.yaml")))
                .unwrap();
        let written = std::fs::read_to_string(&out).unwrap();
        // gen_oplist's file, but for the XNNPACK node kinds etch records under
        // `kernel_metadata` (which gen_oplist leaves empty).
        let block = "kernel_metadata:\n  etch::xnnpack_node_kinds:\n";
        let written = match written.split_once(block) {
            Some((head, tail)) => {
                let kinds = tail.lines().take_while(|l| l.starts_with("  - ")).count();
                assert!(kinds > 0, "{name}: an empty node-kind list was written");
                delegated += 1;
                let rest: Vec<&str> = tail.lines().skip(kinds).collect();
                format!("{head}kernel_metadata: {{}}\n{}\n", rest.join("\n"))
            }
            None => written,
        };
        assert_eq!(written, expected, "{name}");
    }
    assert!(delegated >= 4, "only {delegated} XNNPACK programs compared");
}

#[test]
fn select_merges_op_lists_and_yaml_and_rejects_bad_input() {
    let dir = std::env::temp_dir().join(format!("etch-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("merged.yaml");
    let o = etch(&[
        "select",
        "--ops",
        "aten::mm.out",
        "--yaml",
        fixture("add.selected_operators.yaml").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.contains("aten::mm.out") && text.contains("aten::add.out"),
        "{text}"
    );

    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "operators: [unclosed").unwrap();
    let o = etch(&[
        "select",
        "--yaml",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.yaml"), "{}", stderr(&o));
    let o = etch(&["select", "--ops", "add", "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        etch(&["select", "-o", out.to_str().unwrap()]).status.code(),
        Some(2)
    );
}

#[test]
fn check_reports_uncovered_models() {
    let o = etch(&[
        "check",
        fixture("add.pte").to_str().unwrap(),
        fixture("mlp.pte").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = etch(&["check", fixture("custom_ops.pte").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("my_ops::mul3.out (kernel key v1/6;0,1|6;0,1|6;0,1)"),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("aten::add.out"), "{}", stderr(&o));
}

/// The reference output of a fixture as floats.
fn reference_f32(name: &str) -> Vec<f32> {
    std::fs::read(fixture(name))
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn run_with_a_data_file_matches_the_reference() {
    let dir = std::env::temp_dir().join(format!("etch-cli-ptd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = etch(&[
        "run",
        fixture("mlp_ptd.pte").to_str().unwrap(),
        "--data",
        fixture("mlp_ptd.ptd").to_str().unwrap(),
        "--input",
        fixture("mlp_ptd.in0.bin").to_str().unwrap(),
        "--output-dir",
        dir.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let got: Vec<f32> = std::fs::read(dir.join("output0.bin"))
        .unwrap()
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want = reference_f32("mlp_ptd.out0.bin");
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 + 1e-5 * w.abs(), "{g} vs {w}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_without_its_data_file_exits_1_naming_the_key() {
    let o = etch(&["run", fixture("mlp_ptd.pte").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("external tensor `l1.weight`"), "{err}");
    assert!(err.contains(".ptd"), "{err}");
    assert!(!err.contains("panicked"));
    // A data file that is not one is named too.
    let o = etch(&[
        "run",
        fixture("mlp_ptd.pte").to_str().unwrap(),
        "--data",
        fixture("mlp_ptd.pte").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("mlp_ptd.pte: cannot load data file"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn ops_lists_named_data_and_external_tensors() {
    let o = etch(&["ops", fixture("mlp_ptd.pte").to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("external tensor l1.weight: float32 [32, 16], 2048 bytes; needs a data file"),
        "{out}"
    );
    let o = etch(&[
        "ops",
        fixture("mlp_ptd.pte").to_str().unwrap(),
        "--data",
        fixture("mlp_ptd.ptd").to_str().unwrap(),
        "--json",
    ]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "{\"name\":\"l2.bias\",\"dtype\":\"float32\",\"sizes\":[8],\"bytes\":32,\"found_in\":"
        ),
        "{out}"
    );
    let o = etch(&[
        "ops",
        fixture("mlp_xnnpack.pte").to_str().unwrap(),
        "--json",
    ]);
    let out = stdout(&o);
    assert!(out.contains("\"named_data\":[{\"key\":\""), "{out}");
    let o = etch(&["ops", fixture("mlp_xnnpack.pte").to_str().unwrap()]);
    assert!(stdout(&o).starts_with("named data: 4 entries, 3232 bytes\n"));
}

/// A planned-buffer size corrupted to 32 GiB (found by mutating fixtures: it used to
/// abort in the allocator with exit 134) is refused before anything is allocated,
/// naming the buffer, its size and the limit; and a limit below a valid program's needs
/// is reported the same way.
#[test]
fn planned_memory_over_the_limit_is_refused_before_allocating() {
    let good = std::fs::read(fixture("mv2.pte")).unwrap();
    // `non_const_buffer_sizes`: a flatbuffer vector of two int64s, [0, 9936896].
    let mut pattern = 2u32.to_le_bytes().to_vec();
    pattern.extend(0i64.to_le_bytes());
    pattern.extend(9_936_896i64.to_le_bytes());
    let at = good
        .windows(pattern.len())
        .position(|w| w == pattern)
        .expect("mv2's planned buffer sizes")
        + 12;
    let mut bad = good.clone();
    bad[at..at + 8].copy_from_slice(&34_359_768_192i64.to_le_bytes());
    let path = std::env::temp_dir().join(format!("etch-huge-{}.pte", std::process::id()));
    std::fs::write(&path, &bad).unwrap();

    let o = etch(&["run", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("planned buffer 0: 34359768192 bytes")
            && e.contains("over the limit of 4294967296 bytes (--max-memory-mib)"),
        "{e}"
    );

    let o = etch(&[
        "run",
        fixture("mv2.pte").to_str().unwrap(),
        "--max-memory-mib",
        "8",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("over the limit of 8388608 bytes"),
        "{}",
        stderr(&o)
    );
    std::fs::remove_file(&path).ok();
}

/// `--top-k` names a classifier's best classes with their scores, in text and JSON;
/// numbers print in the shortest form that reads back as the same float32.
#[test]
fn top_k_lists_the_largest_outputs_with_their_indices() {
    let mv2 = fixture("mv2.pte");
    let o = etch(&["run", mv2.to_str().unwrap(), "--top-k", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("\n  top 3: [114] 0.6299872, [197] 0.6027143, [97] 0.52711666\n"),
        "{out}"
    );
    let o = etch(&["run", mv2.to_str().unwrap(), "--top-k", "2", "--json"]);
    let out = stdout(&o);
    assert!(
        out.contains(
            "\"top_k\":[{\"index\":114,\"value\":0.6299872},{\"index\":197,\"value\":0.6027143}]"
        ),
        "{out}"
    );
}

/// `etch verify` runs every test case of a bundled program; an expected output altered
/// in the file makes it fail, naming the case, the output and the largest error; `run`
/// and `ops` take the bundled program like a `.pte`.
#[test]
fn verify_checks_a_bundled_program_and_names_what_differs() {
    let bpte = fixture("mlp.bpte");
    let o = etch(&["verify", bpte.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for case in [
        "forward case 0: ok",
        "forward case 1: ok",
        "logits case 0: ok",
        "logits case 1: ok",
    ] {
        assert!(out.contains(case), "{out}");
    }
    assert!(out.contains("4 test cases passed"), "{out}");

    // Change one expected element of forward's case 1 (found by its bytes).
    let good = std::fs::read(&bpte).unwrap();
    let expected = std::fs::read(fixture("mlp_bundled.forward.case1.out0.bin")).unwrap();
    let at = good
        .windows(expected.len())
        .position(|w| w == expected.as_slice())
        .expect("case 1's expected output in the file");
    let mut bad = good.clone();
    bad[at + 4 * 5..at + 4 * 6].copy_from_slice(&0.75f32.to_le_bytes());
    let path = std::env::temp_dir().join(format!("etch-bad-{}.bpte", std::process::id()));
    std::fs::write(&path, &bad).unwrap();
    let o = etch(&["verify", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(
        e.contains("1 of 4 test cases failed")
            && e.contains("forward case 1: output 0: 1 of 32 elements differ")
            && e.contains("at element 5")
            && e.contains("expected 0.75)"),
        "{e}"
    );
    std::fs::remove_file(&path).ok();

    let o = etch(&["run", bpte.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("Output 0: tensor(sizes=[4, 8], dtype=float32"));
    let o = etch(&["verify", fixture("mlp.pte").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("not a bundled program"),
        "{}",
        stderr(&o)
    );
}

/// A scratch file of `len` zero bytes, unique to this test.
fn zeros_file(name: &str, len: usize) -> PathBuf {
    let path = std::env::temp_dir().join(format!("etch-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, vec![0u8; len]).unwrap();
    path
}

#[test]
fn bad_inputs_at_the_cli_are_named_and_exit_1() {
    let add = fixture("add.pte");
    let add = add.to_str().unwrap();
    let in0 = fixture("add.in0.bin");
    let in0 = in0.to_str().unwrap();

    // A method that does not exist: named, with the ones that do.
    let o = etch(&["run", add, "--method", "backward"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no method `backward`"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("forward"), "{}", stderr(&o));

    // More inputs than the method takes.
    let o = etch(&["run", add, "--input", in0, "--input", in0, "--input", in0]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("3 inputs given"), "{}", stderr(&o));
    assert!(stderr(&o).contains("takes 2"), "{}", stderr(&o));

    // A shape above the dynamic input's bound.
    let big = zeros_file("big.bin", 1000 * 8 * 4);
    let spec = format!("{}:1000x8", big.display());
    let o = etch(&[
        "run",
        fixture("dynamic.pte").to_str().unwrap(),
        "--input",
        &spec,
    ]);
    std::fs::remove_file(&big).ok();
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("above its dynamic shape bound"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // A shape whose size overflows.
    let o = etch(&[
        "run",
        add,
        "--input",
        &format!("{in0}:99999999999x99999999999"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("too large"), "{}", stderr(&o));
}

#[test]
fn a_data_file_of_another_program_exits_1_naming_the_key_and_file() {
    // mlp_ptd's external weights are not in mv2's data file (a valid .ptd of another
    // program).
    let o = etch(&[
        "run",
        fixture("mlp_ptd.pte").to_str().unwrap(),
        "--data",
        fixture("mv2_xnnpack_ptd.ptd").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("external tensor `l1.weight`"), "{err}");
    assert!(err.contains("mv2_xnnpack_ptd.ptd"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
