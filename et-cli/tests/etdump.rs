//! ETDump profiles: what `execute_traced` and `write_etdump` (and `etch run --etdump`)
//! write, read back with the project's own etdump.fbs code and checked against the
//! ETDumps ExecuTorch's runtime wrote for the same programs (`tests/fixtures/NAME.etdp`,
//! summarized in `NAME.etdump.json`).

use std::path::PathBuf;
use std::process::Command;

use et_runtime::etdump::{Clock, EventTracer, ProfileRecord};
use et_runtime::{FileLoader, MemoryManager, MethodBuffers, Program};
use et_schema::generated::{ed, etdump_root};
use etch_tests::{dtype_of, fixtures_dir, IoSpec};
use serde_yaml::Value as Yaml;

// The operator kernels and the XNNPACK backend the programs call.
use et_ops as _;
#[cfg(feature = "xnnpack")]
use et_xnnpack as _;

/// One profile event as the Inspector keys it: name, chain, instruction, and the
/// delegate's identifier.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Key {
    name: String,
    chain: i64,
    instruction: i64,
    delegate_id: Option<String>,
}

/// Each run of an ETDump: its name and its profile events, with whether each lasted
/// longer than 0.
fn read_etdump(bytes: &[u8]) -> Vec<(String, Vec<(Key, bool)>)> {
    let dump = etdump_root(bytes).expect("a well-formed ETDump");
    let runs = dump.run_data().expect("run_data");
    runs.iter()
        .map(|run| {
            let events = run
                .events()
                .expect("events")
                .iter()
                .map(|e| {
                    let p: ed::ProfileEvent<'_> = e.profile_event().expect("a profile event");
                    let key = Key {
                        name: p.name().unwrap_or("").to_string(),
                        chain: i64::from(p.chain_index()),
                        instruction: i64::from(p.instruction_id()),
                        delegate_id: p.delegate_debug_id_str().map(str::to_string),
                    };
                    (key, p.end_time() > p.start_time())
                })
                .collect();
            (run.name().unwrap_or("").to_string(), events)
        })
        .collect()
}

/// The raw events ExecuTorch's runtime wrote, from `NAME.etdump.json`, per run.
fn executorch_runs(name: &str) -> Vec<(String, Vec<Key>)> {
    let text = std::fs::read_to_string(fixtures_dir().join(format!("{name}.etdump.json")))
        .expect("the fixture's summary");
    let json: Yaml = serde_yaml::from_str(&text).expect("JSON");
    json["etdump"]["run_data"]
        .as_sequence()
        .expect("run_data")
        .iter()
        .map(|run| {
            let events = run["events"]
                .as_sequence()
                .expect("events")
                .iter()
                .map(|e| Key {
                    name: e["profile_event"].as_str().unwrap_or("").to_string(),
                    chain: e["chain_index"].as_i64().expect("chain_index"),
                    instruction: e["instruction_id"].as_i64().expect("instruction_id"),
                    delegate_id: e["delegate_debug_id_str"].as_str().map(str::to_string),
                })
                .collect();
            (run["name"].as_str().expect("name").to_string(), events)
        })
        .collect()
}

/// Loads and executes `name.pte` `executions` times with tracing; returns the ETDump.
/// Runs fixture `name` traced `executions` times: its ETDump, the tracer's records, and
/// the instructions (chain 0) that run no kernel since load (calls absorbed by a fused
/// call, permutes become views), whose events may take no measurable time.
fn traced_run(name: &str, executions: usize) -> (Vec<u8>, Vec<ProfileRecord>, Vec<u32>) {
    let dir = fixtures_dir();
    let spec = IoSpec::read(&dir, name);
    let loader = FileLoader::open(dir.join(&spec.program)).unwrap();
    let program = Program::load(&loader).unwrap();
    let mut buffers = MethodBuffers::for_program_method(&program, &spec.method, 64 << 20).unwrap();
    let (method_mem, mut planned, scratch) = buffers.split();
    let mut memory = MemoryManager::new(method_mem, &mut planned, scratch);
    let mut records = vec![ProfileRecord::EMPTY; 4096];
    let tracer = EventTracer::new(&mut records, Clock::monotonic());
    let mut method = program
        .load_method_traced(&spec.method, &mut memory, &tracer)
        .unwrap();
    for _ in 0..executions {
        for (i, input) in spec.inputs.iter().enumerate() {
            let data = std::fs::read(dir.join(&input.file)).unwrap();
            method
                .set_input_bytes(i, dtype_of(&input.dtype), &input.sizes, &data)
                .unwrap();
        }
        method.execute_traced(&tracer).unwrap();
    }
    assert_eq!(tracer.dropped(), 0);
    let mut out = vec![0u8; tracer.etdump_size_bound()];
    let len = method.write_etdump(&tracer, &mut out).unwrap();
    out.truncate(len);
    // Too small a buffer is an error that says what suffices, not a panic.
    let mut small = vec![0u8; len / 2];
    let err = method.write_etdump(&tracer, &mut small).unwrap_err();
    assert!(err.needed >= len, "{err}");
    let records = tracer.records().collect();
    let idle = (0..method.meta().num_instructions() as u32)
        .filter(|&pc| {
            method.instruction_operator(0, pc).is_some()
                && method.instruction_kernel(0, pc).is_none()
        })
        .collect();
    (out, records, idle)
}

