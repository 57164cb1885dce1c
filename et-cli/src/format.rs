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

/// How one element of `dtype`, given as its little-endian bytes, is printed: the
/// shortest decimal that reads back to the same value in that dtype.
pub fn element_formatter(dtype: ScalarType) -> Result<fn(&[u8]) -> String, String> {
    Ok(match dtype {
        ScalarType::Float => |b| fmt_float(f32::from_le_bytes(array(b))),
        ScalarType::Double => |b| fmt_float(f64::from_le_bytes(array(b))),
        ScalarType::Half => |b| {
            let v = et_runtime::f16::from_le_bytes(array(b));
            shortest_narrow(v.to_f32(), |x| et_runtime::f16::from_f32(x) == v)
        },
        ScalarType::BFloat16 => |b| {
            let v = et_runtime::bf16::from_le_bytes(array(b));
            shortest_narrow(v.to_f32(), |x| et_runtime::bf16::from_f32(x) == v)
        },
        ScalarType::Byte => |b| b[0].to_string(),
        ScalarType::Char => |b| (b[0] as i8).to_string(),
        ScalarType::Short => |b| i16::from_le_bytes(array(b)).to_string(),
        ScalarType::Int => |b| i32::from_le_bytes(array(b)).to_string(),
        ScalarType::Long => |b| i64::from_le_bytes(array(b)).to_string(),
        ScalarType::Bool => |b| (b[0] != 0).to_string(),
        ScalarType::ComplexFloat => |b| {
            let part = |i: usize| f32::from_le_bytes(array(&b[4 * i..]));
            fmt_complex(part(0), part(1))
        },
        ScalarType::ComplexDouble => |b| {
            let part = |i: usize| f64::from_le_bytes(array(&b[8 * i..]));
            fmt_complex(part(0), part(1))
        },
        ScalarType::ComplexHalf => |b| {
            let part = |i: usize| et_runtime::f16::from_le_bytes(array(&b[2 * i..]));
            let text = |v: et_runtime::f16| {
                shortest_narrow(v.to_f32(), |x| et_runtime::f16::from_f32(x) == v)
            };
            let im = part(1);
            let sign = if im.is_sign_negative() && !im.is_nan() {
                '-'
            } else {
                '+'
            };
            format!(
                "{}{sign}{}j",
                text(part(0)),
                text(if sign == '-' { -im } else { im })
            )
        },
        other => return Err(format!("cannot print {other} tensors")),
    })
}

/// A complex number as PyTorch prints one: `1.5+2j`, `-0.5-1j` (the imaginary part with
/// its sign, then `j`).
fn fmt_complex<F>(re: F, im: F) -> String
where
    F: Into<f64> + std::fmt::Display + Copy + std::ops::Neg<Output = F>,
{
    let negative = im.into() < 0.0 || (im.into() == 0.0 && im.into().is_sign_negative());
    let (sign, abs) = if negative { ('-', -im) } else { ('+', im) };
    format!("{}{sign}{}j", fmt_float(re), fmt_float(abs))
}

/// Whether elements of `dtype` print as text that JSON must quote.
fn quoted_in_json(dtype: ScalarType) -> bool {
    matches!(
        dtype,
        ScalarType::ComplexHalf | ScalarType::ComplexFloat | ScalarType::ComplexDouble
    )
}

/// One element's bytes as an array (chunks are exactly the element size).
fn array<const N: usize>(b: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(&b[..N]);
    a
}

/// A float in the shortest form that round-trips in its own type (Rust's `Display` for
/// `f32` and `f64`), with `nan`, `inf` and `-inf` spelled as PyTorch prints them.
fn fmt_float<F: Into<f64> + std::fmt::Display + Copy>(v: F) -> String {
    let wide: f64 = v.into();
    if wide.is_nan() {
        "nan".into()
    } else if wide.is_infinite() {
        if wide > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v}")
    }
}

