//! Reading inputs: raw `.bin` files (shape from the method), `FILE:SHAPE`, and `.npy`.

use std::path::Path;

use et_runtime::{ScalarType, TensorInfo};

/// One input tensor's dtype, sizes and little-endian bytes.
#[derive(Debug)]
pub struct InputData {
    pub dtype: ScalarType,
    pub sizes: Vec<usize>,
    pub bytes: Vec<u8>,
}

/// Parses `3x8` (or `3,8`; an empty string is a 0-dim shape).
pub fn parse_shape(s: &str) -> Result<Vec<usize>, String> {
    if s.is_empty() || s == "scalar" {
        return Ok(Vec::new());
    }
    s.split(['x', ','])
        .map(|p| {
            p.trim()
                .parse::<usize>()
                .map_err(|_| format!("bad shape `{s}`: `{p}` is not a size"))
        })
        .collect()
}

/// Reads the input argument `spec` for a method input described by `info`.
pub fn read_input(spec: &str, info: &TensorInfo) -> Result<InputData, String> {
    // `FILE:SHAPE`, unless the colon belongs to a path (Windows drive letters are not a
    // concern here; a shape never contains a path separator).
    let (path, shape) = match spec.rsplit_once(':') {
        Some((p, s)) if !s.contains('/') && !p.is_empty() => (p, Some(parse_shape(s)?)),
        _ => (spec, None),
    };
    let data = std::fs::read(path).map_err(|e| format!("cannot read input {path}: {e}"))?;
    if Path::new(path).extension().is_some_and(|e| e == "npy") {
        let npy = parse_npy(&data).map_err(|e| format!("{path}: {e}"))?;
        if npy.dtype != info.dtype {
            return Err(format!(
                "{path}: dtype {} but the method expects {}",
                npy.dtype, info.dtype
            ));
        }
        return Ok(npy);
    }
    let sizes = shape.unwrap_or_else(|| info.sizes().to_vec());
    // Checked: the shape is the user's, and a product past `usize::MAX` is an error.
    let expected = et_runtime::checked_numel(&sizes)
        .and_then(|n| n.checked_mul(info.dtype.element_size()))
        .ok_or_else(|| format!("{path}: the shape {sizes:?} is too large"))?;
    if data.len() != expected {
        return Err(format!(
            "{path}: {} bytes, but {} {:?} needs {expected} bytes (give the shape as FILE:SHAPE for dynamic inputs)",
            data.len(),
            info.dtype,
            sizes
        ));
    }
    Ok(InputData {
        dtype: info.dtype,
        sizes,
        bytes: data,
    })
}

/// Ones of the exported shape, as ExecuTorch's executor_runner does with no inputs.
pub fn ones(info: &TensorInfo) -> InputData {
    let n = info.numel();
    let one: Vec<u8> = match info.dtype {
        ScalarType::Float => 1f32.to_le_bytes().to_vec(),
        ScalarType::Double => 1f64.to_le_bytes().to_vec(),
        ScalarType::Half => et_runtime::f16::ONE.to_le_bytes().to_vec(),
        ScalarType::BFloat16 => et_runtime::bf16::ONE.to_le_bytes().to_vec(),
        t => {
            let mut v = vec![0u8; t.element_size()];
            v[0] = 1;
            v
        }
    };
    InputData {
        dtype: info.dtype,
        sizes: info.sizes().to_vec(),
        bytes: one.repeat(n),
    }
}

/// Parses a NumPy `.npy` file (version 1-3, little-endian, C order).
pub fn parse_npy(data: &[u8]) -> Result<InputData, String> {
    if data.len() < 10 || &data[..6] != b"\x93NUMPY" {
        return Err("not a .npy file".into());
    }
    let (header_len, start) = match data[6] {
        1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10),
        2 | 3 if data.len() >= 12 => (
            u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = data
        .get(start..start + header_len)
        .and_then(|h| std::str::from_utf8(h).ok())
        .ok_or("truncated .npy header")?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}'"))? + key.len() + 2;
        let rest = header[at..].trim_start().strip_prefix(':')?.trim_start();
        Some(rest)
    };
    let descr = field("descr").ok_or("no descr in .npy header")?;
    let descr = descr.trim_start_matches(['\'', '"']);
    let descr = &descr[..descr.find(['\'', '"']).ok_or("bad descr")?];
    let dtype = match descr {
        "<f4" => ScalarType::Float,
        "<f8" => ScalarType::Double,
        "<f2" => ScalarType::Half,
        "|u1" | "<u1" => ScalarType::Byte,
        "|i1" | "<i1" => ScalarType::Char,
        "<i2" => ScalarType::Short,
        "<i4" => ScalarType::Int,
        "<i8" => ScalarType::Long,
        "|b1" => ScalarType::Bool,
        d => return Err(format!("unsupported .npy dtype {d}")),
    };
    if field("fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err("Fortran-order .npy files are not supported".into());
    }
    let shape = field("shape").ok_or("no shape in .npy header")?;
    let shape = &shape[1..shape.find(')').ok_or("bad shape")?];
    let sizes = shape
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<usize>()
                .map_err(|_| format!("bad .npy shape entry {s}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let body = &data[start + header_len..];
    let expected = sizes.iter().product::<usize>() * dtype.element_size();
    if body.len() != expected {
        return Err(format!(
            ".npy body has {} bytes, expected {expected}",
            body.len()
        ));
    }
    Ok(InputData {
        dtype,
        sizes,
        bytes: body.to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_parse() {
        assert_eq!(parse_shape("3x8").unwrap(), vec![3, 8]);
        assert_eq!(parse_shape("2,3,4").unwrap(), vec![2, 3, 4]);
        assert_eq!(parse_shape("").unwrap(), Vec::<usize>::new());
        assert!(parse_shape("3xa").is_err());
    }

    #[test]
    fn npy_parses() {
        let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut file = b"\x93NUMPY\x01\x00".to_vec();
        file.extend_from_slice(&(h.len() as u16).to_le_bytes());
        file.extend_from_slice(h.as_bytes());
        file.extend(std::iter::repeat_n(0u8, 24));
        let d = parse_npy(&file).unwrap();
        assert_eq!(d.dtype, ScalarType::Float);
        assert_eq!(d.sizes, vec![2, 3]);
        assert!(parse_npy(b"garbage").is_err());
    }
}