/// The events ExecuTorch's runtime and etch both write, in the same order: every event
/// but the `native_call_*` ones ExecuTorch's generated kernel wrappers add, and but the
/// delegate's own step events, which each backend names its own way.
fn shared_events(events: impl IntoIterator<Item = Key>) -> Vec<Key> {
    events
        .into_iter()
        .filter(|k| !k.name.starts_with("native_call_") && k.delegate_id.is_none())
        .collect()
}

/// For each program ExecuTorch profiled: etch's ETDump has the runs, and in each run the
/// OPERATOR_CALL / DELEGATE_CALL / Method::execute events at the same chains and
/// instructions, in the same order, as ExecuTorch's; every one lasted longer than 0, but
/// those of calls that run nothing since load.
#[test]
fn etdumps_match_executorchs_event_for_event() {
    let mut programs = vec![("mlp", 1), ("mv2", 1)];
    if cfg!(feature = "xnnpack") {
        programs.push(("mlp_xnnpack", 2));
    }
    for (name, executions) in programs {
        let theirs = executorch_runs(name);
        // The fixture itself parses with the project's schema code, and holds what its
        // summary says.
        let fixture = std::fs::read(fixtures_dir().join(format!("{name}.etdp"))).unwrap();
        let parsed = read_etdump(&fixture);
        assert_eq!(parsed.len(), theirs.len(), "{name}.etdp runs");
        for ((run, events), (their_run, their_events)) in parsed.iter().zip(&theirs) {
            assert_eq!(run, their_run);
            let keys: Vec<Key> = events.iter().map(|(k, _)| k.clone()).collect();
            assert_eq!(&keys, their_events, "{name}.etdp run {run}");
        }

        let (ours, _, idle) = traced_run(name, executions);
        let ours = read_etdump(&ours);
        assert_eq!(ours.len(), theirs.len(), "{name}: runs");
        for ((run, events), (their_run, their_events)) in ours.iter().zip(&theirs) {
            assert_eq!(run, their_run, "{name}");
            let keys = shared_events(events.iter().map(|(k, _)| k.clone()));
            assert_eq!(
                keys,
                shared_events(their_events.clone()),
                "{name}: run {run}"
            );
            for (key, positive) in events {
                let runs_nothing = key.chain == 0
                    && u32::try_from(key.instruction).is_ok_and(|pc| idle.contains(&pc));
                assert!(
                    *positive || runs_nothing,
                    "{name}: run {run}: {key:?} lasted 0 ns"
                );
            }
        }
    }
}

