//! The C and C++ examples (examples/c) compiled with the system compiler against
//! include/etch.h and the libraries cargo builds, then run: MobileNetV2 (portable and
//! XNNPACK) against ExecuTorch's logits, the LLM programs against ExecuTorch's greedy
//! tokens, and bad input giving statuses. Skipped, saying so, when there is no compiler.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use et_llm::runner::{Sampling, TextGenerator};
use et_llm::tokenizer::{TextStream, Tokenizer};

use et_ops as _;
use et_xnnpack as _;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixtures() -> PathBuf {
    repo().join("tests/fixtures")
}

/// `$CC`/`$CXX`, else `cc`/`c++`, if it runs.
fn compiler(var: &str, default: &str) -> Option<String> {
    let cc = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let works = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    works.then_some(cc)
}

/// The directory holding libetch.a and libetch.so, built with this test's profile.
///
/// `cargo test` builds only the crate's rlib, so the C libraries are built here: a
/// `cargo build` of et-capi into this test's target directory and profile, which reuses
/// what `cargo test` compiled when the features agree.
fn libraries() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        // This test runs as <target>/<profile dir>/deps/examples-<hash>.
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
        let target_dir = profile_dir.parent().unwrap();
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "test",
            Some("release") => "release",
            Some(other) => other,
            None => panic!("cannot tell the profile of {}", exe.display()),
        };
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let out = Command::new(cargo)
            .args(["build", "--quiet", "-p", "et-capi", "--profile", profile])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(repo())
            .output()
            .expect("cannot run cargo");
        assert!(
            out.status.success(),
            "cargo build -p et-capi failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for lib in ["libetch.a", "libetch.so"] {
            assert!(
                profile_dir.join(lib).exists(),
                "cargo built no {}",
                profile_dir.join(lib).display()
            );
        }
        profile_dir
    })
}

/// Compiles `source` against the header and the static library (linked whole, as
/// docs/c-api.md says) or, with `shared`, the shared one; `None` without a compiler.
fn build(source: &str, shared: bool) -> Option<PathBuf> {
    let cpp = source.ends_with(".cpp");
    let Some(cc) = (if cpp {
        compiler("CXX", "c++")
    } else {
        compiler("CC", "cc")
    }) else {
        println!("skipped: no C/C++ compiler (set CC/CXX or install cc and c++) for {source}");
        return None;
    };
    let lib = libraries();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("capi-examples");
    std::fs::create_dir_all(&dir).unwrap();
    let stem = Path::new(source).file_stem().unwrap().to_str().unwrap();
    let exe = dir.join(format!("{stem}{}", if shared { "-shared" } else { "" }));
    let mut cmd = Command::new(&cc);
    cmd.arg(if cpp { "-std=c++17" } else { "-std=c11" })
        .args(["-Wall", "-Wextra", "-Werror", "-O1", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(repo().join("et-capi/include"))
        .arg(repo().join("examples/c").join(source));
    if shared {
        cmd.arg(format!("-L{}", lib.display()))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-letch");
    } else {
        cmd.arg("-Wl,--whole-archive")
            .arg(lib.join("libetch.a"))
            .arg("-Wl,--no-whole-archive");
    }
    let out = cmd.args(["-lpthread", "-ldl", "-lm"]).output().unwrap();
    assert!(
        out.status.success(),
        "{cc} {source} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(exe)
}

/// Runs an example, printing its output, and asserts it exited 0.
fn run(exe: &Path, arg: &Path) -> String {
    let out: Output = Command::new(exe).arg(arg).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    print!("{stdout}");
    eprint!("{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "{} exited with {}",
        exe.display(),
        out.status
    );
    stdout
}

#[test]
fn mv2_in_c_matches_executorch() {
    for shared in [false, true] {
        let Some(exe) = build("mv2.c", shared) else {
            return;
        };
        let out = run(&exe, &fixtures());
        assert!(out.contains("mv2.pte: ok"), "{out}");
        assert!(out.contains("mv2_xnnpack.pte: ok"), "{out}");
        assert!(out.contains("mv2_xnnpack_ptd.pte: ok"), "{out}");
    }
}

#[test]
fn bad_input_in_c_gives_statuses() {
    let Some(exe) = build("bad_input.c", false) else {
        return;
    };
    let out = run(&exe, &fixtures());
    assert!(
        out.contains("all bad-input cases gave their status"),
        "{out}"
    );
    assert!(!out.lines().any(|l| l.starts_with("FAILED")), "{out}");
}

/// `greedy_tokens` of tests/fixtures/llm/NAME.llm.yaml.
fn greedy_tokens(name: &str) -> Vec<u32> {
    let yaml = std::fs::read_to_string(fixtures().join(format!("llm/{name}.llm.yaml"))).unwrap();
    yaml.lines()
        .skip_while(|l| !l.starts_with("greedy_tokens:"))
        .skip(1)
        .map_while(|l| l.strip_prefix("- "))
        .map(|t| t.trim().parse().unwrap())
        .collect()
}

/// The text greedy generation gives after "Once upon a time", through the Rust API.
fn rust_text() -> String {
    let dir = fixtures().join("llm");
    let tokenizer = Tokenizer::open(dir.join("tokenizer.json")).unwrap();
    let mut llm =
        TextGenerator::from_file(dir.join("llama_tiny_fp32.pte"), &[] as &[&str]).unwrap();
    let mut prompt = vec![1u32];
    prompt.extend(tokenizer.encode("Once upon a time").unwrap());
    let mut stream = TextStream::new(&tokenizer);
    let mut text = String::new();
    llm.generate(&prompt, 8, Sampling::default(), |t| {
        text.push_str(&stream.push(t).unwrap());
        true
    })
    .unwrap();
    text.push_str(&stream.finish().unwrap());
    text
}

#[test]
fn llm_in_cpp_generates_executorchs_tokens() {
    let Some(exe) = build("llm.cpp", false) else {
        return;
    };
    let out = run(&exe, &fixtures().join("llm"));
    assert!(out.contains("all LLM checks passed"), "{out}");
    for name in ["llama_tiny_fp32", "llama_tiny_8da4w"] {
        let want = greedy_tokens(name);
        assert_eq!(want.len(), 17, "{name}");
        let line = format!("{name}.pte: tokens ");
        let got: Vec<u32> = out
            .lines()
            .find_map(|l| l.strip_prefix(&line))
            .unwrap_or_else(|| panic!("no `{line}` line in:\n{out}"))
            .split(' ')
            .map(|t| t.parse().unwrap())
            .collect();
        assert_eq!(got, want, "{name}");
    }
    let hex: String = rust_text().bytes().map(|b| format!("{b:02x}")).collect();
    assert!(
        out.contains(&format!("text_hex: {hex}\n")),
        "C++ text differs from Rust's {hex}:\n{out}"
    );
}