/// The shortest decimal that converts back to the same 16-bit float (`same` checks a
/// candidate), found by trying more significant digits until one does.
fn shortest_narrow(v: f32, same: impl Fn(f32) -> bool) -> String {
    if !v.is_finite() {
        return fmt_float(v);
    }
    for digits in 1..=9 {
        let text = format!("{v:.digits$e}");
        if let Ok(x) = text.parse::<f64>() {
            if same(x as f32) {
                return format!("{x}");
            }
        }
    }
    fmt_float(v)
}

/// How `etch run` prints tensors.
#[derive(Clone, Copy, Debug)]
pub enum Printing {
    /// Tensors over [`SUMMARY_THRESHOLD`] elements as PyTorch prints them: the first and
    /// last [`EDGE_ITEMS`] of each dim around `...`.
    Summary,
    /// Every element.
    Full,
}

/// PyTorch's `threshold`: tensors with more elements are summarized.
pub const SUMMARY_THRESHOLD: usize = 1000;
/// PyTorch's `edgeitems`.
pub const EDGE_ITEMS: usize = 3;

/// `tensor(sizes=[1, 1000], dtype=float32, [[0.16495627, ..., -0.009287141]])`: nested by
/// dim like PyTorch, summarized unless `printing` is [`Printing::Full`].
pub fn describe(v: &EValue<'_>, printing: Printing) -> Result<String, String> {
    Ok(match v {
        EValue::Tensor(t) => {
            // Only the elements shown are formatted: a summary of a large tensor costs
            // its few edge items, not one string per element.
            let bytes = t.to_row_major_bytes().map_err(|e| e.to_string())?;
            let element = Element {
                bytes: &bytes,
                size: t.dtype().element_size(),
                show: element_formatter(t.dtype())?,
            };
            let summarize = matches!(printing, Printing::Summary) && t.numel() > SUMMARY_THRESHOLD;
            let mut body = String::new();
            nest(&mut body, &element, 0, t.sizes(), summarize);
            format!("tensor(sizes={:?}, dtype={}, {body})", t.sizes(), t.dtype())
        }
        EValue::None => "None".into(),
        EValue::Int(i) => i.to_string(),
        EValue::Double(d) => fmt_float(*d),
        EValue::Bool(b) => b.to_string(),
        EValue::String(s) => format!("{s:?}"),
        EValue::List(tag) => format!("<{tag}>"),
    })
}

/// A tensor's row-major bytes and how to print one element.
struct Element<'a> {
    bytes: &'a [u8],
    size: usize,
    show: fn(&[u8]) -> String,
}

impl Element<'_> {
    fn at(&self, i: usize) -> String {
        self.bytes
            .get(i * self.size..(i + 1) * self.size)
            .map_or_else(String::new, self.show)
    }
}

/// Writes the elements from flat index `first` on, of `sizes`, as nested lists; with
/// `summarize`, a dim longer than twice [`EDGE_ITEMS`] shows its first and last items
/// around `...`.
fn nest(out: &mut String, elems: &Element<'_>, first: usize, sizes: &[usize], summarize: bool) {
    let Some((&n, inner)) = sizes.split_first() else {
        out.push_str(&elems.at(first));
        return;
    };
    let stride: usize = inner.iter().product();
    out.push('[');
    let shown: Vec<Option<usize>> = if summarize && n > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS)
            .map(Some)
            .chain([None])
            .chain((n - EDGE_ITEMS..n).map(Some))
            .collect()
    } else {
        (0..n).map(Some).collect()
    };
    for (k, item) in shown.into_iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        match item {
            Some(i) => nest(out, elems, first + i * stride, inner, summarize),
            None => out.push_str("..."),
        }
    }
    out.push(']');
}

