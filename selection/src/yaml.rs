//! Reading and writing `selected_operators.yaml`.
//!
//! Reading goes through serde with small validating newtypes, so that a bad operator name
//! or kernel key is reported by serde_yaml with its key path, line and column. Writing is
//! done by hand to match PyYAML's `yaml.safe_dump(data, default_flow_style=False)`
//! byte for byte: keys sorted, block style, two-space indents, sequences not indented
//! under their key, and PyYAML's rules for when a string needs quotes.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

use crate::key::KernelKey;
use crate::name::check_op_name;
use crate::{OperatorInfo, Selection};

// ---------------------------------------------------------------------------------------
// Reading

/// The document as written; absent keys and `null` values mean "the default".
#[derive(Deserialize)]
#[serde(
    expecting = "a mapping of selected_operators.yaml keys (operators, et_kernel_metadata, ...)"
)]
pub(crate) struct RawSelection {
    #[serde(default)]
    include_all_operators: Option<Flag>,
    #[serde(default)]
    include_all_non_op_selectives: Option<Flag>,
    #[serde(default)]
    debug_info: Option<Vec<Option<Text>>>,
    #[serde(default)]
    operators: Option<BTreeMap<OpName, Option<RawOperator>>>,
    #[serde(default)]
    kernel_metadata: Option<BTreeMap<Text, Option<Vec<Option<Text>>>>>,
    #[serde(default)]
    et_kernel_metadata: Option<BTreeMap<OpName, Option<Vec<KeyText>>>>,
    #[serde(default)]
    custom_classes: Option<Vec<Option<Text>>>,
    #[serde(default)]
    build_features: Option<Vec<Option<Text>>>,
}

#[derive(Deserialize)]
#[serde(
    expecting = "a mapping with is_root_operator, is_used_for_training, include_all_overloads, debug_info"
)]
struct RawOperator {
    #[serde(default)]
    is_root_operator: Option<Flag>,
    #[serde(default)]
    is_used_for_training: Option<Flag>,
    #[serde(default)]
    include_all_overloads: Option<Flag>,
    #[serde(default)]
    debug_info: Option<Vec<Option<Text>>>,
}

impl RawSelection {
    pub(crate) fn into_selection(self) -> Selection {
        let texts = |v: Option<Vec<Option<Text>>>| -> Vec<String> {
            v.into_iter().flatten().flatten().map(|t| t.0).collect()
        };
        let mut sel = Selection {
            include_all_operators: self.include_all_operators.is_some_and(|f| f.0),
            include_all_non_op_selectives: self.include_all_non_op_selectives.is_some_and(|f| f.0),
            debug_info: self.debug_info.map(|d| texts(Some(d))),
            ..Selection::default()
        };
        for (name, op) in self.operators.into_iter().flatten() {
            let info = match op {
                None => OperatorInfo::default(),
                Some(op) => OperatorInfo {
                    is_root_operator: op.is_root_operator.is_none_or(|f| f.0),
                    is_used_for_training: op.is_used_for_training.is_none_or(|f| f.0),
                    include_all_overloads: op.include_all_overloads.is_some_and(|f| f.0),
                    debug_info: op.debug_info.map(|d| texts(Some(d))),
                },
            };
            sel.operators.insert(name.0, info);
        }
        for (tag, dtypes) in self.kernel_metadata.into_iter().flatten() {
            let mut dtypes = texts(dtypes);
            dtypes.sort();
            dtypes.dedup();
            sel.kernel_metadata.insert(tag.0, dtypes);
        }
        for (name, keys) in self.et_kernel_metadata.into_iter().flatten() {
            let mut keys: Vec<String> = keys.into_iter().flatten().map(|k| k.0).collect();
            keys.sort();
            keys.dedup();
            sel.et_kernel_metadata.insert(name.0, keys);
        }
        sel.custom_classes = texts(self.custom_classes).into_iter().collect();
        sel.build_features = texts(self.build_features).into_iter().collect();
        sel
    }
}

