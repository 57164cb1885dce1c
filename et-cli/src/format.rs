//! Printing tensors and JSON.

use std::fmt::Write;

use et_runtime::{EValue, ScalarType, Tensor};

/// The tensor's elements in logical (row-major) order as display strings.
pub fn elements(t: &Tensor) -> Result<Vec<String>, String> {
    let bytes = t.to_row_major_bytes().map_err(|e| e.to_string())?;
    let show = element_formatter(t.dtype())?;
    Ok(bytes
        .chunks_exact(t.dtype().element_size())
        .map(show)
        .collect())
}

/// How one element of `dtype`, given as its little-endian bytes, is printed.
pub fn element_formatter(dtype: ScalarType) -> Result<fn(&[u8]) -> String, String> {
    Ok(match dtype {
        ScalarType::Float => |b| fmt_float(f32::from_le_bytes(array(b)) as f64),
        ScalarType::Double => |b| fmt_float(f64::from_le_bytes(array(b))),
        ScalarType::Half => |b| fmt_float(et_runtime::f16::from_le_bytes(array(b)).to_f64()),
        ScalarType::BFloat16 => |b| fmt_float(et_runtime::bf16::from_le_bytes(array(b)).to_f64()),
        ScalarType::Byte => |b| b[0].to_string(),
        ScalarType::Char => |b| (b[0] as i8).to_string(),
        ScalarType::Short => |b| i16::from_le_bytes(array(b)).to_string(),
        ScalarType::Int => |b| i32::from_le_bytes(array(b)).to_string(),
        ScalarType::Long => |b| i64::from_le_bytes(array(b)).to_string(),
        ScalarType::Bool => |b| (b[0] != 0).to_string(),
        other => return Err(format!("cannot print {other} tensors")),
    })
}

/// One element's bytes as an array (chunks are exactly the element size).
fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

fn fmt_float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{v}")
    }
}

/// `tensor(sizes=[1, 1000], dtype=float32, [..])`.
pub fn describe(v: &EValue<'_>) -> Result<String, String> {
    Ok(match v {
        EValue::Tensor(t) => {
            format!(
                "tensor(sizes={:?}, dtype={}, [{}])",
                t.sizes(),
                t.dtype(),
                elements(t)?.join(", ")
            )
        }
        EValue::None => "None".into(),
        EValue::Int(i) => i.to_string(),
        EValue::Double(d) => fmt_float(*d),
        EValue::Bool(b) => b.to_string(),
        EValue::String(s) => format!("{s:?}"),
        EValue::List(tag) => format!("<{tag}>"),
    })
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An output as a JSON object.
pub fn json_value(v: &EValue<'_>) -> Result<String, String> {
    Ok(match v {
        EValue::Tensor(t) => {
            let elems: Vec<String> = elements(t)?
                .into_iter()
                .map(|e| match e.as_str() {
                    "nan" | "inf" | "-inf" => json_str(&e),
                    _ => e,
                })
                .collect();
            format!(
                "{{\"dtype\":{},\"sizes\":{:?},\"data\":[{}]}}",
                json_str(t.dtype().name()),
                t.sizes(),
                elems.join(",")
            )
        }
        EValue::Int(i) => format!("{{\"int\":{i}}}"),
        EValue::Double(d) => format!("{{\"double\":{}}}", fmt_float(*d)),
        EValue::Bool(b) => format!("{{\"bool\":{b}}}"),
        EValue::String(s) => format!("{{\"string\":{}}}", json_str(s)),
        EValue::None => "null".into(),
        EValue::List(tag) => format!("{{\"list\":{}}}", json_str(tag.name())),
    })
}