/// The `k` largest elements of a float or integer tensor with their flat indices,
/// largest first (ties: lower index first; NaN is not ranked).
pub fn top_k(t: &Tensor, k: usize) -> Result<Vec<(usize, String)>, String> {
    let bytes = t.to_row_major_bytes().map_err(|e| e.to_string())?;
    let (dtype, es) = (t.dtype(), t.dtype().element_size());
    let show = element_formatter(dtype)?;
    let mut ranked: Vec<(usize, f64)> = bytes
        .chunks_exact(es)
        .enumerate()
        .filter_map(|(i, e)| dtype.read_f64(e).filter(|v| !v.is_nan()).map(|v| (i, v)))
        .collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(ranked
        .into_iter()
        .take(k)
        .map(|(i, _)| (i, show(&bytes[i * es..(i + 1) * es])))
        .collect())
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
                    _ if quoted_in_json(t.dtype()) => json_str(&e),
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

#[cfg(test)]
mod tests {
    use super::*;
    use et_runtime::TensorBuf;

    fn tensor(sizes: &[usize], values: impl Iterator<Item = f32>) -> TensorBuf {
        let mut t = TensorBuf::zeros(ScalarType::Float, sizes).unwrap();
        for (d, v) in t.data_mut::<f32>().unwrap().iter_mut().zip(values) {
            *d = v;
        }
        t
    }

    #[test]
    fn complex_numbers_print_as_pytorch_prints_them() {
        let mut t = TensorBuf::zeros(ScalarType::ComplexFloat, &[3]).unwrap();
        let parts = [1.5f32, 2.0, -0.5, -1.0, 0.1, -0.0];
        let bytes: Vec<u8> = parts.iter().flat_map(|v| v.to_le_bytes()).collect();
        t.bytes_mut().unwrap().copy_from_slice(&bytes);
        let shown = describe(&EValue::Tensor(&t), Printing::Summary).unwrap();
        assert_eq!(
            shown,
            "tensor(sizes=[3], dtype=complex64, [1.5+2j, -0.5-1j, 0.1-0j])"
        );
        let json = json_value(&EValue::Tensor(&t)).unwrap();
        assert!(
            json.contains("\"data\":[\"1.5+2j\",\"-0.5-1j\",\"0.1-0j\"]"),
            "{json}"
        );
    }

    #[test]
    fn large_tensors_are_summarized_per_dim_like_pytorch() {
        let t = tensor(&[2, 1001], (0..2002).map(|i| i as f32));
        let shown = describe(&EValue::Tensor(&t), Printing::Summary).unwrap();
        assert_eq!(
            shown,
            "tensor(sizes=[2, 1001], dtype=float32, [[0, 1, 2, ..., 998, 999, 1000], [1001, 1002, 1003, ..., 1999, 2000, 2001]])"
        );
        let full = describe(&EValue::Tensor(&t), Printing::Full).unwrap();
        assert!(!full.contains("...") && full.contains(", 1500, "), "{full}");
        // 1000 elements or fewer print in full, as in PyTorch.
        let t = tensor(&[1000], (0..1000).map(|i| i as f32));
        let shown = describe(&EValue::Tensor(&t), Printing::Summary).unwrap();
        assert!(
            !shown.contains("...") && shown.contains(", 999]"),
            "{shown}"
        );
    }

    #[test]
    fn floats_print_in_the_shortest_form_of_their_own_dtype() {
        let f32_fmt = element_formatter(ScalarType::Float).unwrap();
        assert_eq!(f32_fmt(&0.1f32.to_le_bytes()), "0.1");
        assert_eq!(f32_fmt(&0.09567327f32.to_le_bytes()), "0.09567327");
        assert_eq!(f32_fmt(&f32::NEG_INFINITY.to_le_bytes()), "-inf");
        let half = element_formatter(ScalarType::Half).unwrap();
        assert_eq!(half(&et_runtime::f16::from_f32(0.1).to_le_bytes()), "0.1");
        assert_eq!(
            half(&et_runtime::f16::from_f32(65504.0).to_le_bytes()),
            "65500"
        );
        let bf16 = element_formatter(ScalarType::BFloat16).unwrap();
        assert_eq!(
            bf16(&et_runtime::bf16::from_f32(1.2345).to_le_bytes()),
            "1.234"
        );
    }

    #[test]
    fn top_k_ranks_by_value_then_index() {
        let t = tensor(&[1, 6], [0.5, -1.0, 2.0, 0.5, f32::NAN, 1.5].into_iter());
        let top = top_k(&t, 4).unwrap();
        assert_eq!(
            top,
            [
                (2, "2".into()),
                (5, "1.5".into()),
                (0, "0.5".into()),
                (3, "0.5".into())
            ]
        );
    }
}
