//! The quantized embedding lookup the `embedding_byte`, `embedding_4bit` and
//! `embedding_2bit` kernels share: rows of a quantized table gathered by index and
//! dequantized with per-row or per-group scales and optional zero points.

use et_runtime::{
    bf16, et_switch, f16, DtypeSelection, KernelError, KernelResult, ScalarType, Tensor, MAX_DIM,
};

use super::chunk::{store_f, StoreF, CHUNK};
use crate::util::layout::IndexData;

/// Bits per weight value: 8 (a uint8 or int8 table), 4 or 2 (uint8 bytes packing two or
/// four values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bits {
    /// One value per byte.
    Eight,
    /// Two values per byte: the even position in the high nibble, offset by -8.
    Four,
    /// Four values per byte: position `j % 4` in bits `2 * (j % 4)..`, offset by -2.
    Two,
}

impl Bits {
    fn per_byte(self) -> usize {
        match self {
            Bits::Eight => 1,
            Bits::Four => 2,
            Bits::Two => 4,
        }
    }
}

/// How the kernel reads its arguments: the `.out` variants read scales (and zero points)
/// as the out's dtype, so they must have it; `.dtype_out` reads them as their own float
/// dtype and checks the out against its `dtype` argument.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Variant {
    pub bits: Bits,
    /// Scales must have the out's dtype (`.out`).
    pub params_match_out: bool,
    /// The `dtype` argument of `.dtype_out`.
    pub dtype: Option<ScalarType>,
}

/// float32, float16 or bfloat16 parameter values, read as float32.
#[derive(Clone, Copy, Debug)]
enum Params<'a> {
    F32(&'a [f32]),
    F16(&'a [f16]),
    Bf16(&'a [bf16]),
}

impl<'a> Params<'a> {
    fn of(t: &'a Tensor) -> KernelResult<Self> {
        match t.dtype() {
            ScalarType::Float => Ok(Params::F32(t.data::<f32>()?)),
            ScalarType::Half => Ok(Params::F16(t.data::<f16>()?)),
            ScalarType::BFloat16 => Ok(Params::Bf16(t.data::<bf16>()?)),
            _ => Err(KernelError::invalid(
                "embedding scales and zero points must be float32, float16 or bfloat16",
            )),
        }
    }

    #[inline(always)]
    fn get(&self, i: usize) -> f32 {
        match self {
            Params::F32(d) => d.get(i).copied().unwrap_or(0.0),
            Params::F16(d) => d.get(i).map_or(0.0, |v| v.to_f32()),
            Params::Bf16(d) => d.get(i).map_or(0.0, |v| v.to_f32()),
        }
    }
}

fn is_float_param(d: ScalarType) -> bool {
    matches!(
        d,
        ScalarType::Float | ScalarType::Half | ScalarType::BFloat16
    )
}

/// Looks up `indices` in the quantized `weight` table: `out[i.., j] = (w[idx, j] -
/// zp[idx, g]) * scale[idx, g]` in float32, with group `g = j / (row length / groups)`
/// (`groups` is `weight_scales.size(1)` for 2-d scales, else 1). `out` gets `indices`'
/// sizes plus the row length. Tensors must be contiguous; indices out of range are an
/// error (ExecuTorch aborts for the byte table and does not check the packed ones).
#[allow(
    clippy::too_many_arguments,
    reason = "the operators' own argument list"
)]
pub(crate) fn quantized_embedding<Sel: DtypeSelection>(
    weight: &Tensor,
    scales: &Tensor,
    zero_points: Option<&Tensor>,
    quant_min: i64,
    quant_max: i64,
    indices: &Tensor,
    variant: Variant,
    out: &mut Tensor,
) -> KernelResult {
    let bits = variant.bits;
    if weight.dim() != 2 {
        return Err(KernelError::invalid("embedding weight must be 2-D"));
    }
    let weight_ok = match bits {
        Bits::Eight => matches!(weight.dtype(), ScalarType::Byte | ScalarType::Char),
        _ => weight.dtype() == ScalarType::Byte,
    };
    if !weight_ok {
        return Err(KernelError::invalid(if bits == Bits::Eight {
            "embedding_byte weight must be uint8 or int8"
        } else {
            "packed embedding weight must be uint8"
        }));
    }
    let (rows, packed) = (weight.size(0), weight.size(1));
    let width = packed
        .checked_mul(bits.per_byte())
        .ok_or(KernelError::invalid("embedding row too long"))?;
    if !(1..=2).contains(&scales.dim()) || scales.size(0) != rows {
        return Err(KernelError::invalid(
            "embedding scales must be 1-D or 2-D with one row per weight row",
        ));
    }
    let groups = if scales.dim() == 2 { scales.size(1) } else { 1 };
    if groups == 0 || width % groups != 0 {
        return Err(KernelError::invalid(
            "embedding scale groups must divide the row length",
        ));
    }
    let out_dtype = out.dtype();
    if !is_float_param(out_dtype) {
        return Err(KernelError::invalid(
            "embedding out must be float32, float16 or bfloat16",
        ));
    }
    if !is_float_param(scales.dtype()) {
        return Err(KernelError::invalid(
            "embedding scales must be float32, float16 or bfloat16",
        ));
    }
    if variant.params_match_out && scales.dtype() != out_dtype {
        return Err(KernelError::invalid(
            "embedding scales must have the out's dtype (use .dtype_out to mix)",
        ));
    }
    if let Some(z) = zero_points {
        if z.sizes() != scales.sizes() || z.dtype() != out_dtype {
            return Err(KernelError::invalid(
                "embedding zero points must have the scales' shape and the out's dtype",
            ));
        }
    }
    let index_ok = match (bits, indices.dtype()) {
        (_, ScalarType::Long) => true,
        (Bits::Eight, _) => false,
        (_, ScalarType::Int) => true,
        _ => false,
    };
    if !index_ok {
        return Err(KernelError::invalid(if bits == Bits::Eight {
            "embedding_byte indices must be int64"
        } else {
            "embedding indices must be int64 or int32"
        }));
    }
    if quant_min > quant_max {
        return Err(KernelError::invalid(
            "weight_quant_min is greater than weight_quant_max",
        ));
    }
    if variant.dtype.is_some_and(|d| d != out_dtype) {
        return Err(KernelError::invalid(
            "embedding out dtype must equal the dtype argument",
        ));
    }
    let k = indices.dim();
    if k + 1 > MAX_DIM {
        return Err(KernelError::invalid("too many dims"));
    }
    let mut sizes = [0usize; MAX_DIM];
    sizes[..k].copy_from_slice(indices.sizes());
    sizes[k] = width;
    out.resize(&sizes[..k + 1])?;
    let contiguous = [weight, scales, indices, &*out]
        .iter()
        .chain(zero_points.as_ref())
        .all(|t| t.is_contiguous());
    if !contiguous {
        return Err(KernelError::invalid("embedding tensors must be contiguous"));
    }

    let table = Table {
        weight: weight.bytes()?,
        signed: weight.dtype() == ScalarType::Char,
        bits,
        rows,
        packed,
        width,
        groups,
        scales: Params::of(scales)?,
        zeros: zero_points.map(Params::of).transpose()?,
    };
    let idx = IndexData::of(indices)?;
    let n = indices.numel();
    let store: StoreF =
        et_switch!(Sel, out_dtype, [f32, f16, bf16], O => Ok(store_f::<O> as StoreF))?;
    table.gather(&idx, n, out, store)
}

