//! PyYAML's implicit resolvers (YAML 1.1): which plain scalars read back as something
//! other than a string, so that the writer must quote them.

use super::yaml11_bool;

/// True when PyYAML's implicit resolvers (YAML 1.1: bool, int, float, null, timestamp,
/// merge, value) would read the plain scalar `s` as something other than a string.
pub(super) fn resolves_to_non_string(s: &str) -> bool {
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
