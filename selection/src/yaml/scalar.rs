//! PyYAML's scalar writers for block context, ported line by line from its `Emitter`:
//! style choice (plain, single- or double-quoted), escapes, and folding at 80 columns.

use super::resolve::resolves_to_non_string;

/// Writes `s` the way PyYAML's emitter does in block context: plain when that reads back
/// as the same string, else single-quoted, else (tabs, control characters, non-ASCII,
/// which `safe_dump` escapes) double-quoted. `column` is where the scalar starts,
/// `indent` where continuation lines start; unless `split` is false (simple keys), long
/// scalars are folded at spaces past column 80 as PyYAML folds them.
pub(super) fn write_scalar(out: &mut String, s: &str, column: usize, indent: usize, split: bool) {
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
pub(super) fn key_scalar(s: &str) -> String {
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
pub(super) enum Style {
    Plain,
    Single,
    Double,
}

/// PyYAML's `Emitter.analyze_scalar` + `choose_scalar_style`, for block context.
pub(super) fn style(s: &str) -> Style {
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