/// A boolean, also in YAML 1.1 spelling (`yes`, `No`, `on`, ...), which PyYAML reads and
/// older selection files use.
struct Flag(bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Flag, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Flag;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a boolean (true or false)")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Flag, E> {
                Ok(Flag(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Flag, E> {
                match yaml11_bool(v) {
                    Some(b) => Ok(Flag(b)),
                    None => Err(E::invalid_value(de::Unexpected::Str(v), &self)),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Any scalar, as text (`debug_info` entries may be numbers or dates to YAML).
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.0 == other.0
    }
}
impl Eq for Text {}
impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Text {
    fn cmp(&self, other: &Text) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

/// A checked operator name (`aten::add.out`).
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct OpName(String);

impl<'de> Deserialize<'de> for OpName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<OpName, D::Error> {
        let name = String::deserialize(d)?;
        match check_op_name(&name) {
            Ok(()) => Ok(OpName(name)),
            Err(why) => Err(de::Error::custom(format!(
                "invalid operator name `{name}`: {why}"
            ))),
        }
    }
}

/// A checked kernel key string (`default` or `v1/6;0,1|...`).
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<KeyText, D::Error> {
        let key = String::deserialize(d)?;
        match KernelKey::parse(&key) {
            Ok(_) => Ok(KeyText(key)),
            Err(why) => Err(de::Error::custom(format!(
                "invalid kernel key `{key}`: {why}"
            ))),
        }
    }
}

/// YAML 1.1 booleans, as PyYAML's resolver knows them.
fn yaml11_bool(s: &str) -> Option<bool> {
    match s {
        "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => Some(true),
        "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => Some(false),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Writing

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

/// Writes `s` the way PyYAML's emitter does in block context: plain when that reads back
/// as the same string, else single-quoted, else (tabs, control characters, non-ASCII,
/// which `safe_dump` escapes) double-quoted. `column` is where the scalar starts,
/// `indent` where continuation lines start; unless `split` is false (simple keys), long
/// scalars are folded at spaces past column 80 as PyYAML folds them.
fn write_scalar(out: &mut String, s: &str, column: usize, indent: usize, split: bool) {
    let mut w = Writer {
        out,
        column,
        indent,
        whitespace: true,
        indention: false,
    };
    let text: Vec<char> = s.chars().collect();
    match style(s) {
        Style::Plain => w.plain(&text, split),
        Style::Single => w.single_quoted(&text, split),
        Style::Double => w.double_quoted(&text, split),
    }
}

/// The scalar as it appears in a simple key (never folded).
fn key_scalar(s: &str) -> String {
    let mut out = String::new();
    write_scalar(&mut out, s, 0, 0, false);
    out
}

/// PyYAML's `best_width`.
const WIDTH: usize = 80;

/// The parts of PyYAML's `Emitter` state that its scalar writers use.
struct Writer<'a> {
    out: &'a mut String,
    column: usize,
    indent: usize,
    whitespace: bool,
    indention: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

impl Writer<'_> {
    fn write(&mut self, data: &str) {
        self.column += data.chars().count();
        self.out.push_str(data);
    }

    fn write_chars(&mut self, data: &[char]) {
        self.column += data.len();
        self.out.extend(data);
    }

    fn line_break(&mut self, c: char) {
        self.whitespace = true;
        self.indention = true;
        self.column = 0;
        self.out.push(c);
    }

    fn write_indent(&mut self) {
        if !self.indention
            || self.column > self.indent
            || (self.column == self.indent && !self.whitespace)
        {
            self.line_break('\n');
        }
        if self.column < self.indent {
            self.whitespace = true;
            let pad = self.indent - self.column;
            self.out.extend(std::iter::repeat_n(' ', pad));
            self.column = self.indent;
        }
    }

    fn indicator(&mut self, indicator: &str, whitespace: bool) {
        self.write(indicator);
        self.whitespace = whitespace;
        self.indention = false;
    }

    /// `Emitter.write_plain`.
    fn plain(&mut self, text: &[char], split: bool) {
        self.whitespace = false;
        self.indention = false;
        let (mut spaces, mut breaks) = (false, false);
        let (mut start, mut end) = (0, 0);
        while end <= text.len() {
            let ch = text.get(end).copied();
            if spaces {
                if ch != Some(' ') {
                    if start + 1 == end && self.column > WIDTH && split {
                        self.write_indent();
                        self.whitespace = false;
                        self.indention = false;
                    } else {
                        self.write_chars(&text[start..end]);
                    }
                    start = end;
                }
            } else if breaks {
                if !ch.is_some_and(is_break) {
                    if text[start] == '\n' {
                        self.line_break('\n');
                    }
                    for &br in &text[start..end] {
                        self.line_break(br);
                    }
                    self.write_indent();
                    self.whitespace = false;
                    self.indention = false;
                    start = end;
                }
            } else if ch.is_none_or(|c| c == ' ' || is_break(c)) {
                self.write_chars(&text[start..end]);
                start = end;
            }
            if let Some(c) = ch {
                spaces = c == ' ';
                breaks = is_break(c);
            }
            end += 1;
        }
    }

    /// `Emitter.write_single_quoted`.
    fn single_quoted(&mut self, text: &[char], split: bool) {
        self.indicator("'", false);
        let (mut spaces, mut breaks) = (false, false);
        let (mut start, mut end) = (0, 0);
        while end <= text.len() {
            let ch = text.get(end).copied();
            if spaces {
                if ch != Some(' ') {
                    if start + 1 == end
                        && self.column > WIDTH
                        && split
                        && start != 0
                        && end != text.len()
                    {
                        self.write_indent();
                    } else {
                        self.write_chars(&text[start..end]);
                    }
                    start = end;
                }
            } else if breaks {
                if !ch.is_some_and(is_break) {
                    if text[start] == '\n' {
                        self.line_break('\n');
                    }
                    for &br in &text[start..end] {
                        self.line_break(br);
                    }
                    self.write_indent();
                    start = end;
                }
            } else if ch.is_none_or(|c| c == ' ' || c == '\'' || is_break(c)) && start < end {
                self.write_chars(&text[start..end]);
                start = end;
            }
            if ch == Some('\'') {
                self.write("''");
                start = end + 1;
            }
            if let Some(c) = ch {
                spaces = c == ' ';
                breaks = is_break(c);
            }
            end += 1;
        }
        self.indicator("'", false);
    }

    /// `Emitter.write_double_quoted` (with `allow_unicode=False`).
    fn double_quoted(&mut self, text: &[char], split: bool) {
        self.indicator("\"", false);
        let (mut start, mut end) = (0, 0);
        while end <= text.len() {
            let ch = text.get(end).copied();
            let escape = match ch {
                None => true,
                Some(c) => {
                    matches!(
                        c,
                        '"' | '\\' | '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}'
                    ) || !(' '..='~').contains(&c)
                }
            };
            if escape {
                if start < end {
                    self.write_chars(&text[start..end]);
                    start = end;
                }
                if let Some(c) = ch {
                    self.write(&escaped(c));
                    start = end + 1;
                }
            }
            if 0 < end
                && end + 1 < text.len()
                && (ch == Some(' ') || start >= end)
                && (self.column + end) as isize - start as isize > WIDTH as isize
                && split
            {
                if start < end {
                    self.write_chars(&text[start..end]);
                    start = end;
                }
                self.write("\\");
                self.write_indent();
                self.whitespace = false;
                self.indention = false;
                if text[start] == ' ' {
                    self.write("\\");
                }
            }
            end += 1;
        }
        self.indicator("\"", false);
    }
}

/// PyYAML's escape for one character of a double-quoted scalar.
fn escaped(c: char) -> String {
    let short = match c {
        '\0' => '0',
        '\x07' => 'a',
        '\x08' => 'b',
        '\t' => 't',
        '\n' => 'n',
        '\x0B' => 'v',
        '\x0C' => 'f',
        '\r' => 'r',
        '\x1B' => 'e',
        '"' => '"',
        '\\' => '\\',
        '\u{85}' => 'N',
        '\u{A0}' => '_',
        '\u{2028}' => 'L',
        '\u{2029}' => 'P',
        _ => {
            let n = c as u32;
            return if n <= 0xFF {
                format!("\\x{n:02X}")
            } else if n <= 0xFFFF {
                format!("\\u{n:04X}")
            } else {
                format!("\\U{n:08X}")
            };
        }
    };
    format!("\\{short}")
}

#[derive(Debug, PartialEq)]
enum Style {
    Plain,
    Single,
    Double,
}

/// PyYAML's `Emitter.analyze_scalar` + `choose_scalar_style`, for block context.
fn style(s: &str) -> Style {
    if s.is_empty() {
        return Style::Single;
    }
    let chars: Vec<char> = s.chars().collect();
    let is_space_or_break = |c: Option<&char>| {
        matches!(
            c,
            None | Some('\0' | ' ' | '\t' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
        )
    };
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut line_breaks = false;
    let mut special = false;
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_ws = true;
    let last = chars.len() - 1;
    for (i, &c) in chars.iter().enumerate() {
        let followed_by_ws = is_space_or_break(chars.get(i + 1));
        if i == 0 {
            if "#,[]{}&*!|>'\"%@`".contains(c) {
                block_indicators = true;
            }
            if (c == '?' || c == ':' || c == '-') && followed_by_ws {
                block_indicators = true;
            }
        } else if (c == ':' && followed_by_ws) || (c == '#' && preceded_by_ws) {
            block_indicators = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if !(c == '\n' || (' '..='~').contains(&c)) {
            // safe_dump uses allow_unicode=False: everything outside printable ASCII is
            // escaped, which needs double quotes.
            special = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if i == last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            if i == 0 {
                leading_break = true;
            }
            if i == last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_ws = is_space_or_break(Some(&c));
    }
    let mut block_plain = true;
    let mut single_quoted = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        block_plain = false;
    }
    if break_space {
        block_plain = false;
        single_quoted = false;
    }
    if space_break || special {
        block_plain = false;
        single_quoted = false;
    }
    if line_breaks {
        block_plain = false;
    }
    if block_indicators {
        block_plain = false;
    }
    if block_plain && !resolves_to_non_string(s) {
        Style::Plain
    } else if single_quoted {
        Style::Single
    } else {
        Style::Double
    }
}

/// True when PyYAML's implicit resolvers (YAML 1.1: bool, int, float, null, timestamp,
/// merge, value) would read the plain scalar `s` as something other than a string.
fn resolves_to_non_string(s: &str) -> bool {
    yaml11_bool(s).is_some()
        || matches!(s, "" | "~" | "null" | "Null" | "NULL" | "<<" | "=")
        || is_yaml11_int(s.as_bytes())
        || is_yaml11_float(s.as_bytes())
        || is_yaml11_timestamp(s.as_bytes())
}

/// A tiny cursor for the resolver patterns (all ASCII, no backtracking needed).
struct Cur<'a> {
    s: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }
    fn eat(&mut self, f: impl Fn(u8) -> bool) -> bool {
        match self.peek() {
            Some(c) if f(c) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    fn eat_str(&mut self, t: &str) -> bool {
        if self.s[self.i..].starts_with(t.as_bytes()) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn eat_many(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let start = self.i;
        while self.eat(&f) {}
        self.i - start
    }
    fn at_end(&self) -> bool {
        self.i == self.s.len()
    }
    fn sign(&mut self) {
        self.eat(|c| c == b'-' || c == b'+');
    }
    /// `(?::[0-5]?[0-9])+`
    fn sexagesimal(&mut self) -> bool {
        let mut groups = 0;
        while self.peek() == Some(b':') {
            let save = self.i;
            self.i += 1;
            let two = matches!(self.s.get(self.i..self.i + 2), Some([a, b]) if (b'0'..=b'5').contains(a) && b.is_ascii_digit());
            if two {
                self.i += 2;
            } else if !self.eat(|c| c.is_ascii_digit()) {
                self.i = save;
                break;
            }
            groups += 1;
        }
        groups > 0
    }
}

fn digit(c: u8) -> bool {
    c.is_ascii_digit()
}
fn digit_(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

fn is_yaml11_int(s: &[u8]) -> bool {
    let alt = |f: &dyn Fn(&mut Cur<'_>) -> bool| {
        let mut c = Cur { s, i: 0 };
        f(&mut c) && c.at_end()
    };
    alt(&|c| {
        c.sign();
        c.eat_str("0b") && c.eat_many(|b| b == b'0' || b == b'1' || b == b'_') > 0
    }) || alt(&|c| {
        c.sign();
        c.eat_str("0") && c.eat_many(|b| (b'0'..=b'7').contains(&b) || b == b'_') > 0
    }) || alt(&|c| {
        c.sign();
        c.eat_str("0")
            || (c.eat(|b| (b'1'..=b'9').contains(&b)) && {
                c.eat_many(digit_);
                true
            })
    }) || alt(&|c| {
        c.sign();
        c.eat_str("0x") && c.eat_many(|b| b.is_ascii_hexdigit() || b == b'_') > 0
    }) || alt(&|c| {
        c.sign();
        c.eat(|b| (b'1'..=b'9').contains(&b)) && {
            c.eat_many(digit_);
            c.sexagesimal()
        }
    })
}

fn is_yaml11_float(s: &[u8]) -> bool {
    let alt = |f: &dyn Fn(&mut Cur<'_>) -> bool| {
        let mut c = Cur { s, i: 0 };
        f(&mut c) && c.at_end()
    };
    // `(?:[eE][-+][0-9]+)?`
    let exponent = |c: &mut Cur<'_>| {
        let save = c.i;
        if !(c.eat(|b| b == b'e' || b == b'E')
            && c.eat(|b| b == b'-' || b == b'+')
            && c.eat_many(digit) > 0)
        {
            c.i = save;
        }
    };
    alt(&|c| {
        c.sign();
        c.eat(digit)
            && {
                c.eat_many(digit_);
                c.eat_str(".")
            }
            && {
                c.eat_many(digit_);
                exponent(c);
                true
            }
    }) || alt(&|c| {
        c.eat_str(".") && c.eat(digit) && {
            c.eat_many(digit_);
            exponent(c);
            true
        }
    }) || alt(&|c| {
        c.sign();
        c.eat(digit)
            && {
                c.eat_many(digit_);
                c.sexagesimal()
            }
            && c.eat_str(".")
            && {
                c.eat_many(digit_);
                true
            }
    }) || alt(&|c| {
        c.sign();
        c.eat_str(".") && (c.eat_str("inf") || c.eat_str("Inf") || c.eat_str("INF"))
    }) || alt(&|c| c.eat_str(".") && (c.eat_str("nan") || c.eat_str("NaN") || c.eat_str("NAN")))
}

fn is_yaml11_timestamp(s: &[u8]) -> bool {
    let n_digits = |c: &mut Cur<'_>, min: usize, max: usize| {
        let start = c.i;
        while c.i - start < max && c.eat(digit) {}
        c.i - start >= min
    };
    let ws = |b: u8| b == b' ' || b == b'\t';
    // [0-9]{4}-[0-9]{2}-[0-9]{2}
    let mut c = Cur { s, i: 0 };
    if n_digits(&mut c, 4, 4)
        && c.eat_str("-")
        && n_digits(&mut c, 2, 2)
        && c.eat_str("-")
        && n_digits(&mut c, 2, 2)
        && c.at_end()
    {
        return true;
    }
    let mut c = Cur { s, i: 0 };
    let ok = n_digits(&mut c, 4, 4)
        && c.eat_str("-")
        && n_digits(&mut c, 1, 2)
        && c.eat_str("-")
        && n_digits(&mut c, 1, 2)
        && (c.eat(|b| b == b'T' || b == b't') || c.eat_many(ws) > 0)
        && n_digits(&mut c, 1, 2)
        && c.eat_str(":")
        && n_digits(&mut c, 2, 2)
        && c.eat_str(":")
        && n_digits(&mut c, 2, 2);
    if !ok {
        return false;
    }
    if c.eat_str(".") {
        c.eat_many(digit);
    }
    if c.at_end() {
        return true;
    }
    c.eat_many(ws);
    if c.eat_str("Z") {
        return c.at_end();
    }
    if c.eat(|b| b == b'-' || b == b'+') && n_digits(&mut c, 1, 2) {
        if c.eat_str(":") && !n_digits(&mut c, 2, 2) {
            return false;
        }
        return c.at_end();
    }
    false
}

#[cfg(test)]
mod tests {
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