/// A validated quantized table.
struct Table<'a> {
    weight: &'a [u8],
    signed: bool,
    bits: Bits,
    rows: usize,
    /// Bytes per row.
    packed: usize,
    /// Values per row.
    width: usize,
    groups: usize,
    scales: Params<'a>,
    zeros: Option<Params<'a>>,
}

impl Table<'_> {
    /// Value `j` of a row's bytes, with the packed formats' offsets applied.
    #[inline(always)]
    fn value(&self, row: &[u8], j: usize) -> f32 {
        match self.bits {
            Bits::Eight => {
                let b = row.get(j).copied().unwrap_or(0);
                if self.signed {
                    b as i8 as f32
                } else {
                    b as f32
                }
            }
            Bits::Four => {
                let b = row.get(j / 2).copied().unwrap_or(0);
                let nibble = if j.is_multiple_of(2) {
                    b >> 4
                } else {
                    b & 0x0f
                };
                (nibble as i32 - 8) as f32
            }
            Bits::Two => {
                let b = row.get(j / 4).copied().unwrap_or(0);
                (((b >> (2 * (j % 4))) & 3) as i32 - 2) as f32
            }
        }
    }

    /// Dequantizes the rows `idx` names into `out`, a chunk of values at a time.
    fn gather(
        &self,
        idx: &IndexData<'_>,
        n: usize,
        out: &mut Tensor,
        store: StoreF,
    ) -> KernelResult {
        let group_size = self.width / self.groups;
        let mut buf = [0.0f64; CHUNK];
        for i in 0..n {
            let r = usize::try_from(idx.get(i))
                .ok()
                .filter(|&r| r < self.rows)
                .ok_or(KernelError::invalid("embedding index out of range"))?;
            let row = self
                .weight
                .get(r * self.packed..(r + 1) * self.packed)
                .ok_or(KernelError::invalid("embedding weight too short"))?;
            let base = r * self.groups;
            for j0 in (0..self.width).step_by(CHUNK) {
                let len = CHUNK.min(self.width - j0);
                for (dj, o) in buf[..len].iter_mut().enumerate() {
                    let j = j0 + dj;
                    let g = base + j / group_size;
                    let zp = self.zeros.as_ref().map_or(0.0, |z| z.get(g));
                    // float32 arithmetic, as ExecuTorch's.
                    *o = ((self.value(row, j) - zp) * self.scales.get(g)) as f64;
                }
                store(out, i * self.width + j0, &buf[..len])?;
            }
        }
        Ok(())
    }
}
