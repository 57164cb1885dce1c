//! Printing tensors and JSON.

use std::fmt::Write;

use et_runtime::{Bool, EValue, ScalarType, Tensor};

/// The tensor's elements in logical (row-major) order as display strings.
pub fn elements(t: &Tensor) -> Result<Vec<String>, String> {
    let n = t.numel();
    let strides = t.strides().to_vec();
    let sizes = t.sizes().to_vec();
    // Memory offset of logical element `i`, honouring the dim order.
    let offset = |mut i: usize| {
        let mut off = 0;
        for d in (0..sizes.len()).rev() {
            off += (i % sizes[d].max(1)) * strides[d];
            i /= sizes[d].max(1);
        }
        off
    };
    macro_rules! collect {
        ($ty:ty, $fmt:expr) => {{
            let data = t.data::<$ty>().map_err(|e| e.to_string())?;
            (0..n).map(|i| $fmt(data[offset(i)])).collect()
        }};
    }
    Ok(match t.dtype() {
        ScalarType::Float => collect!(f32, |v: f32| fmt_float(v as f64)),
        ScalarType::Double => collect!(f64, fmt_float),
        ScalarType::Half => collect!(et_runtime::f16, |v: et_runtime::f16| fmt_float(v.to_f64())),
        ScalarType::BFloat16 => collect!(et_runtime::bf16, |v: et_runtime::bf16| fmt_float(
            v.to_f64()
        )),
        ScalarType::Byte => collect!(u8, |v: u8| v.to_string()),
        ScalarType::Char => collect!(i8, |v: i8| v.to_string()),
        ScalarType::Short => collect!(i16, |v: i16| v.to_string()),
        ScalarType::Int => collect!(i32, |v: i32| v.to_string()),
        ScalarType::Long => collect!(i64, |v: i64| v.to_string()),
        ScalarType::Bool => collect!(Bool, |v: Bool| if v.get() {
            "true".to_string()
        } else {
            "false".to_string()
        }),
        other => return Err(format!("cannot print {other} tensors")),
    })
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
