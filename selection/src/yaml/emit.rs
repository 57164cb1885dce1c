//! Writing `selected_operators.yaml` as PyYAML's `yaml.safe_dump(data,
//! default_flow_style=False)` does: keys sorted, block style, two-space indents,
//! sequences not indented under their key, `? key` for long or empty keys, and PyYAML's
//! scalar writers (style choice, escapes, folding at 80 columns) ported line by line from
//! its `Emitter`.

use std::collections::BTreeMap;

use super::scalar::{key_scalar, write_scalar};
use crate::Selection;

pub(crate) fn write(sel: &Selection) -> String {
    let mut out = String::new();
    // Top-level keys in sorted order, as yaml.safe_dump writes them.
    list(&mut out, 0, "build_features", sel.build_features.iter());
    list(&mut out, 0, "custom_classes", sel.custom_classes.iter());
    if let Some(debug_info) = &sel.debug_info {
        list(&mut out, 0, "debug_info", debug_info.iter());
    }
    map_of_lists(&mut out, "et_kernel_metadata", &sel.et_kernel_metadata);
    flag(
        &mut out,
        0,
        "include_all_non_op_selectives",
        sel.include_all_non_op_selectives,
    );
    flag(
        &mut out,
        0,
        "include_all_operators",
        sel.include_all_operators,
    );
    map_of_lists(&mut out, "kernel_metadata", &sel.kernel_metadata);
    if sel.operators.is_empty() {
        out.push_str("operators: {}\n");
    } else {
        out.push_str("operators:\n");
        for (name, op) in &sel.operators {
            let form = key(&mut out, 2, name);
            let mut fields = String::new();
            if let Some(debug_info) = &op.debug_info {
                list(&mut fields, 4, "debug_info", debug_info.iter());
            }
            flag(
                &mut fields,
                4,
                "include_all_overloads",
                op.include_all_overloads,
            );
            flag(&mut fields, 4, "is_root_operator", op.is_root_operator);
            flag(
                &mut fields,
                4,
                "is_used_for_training",
                op.is_used_for_training,
            );
            block(&mut out, form, &fields);
        }
    }
    out
}

/// How a mapping key was written.
#[derive(Clone, Copy, PartialEq)]
enum KeyForm {
    /// `key:`
    Simple,
    /// `? key` then `:` on the next line: PyYAML's form for keys that are empty,
    /// multi-line, or 128 characters or longer.
    Complex,
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn key(out: &mut String, indent: usize, k: &str) -> KeyForm {
    pad(out, indent);
    let multiline = k.contains(['\n', '\u{85}', '\u{2028}', '\u{2029}']);
    // PyYAML's `check_simple_key` counts the `!!str` tag it does not write (5 chars).
    if k.is_empty() || multiline || k.chars().count() + 5 >= 128 {
        out.push_str("? ");
        write_scalar(out, k, indent + 2, indent + 2, true);
        out.push('\n');
        pad(out, indent);
        out.push(':');
        KeyForm::Complex
    } else {
        out.push_str(&key_scalar(k));
        out.push(':');
        KeyForm::Simple
    }
}

/// A block value after its key: on the next lines, or after a complex key's `:` on the
/// same line.
fn block(out: &mut String, form: KeyForm, lines: &str) {
    match form {
        KeyForm::Simple => {
            out.push('\n');
            out.push_str(lines);
        }
        KeyForm::Complex => {
            out.push(' ');
            out.push_str(lines.trim_start_matches(' '));
        }
    }
}

fn flag(out: &mut String, indent: usize, k: &str, v: bool) {
    key(out, indent, k);
    out.push_str(if v { " true\n" } else { " false\n" });
}

/// `k: []`, or `k:` followed by `- item` lines at the key's own indent (two more after
/// a complex key).
fn list<'a>(
    out: &mut String,
    indent: usize,
    k: &str,
    items: impl ExactSizeIterator<Item = &'a String>,
) {
    let form = key(out, indent, k);
    if items.len() == 0 {
        out.push_str(" []\n");
        return;
    }
    let item_indent = if form == KeyForm::Complex {
        indent + 2
    } else {
        indent
    };
    let mut lines = String::new();
    for item in items {
        pad(&mut lines, item_indent);
        lines.push_str("- ");
        write_scalar(&mut lines, item, item_indent + 2, item_indent + 2, true);
        lines.push('\n');
    }
    block(out, form, &lines);
}

fn map_of_lists(out: &mut String, k: &str, map: &BTreeMap<String, Vec<String>>) {
    key(out, 0, k);
    if map.is_empty() {
        out.push_str(" {}\n");
        return;
    }
    out.push('\n');
    for (name, items) in map {
        list(out, 2, name, items.iter());
    }
}

#[cfg(test)]
mod tests {
    use super::super::scalar::{style, Style};
    use super::*;

    #[test]
    fn plain_when_pyyaml_writes_plain() {
        for s in [
            "aten::add.out",
            "v1/6;0,1|6;0,1|6;0,1|6;0,1",
            "v1/6;|11;|11;",
            "default",
            "mv2.pte",
            "/tmp/models/mv2.pte",
            "a b",
            "v1",
            "0o7",
            "1.2.3",
            "0x",
            "12:60",
            "a#b",
            "a:b",
        ] {
            assert_eq!(style(s), Style::Plain, "{s:?}");
        }
    }

    #[test]
    fn quoted_when_pyyaml_quotes() {
        for s in [
            "",
            "yes",
            "No",
            "on",
            "true",
            "null",
            "~",
            "<<",
            "=",
            "1",
            "-1",
            "+12",
            "017",
            "0b101",
            "0x1F",
            "1_000",
            "1:20",
            "1.5",
            "1.",
            ".5",
            "-.inf",
            ".NaN",
            "1.0e+3",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-12-14 21:59:43.10 -5",
            "2001-12-14 21:59:43 Z",
            "- a",
            "-",
            ": x",
            "a: b",
            "a #b",
            "#a",
            "[a]",
            "{a",
            "*a",
            "&a",
            "!a",
            "|a",
            ">a",
            "'a",
            "\"a",
            "%a",
            "@a",
            "`a",
            "---",
            "...x",
            " a",
            "a ",
            "?",
        ] {
            assert_ne!(style(s), Style::Plain, "{s:?}");
        }
        // YAML 1.1 floats need a dot.
        assert_eq!(style("1e3"), Style::Plain);
        assert_eq!(key_scalar("it's"), "it's");
        assert_eq!(key_scalar("'it's'"), "'''it''s'''");
        assert_eq!(key_scalar("yes"), "'yes'");
        assert_eq!(key_scalar(""), "''");
        assert_eq!(key_scalar("a\tb"), "\"a\\tb\"");
        assert_eq!(key_scalar("é"), "\"\\xE9\"");
        assert_eq!(key_scalar("✓"), "\"\\u2713\"");
        // Values with line breaks are single-quoted, each break doubled.
        let mut out = String::new();
        write_scalar(&mut out, "line\nbreak", 2, 2, true);
        assert_eq!(out, "'line\n\n  break'");
    }
}
