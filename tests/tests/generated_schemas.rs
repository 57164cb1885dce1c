//! The checked-in flatc output matches the schemas it was generated from, in each crate
//! of [`SCHEMA_CRATES`].
//!
//! Every `.fbs` in a crate's `schema/` that declares a `root_type` is a root schema `NAME`,
//! with flatc's output in its `src/NAME_generated.rs` and the derived field offsets in
//! `src/NAME_fields.rs` (`scripts/regen-schema.sh` finds them the same way).
//!
//! Always: the FNV-1a 64 hashes in `schema/generated.lock` match the schema files and the
//! generated code, so editing a schema without regenerating, or editing generated code by
//! hand, fails here. When `flatc` 25.12.19 is on PATH: flatc's output is byte-identical to
//! the checked-in files.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

/// Must equal the `flatbuffers` crate version (see scripts/regen-schema.sh).
const FLATC_VERSION: &str = "25.12.19";

const STALE: &str = "the generated schema code is stale: run scripts/regen-schema.sh";

/// The crates that hold schemas: the program's and the XNNPACK payload's.
const SCHEMA_CRATES: [&str; 2] = ["et-schema", "et-xnnpack-schema"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every schema file name, sorted byte-wise (as the script's `LC_ALL=C ls`).
fn schema_files(krate: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(workspace().join(krate).join("schema"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".fbs"))
        .collect();
    names.sort();
    names
}

/// The root schemas' names (without `.fbs`), sorted.
fn root_schemas(krate: &str) -> Vec<String> {
    let dir = workspace().join(krate).join("schema");
    schema_files(krate)
        .into_iter()
        .filter(|f| {
            fs::read_to_string(dir.join(f))
                .unwrap()
                .lines()
                .any(|l| l.starts_with("root_type "))
        })
        .map(|f| f.trim_end_matches(".fbs").to_owned())
        .collect()
}

/// The files the lock must cover, relative to the workspace root, in its order.
fn locked_files(krate: &str) -> Vec<String> {
    let mut files: Vec<String> = schema_files(krate)
        .iter()
        .map(|f| format!("{krate}/schema/{f}"))
        .collect();
    for name in root_schemas(krate) {
        files.push(format!("{krate}/src/{name}_generated.rs"));
        files.push(format!("{krate}/src/{name}_fields.rs"));
    }
    files
}

/// Every (crate, root schema) pair.
fn roots() -> Vec<(&'static str, String)> {
    SCHEMA_CRATES
        .iter()
        .flat_map(|&krate| root_schemas(krate).into_iter().map(move |n| (krate, n)))
        .collect()
}

fn fnv1a64(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[test]
fn fnv1a64_known_values() {
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
}

#[test]
fn every_schema_is_a_root() {
    assert_eq!(
        root_schemas("et-schema"),
        ["bundled_program", "etdump", "flat_tensor", "program"]
    );
    assert_eq!(root_schemas("et-xnnpack-schema"), ["xnnpack"]);
}

#[test]
fn generated_code_matches_the_lock() {
    for krate in SCHEMA_CRATES {
        check_lock(krate);
    }
}

fn check_lock(krate: &str) {
    let root = workspace();
    let lock = fs::read_to_string(root.join(krate).join("schema/generated.lock"))
        .unwrap_or_else(|e| panic!("{krate}/schema/generated.lock: {e}; {STALE}"));
    let mut lines = lock.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(
        lines.next(),
        Some(format!("flatc {FLATC_VERSION}").as_str()),
        "generated.lock names another flatc version; {STALE}"
    );
    let entries: Vec<(&str, &str)> = lines.map(|l| l.split_once(' ').unwrap()).collect();
    let paths: Vec<&str> = entries.iter().map(|&(_, p)| p).collect();
    assert_eq!(
        paths,
        locked_files(krate),
        "generated.lock lists other files; {STALE}"
    );
    for (hash, path) in entries {
        let data = fs::read(root.join(path)).unwrap();
        assert_eq!(
            format!("{:016x}", fnv1a64(&data)),
            hash,
            "{path} changed since generation; {STALE}"
        );
    }
}

#[test]
fn generated_code_matches_flatc_when_available() {
    let version = Command::new("flatc").arg("--version").output();
    let found = version
        .as_ref()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    if found.as_deref() != Some(&format!("flatc version {FLATC_VERSION}")) {
        eprintln!("skipped: flatc {FLATC_VERSION} is not on PATH (found {found:?})");
        return;
    }
    let root = workspace();
    let out = env::temp_dir().join(format!("etch-schema-{}", std::process::id()));
    fs::create_dir_all(&out).unwrap();
    for (krate, name) in roots() {
        let status = Command::new("flatc")
            .current_dir(root.join(krate).join("schema"))
            .args(["--rust", "--gen-all", "-o"])
            .arg(&out)
            .arg(format!("{name}.fbs"))
            .status()
            .unwrap();
        assert!(status.success(), "flatc failed on {name}.fbs");
        let generated = format!("{name}_generated.rs");
        let fresh = fs::read(out.join(&generated)).unwrap();
        let checked_in = fs::read(root.join(krate).join("src").join(&generated)).unwrap();
        assert!(
            fresh == checked_in,
            "flatc output for {name}.fbs differs; {STALE}"
        );
    }
    let _ = fs::remove_dir_all(&out);
}

#[test]
fn field_offsets_are_the_generated_code_s() {
    // NAME_fields.rs is derived from NAME_generated.rs by scripts/schema-fields.py; run it
    // again (when python3 is present) and compare.
    let root = workspace();
    for (krate, name) in roots() {
        let out = env::temp_dir().join(format!("etch-{name}-fields-{}.rs", std::process::id()));
        let Ok(status) = Command::new("python3")
            .arg(root.join("scripts/schema-fields.py"))
            .arg(root.join(format!("{krate}/src/{name}_generated.rs")))
            .arg(&out)
            .status()
        else {
            eprintln!("skipped: python3 is not on PATH");
            return;
        };
        assert!(
            status.success(),
            "scripts/schema-fields.py failed on {name}"
        );
        let fresh = fs::read(&out).unwrap();
        let _ = fs::remove_file(&out);
        let checked_in = fs::read(root.join(format!("{krate}/src/{name}_fields.rs"))).unwrap();
        assert!(
            fresh == checked_in,
            "{name}_fields.rs differs from its generator's output; {STALE}"
        );
    }
}
