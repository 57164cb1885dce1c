//! The `#[kernel]` UI suite: every rejected form fails with its message at the right span
//! (`ui/*.rs` with a `.stderr` beside each), and the accepted forms in `ui/pass/` build
//! and run. Regenerate the `.stderr` files with `TRYBUILD=overwrite` on the pinned
//! toolchain; never edit them by hand.

use std::path::{Path, PathBuf};

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The string literals in a Rust source file, with `\"` and `\\` unescaped.
fn string_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                // A char literal or a lifetime: skip `'"'` and `'\"'` so they do not open
                // a string.
                let rest: String = chars.clone().take(3).collect();
                if rest.starts_with("\"'") {
                    chars.nth(1);
                } else if rest.starts_with("\\\"'") {
                    chars.nth(2);
                }
            }
            '"' => {
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(e) = chars.next() {
                                s.push(e);
                            }
                        }
                        '"' => break,
                        c => s.push(c),
                    }
                }
                out.push(s);
            }
            _ => {}
        }
    }
    out
}

/// The fixed parts of a format string (between `{..}` placeholders).
fn fixed_parts(message: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        parts.push(&rest[..open]);
        rest = rest[open..]
            .find('}')
            .map_or("", |close| &rest[open + close + 1..]);
    }
    parts.push(rest);
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| p.len() > 3)
        .collect()
}

fn stderr_files(dir: &Path) -> String {
    let mut all = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "stderr") {
            all.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
    all
}

/// Every message the checker and the argument parser can emit is shown by some UI case.
#[test]
fn every_message_has_a_ui_case() {
    let stderr = stderr_files(&manifest_dir().join("ui"));
    let sources = ["check.rs", "args.rs"];
    let mut checked = 0;
    for file in sources {
        let path = manifest_dir().join("../et-macros/src/kernel").join(file);
        let source = std::fs::read_to_string(&path).unwrap();
        for message in string_literals(&source) {
            if !message.contains("#[kernel]") {
                continue;
            }
            for part in fixed_parts(&message) {
                checked += 1;
                assert!(
                    stderr.contains(part),
                    "{file}: no ui/*.stderr shows the message part {part:?}"
                );
            }
        }
    }
    assert!(checked >= 30, "only {checked} message parts found");
}

#[test]
fn message_parts_split_at_placeholders() {
    assert_eq!(
        fixed_parts("unknown #[kernel] dtype `{ident}`; valid dtypes are {valid}"),
        ["unknown #[kernel] dtype `", "`; valid dtypes are"]
    );
    assert_eq!(
        string_literals(r#"f("a \"b\"", 'x', '"'); // "not this""#),
        ["a \"b\""]
    );
}
