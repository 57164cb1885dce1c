//! `etch generate` on the LLM programs ExecuTorch's `export_llm` wrote: greedy generation
//! chooses ExecuTorch's tokens, text prompts stream text and statistics, and a bad
//! tokenizer, a prompt longer than the context or a program without the LLM constant
//! methods is a clear error. Also `etch run --iterations` on such a stateful program.
#![cfg(feature = "llm")]

use std::process::{Command, Output};

use etch_tests::fixtures_dir;

fn etch(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .current_dir(fixtures_dir())
        .output()
        .expect("etch runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// ExecuTorch's greedy tokens for `name`, from its `llm.yaml`.
fn greedy(name: &str) -> Vec<u64> {
    let yaml =
        std::fs::read_to_string(fixtures_dir().join(format!("llm/{name}.llm.yaml"))).unwrap();
    let y: serde_yaml::Value = serde_yaml::from_str(&yaml).unwrap();
    y["greedy_tokens"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

fn json_tokens(stdout: &str, key: &str) -> Vec<u64> {
    let start = stdout.find(&format!("\"{key}\":[")).unwrap() + key.len() + 4;
    let end = start + stdout[start..].find(']').unwrap();
    stdout[start..end]
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect()
}

#[test]
fn greedy_json_matches_executorch_on_both_programs() {
    for name in ["llama_tiny_fp32", "llama_tiny_8da4w"] {
        // A warm-up generation first must leave nothing behind in the KV cache that
        // changes the reported one.
        for (threads, warmup) in [("1", false), ("2", false), ("1", true)] {
            let model = format!("llm/{name}.pte");
            let mut args = vec![
                "generate",
                &model,
                "--prompt-tokens",
                "1,45,99,300,17,250",
                "--temperature",
                "0",
                "--max-new-tokens",
                "17",
                "--threads",
                threads,
                "--json",
            ];
            if warmup {
                args.push("--warmup");
            }
            let o = etch(&args);
            let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
            assert!(o.status.success(), "{name}: {stderr}");
            assert_eq!(
                json_tokens(&stdout, "generated_tokens"),
                greedy(name),
                "{name}"
            );
            for key in [
                "\"prefill_ms\":",
                "\"decode_tokens_per_s\":",
                "\"stop\":\"max_new_tokens\"",
            ] {
                assert!(stdout.contains(key), "{name}: {stdout}");
            }
        }
    }
}

#[test]
fn text_prompt_streams_text_and_statistics() {
    let o = etch(&[
        "generate",
        "llm/llama_tiny_fp32.pte",
        "--tokenizer",
        "llm/tokenizer.json",
        "--prompt",
        "Once upon a time",
        "--max-new-tokens",
        "12",
        "--seed",
        "3",
    ]);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    assert!(!stdout.trim().is_empty(), "no text: {stderr}");
    for key in ["prefill", "time to first token", "tokens/s", "peak memory"] {
        assert!(stderr.contains(key), "{stderr}");
    }
    // With --json the prompt is the tokenizer's ids after the program's BOS (1).
    let o = etch(&[
        "generate",
        "llm/llama_tiny_fp32.pte",
        "--tokenizer",
        "llm/tokenizer.json",
        "--prompt",
        "Once upon a time",
        "--max-new-tokens",
        "4",
        "--json",
    ]);
    let stdout = text(&o.stdout);
    assert_eq!(
        json_tokens(&stdout, "prompt_tokens"),
        [1, 49, 80, 316, 312, 82, 264, 262, 259, 381, 71]
    );
    assert!(stdout.contains("\"text\":\""), "{stdout}");
}

#[test]
fn bad_inputs_are_clear_errors() {
    let dir = std::env::temp_dir().join(format!("etch-generate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("tokenizer.json");
    std::fs::write(&bad, "{\"model\": {\"type\": \"BPE\"").unwrap();
    let bad = bad.to_str().unwrap();
    let long: Vec<String> = (0..200).map(|_| String::from("5")).collect();
    let long = long.join(",");
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec![
                "generate",
                "llm/llama_tiny_fp32.pte",
                "--tokenizer",
                bad,
                "--prompt",
                "hi",
            ],
            "not a valid tokenizer.json",
        ),
        (
            vec![
                "generate",
                "llm/llama_tiny_fp32.pte",
                "--prompt-tokens",
                &long,
            ],
            "the prompt has 200 tokens, but the program's context holds 128",
        ),
        (
            vec!["generate", "mlp.pte", "--prompt-tokens", "1,2"],
            "not an LLM program",
        ),
        (
            vec!["generate", "llm/llama_tiny_fp32.pte", "--prompt", "hi"],
            "--prompt needs --tokenizer",
        ),
    ];
    for (args, expect) in cases {
        let o = etch(&args);
        let stderr = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(stderr.contains(expect), "{args:?}: {stderr}");
    }
}

#[test]
fn iterations_on_a_kv_cache_program_say_state_carries_over() {
    let o = etch(&[
        "run",
        "llm/llama_tiny_fp32.pte",
        "--iterations",
        "3",
        "--json",
    ]);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    assert!(stdout.contains("\"stateful\":true"), "{stdout}");
    let o = etch(&["run", "mlp.pte", "--iterations", "2", "--json"]);
    assert!(text(&o.stdout).contains("\"stateful\":false"));
    let o = etch(&["run", "llm/llama_tiny_fp32.pte", "--iterations", "2"]);
    assert!(text(&o.stdout).contains("carries over from run to run"));
}