/// Each XNNPACK node of a delegated program gets an event inside its DelegateCall,
/// named by kind and number, before the DELEGATE_CALL event that encloses it.
#[cfg(feature = "xnnpack")]
#[test]
fn xnnpack_nodes_are_events_of_their_delegate_call() {
    let (bytes, records, _) = traced_run("mv2_xnnpack", 1);
    let runs = read_etdump(&bytes);
    let (name, events) = &runs[1];
    assert_eq!(name, "Execute");
    let steps: Vec<&Key> = events
        .iter()
        .map(|(k, _)| k)
        .filter(|k| k.delegate_id.is_some())
        .collect();
    // mv2_xnnpack's one payload has 67 nodes (num_nodes in xnnpack_nodes.yaml).
    assert_eq!(steps.len(), 67);
    assert_eq!(steps[0].delegate_id.as_deref(), Some("StaticTranspose #1"));
    assert!(steps
        .iter()
        .any(|k| k.delegate_id.as_deref() == Some("DepthwiseConv2d #17")));
    let delegate = events
        .iter()
        .position(|(k, _)| k.name == "DELEGATE_CALL")
        .unwrap();
    assert!(events[..delegate]
        .iter()
        .all(|(k, _)| k.delegate_id.is_some() && k.instruction == events[delegate].0.instruction));
    // The steps lie inside the call.
    let call = records
        .iter()
        .find(|r| r.kind == et_runtime::etdump::EventKind::Delegate)
        .unwrap();
    for r in records
        .iter()
        .filter(|r| r.kind == et_runtime::etdump::EventKind::DelegateNode)
    {
        assert!(
            call.start <= r.start && r.end <= call.end,
            "{r:?} outside {call:?}"
        );
    }
}

fn fixture(name: &str) -> PathBuf {
    fixtures_dir().join(name)
}

#[test]
fn etch_run_profile_prints_a_table_per_operator() {
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(["run", fixture("mlp.pte").to_str().unwrap(), "--profile"])
        .args(["--iterations", "3"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("profile: 3 executes"), "{text}");
    let row = |op: &str| {
        text.lines()
            .find(|l| l.starts_with(op))
            .unwrap_or_else(|| panic!("no row for {op}: {text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // Two addmm calls per execute; the row's mean is its total over its calls.
    let addmm = row("aten::addmm.out");
    assert_eq!(addmm[1], "6");
    let (total, mean): (f64, f64) = (addmm[2].parse().unwrap(), addmm[3].parse().unwrap());
    assert!((total / 6.0 - mean).abs() < 0.06, "{addmm:?}");
    assert_eq!(row("aten::relu.out")[1], "3");
    assert!(text.contains("slowest calls:"), "{text}");
}

#[cfg(feature = "xnnpack")]
#[test]
fn etch_run_profile_json_names_delegate_steps() {
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(["run", fixture("mlp_xnnpack.pte").to_str().unwrap()])
        .args(["--profile", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let json: Yaml = serde_yaml::from_slice(&o.stdout).unwrap();
    let profile = &json["profile"];
    assert_eq!(profile["executes"].as_u64(), Some(1));
    assert_eq!(
        profile["operators"][0]["name"].as_str(),
        Some("DelegateCall XnnpackBackend")
    );
    let steps: Vec<&str> = profile["delegate_steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        steps.contains(&"XnnpackBackend: FullyConnected"),
        "{steps:?}"
    );
    assert!(steps.contains(&"XnnpackBackend: Softmax"), "{steps:?}");
}

#[cfg(feature = "xnnpack")]
#[test]
fn etch_run_profile_nodes_gives_each_delegate_node_a_row() {
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(["run", fixture("mv2_xnnpack.pte").to_str().unwrap()])
        .args(["--profile", "--profile-nodes", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: Yaml = serde_yaml::from_slice(&o.stdout).unwrap();
    let steps: Vec<&str> = json["profile"]["delegate_steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    // MobileNetV2's 35 convolutions (1x1 and the first 3x3) and 17 depthwise ones.
    let count = |kind: &str| {
        steps
            .iter()
            .filter(|s| s.starts_with(&format!("XnnpackBackend: {kind} #")))
            .count()
    };
    assert_eq!(
        (count("Conv2d"), count("DepthwiseConv2d")),
        (35, 17),
        "{steps:?}"
    );
    // Without --profile it is refused rather than ignored.
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(["run", fixture("mv2_xnnpack.pte").to_str().unwrap()])
        .arg("--profile-nodes")
        .output()
        .unwrap();
    assert!(!o.status.success());
}

#[test]
fn etch_run_etdump_writes_a_profile_of_each_execute() {
    let dir = std::env::temp_dir().join(format!("etch-etdump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("add.etdp");
    let o = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(["run", fixture("add.pte").to_str().unwrap()])
        .args(["--iterations", "2", "--etdump", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let runs = read_etdump(&std::fs::read(&path).unwrap());
    let names: Vec<&str> = runs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["Default", "Execute", "Execute"]);
    for (_, events) in &runs[1..] {
        let names: Vec<&str> = events.iter().map(|(k, _)| k.name.as_str()).collect();
        assert_eq!(names, ["OPERATOR_CALL", "Method::execute"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
