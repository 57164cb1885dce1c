//! What a value's elements are: float32, or one of XNNPACK's quantized datatypes with
//! the parameters that map its integers to real numbers.
//!
//! Per-channel and per-block scales are copied into method memory as `f32` when the value
//! is read (from the graph's vector or a constant buffer, where ExecuTorch writes block
//! scales as bfloat16), so nodes read them as plain aligned slices.

use core::ptr::NonNull;

use et_runtime::backend::DelegateError;
use et_runtime::{Error, ScalarType};
use et_xnnpack_schema::fields::XNNDatatype as D;
use et_xnnpack_schema::{ConstantRef, Datatype, Graph, QuantParams, ValueView};

pub(crate) use crate::compute::quant::Quant;

/// Scales along one dim of a value, in method memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Scales {
    ptr: NonNull<f32>,
    len: u32,
    /// The dim the scales run along.
    pub(crate) dim: u8,
}

impl Scales {
    /// The scales.
    pub(crate) fn get(&self) -> &[f32] {
        // SAFETY: `len` f32s of method memory written when the value was read, never
        // written again, living as long as the plan that holds this value.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }
}

/// A value's element type and quantization.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Elem {
    /// `fp32`.
    F32,
    /// `qint8`: int8, one scale and zero point.
    Qs8(Quant),
    /// `quint8`: uint8, one scale and zero point.
    Qu8(Quant),
    /// `qcint8`: int8 weights, one scale per channel, zero point 0.
    Qc8(Scales),
    /// `qcint32`: int32 biases, one scale per channel, zero point 0.
    Qc32(Scales),
    /// `qdint8`: int8 quantized at run time, one (scale, zero point) per row of the
    /// trailing `row_dims` dims; the row parameters follow the data (see
    /// [`qd8_params_offset`]).
    Qd8 { row_dims: u8 },
    /// `qbint4`: 4-bit weights of a 2-D `[channels, k]` value (two per byte, even index
    /// in the low nibble, zero point 8), one scale per block of `block` elements of
    /// each channel's row.
    Qb4 { scales: Scales, block: u32 },
}

impl Elem {
    /// The bytes of `numel` elements (with a `Qd8` value's row parameters for `rows`
    /// rows); `None` on overflow.
    pub(crate) fn bytes(&self, numel: usize, rows: usize) -> Option<usize> {
        match self {
            Elem::F32 | Elem::Qc32(_) => numel.checked_mul(4),
            Elem::Qs8(_) | Elem::Qu8(_) | Elem::Qc8(_) => Some(numel),
            Elem::Qd8 { .. } => qd8_params_offset(numel)?.checked_add(rows.checked_mul(8)?),
            Elem::Qb4 { .. } => Some(numel.div_ceil(2)),
        }
    }

    /// The dtype of the tensor a delegate call passes for a value of this type, if it can
    /// be an input or output: ExecuTorch hands quantized values across the delegate
    /// boundary as plain int8/uint8 tensors, their parameters fixed by the graph.
    pub(crate) fn external_dtype(&self) -> Option<ScalarType> {
        match self {
            Elem::F32 => Some(ScalarType::Float),
            Elem::Qs8(_) => Some(ScalarType::Char),
            Elem::Qu8(_) => Some(ScalarType::Byte),
            _ => None,
        }
    }
}

/// Where a `Qd8` value's row parameters start: after its `numel` int8s, 8-aligned.
pub(crate) fn qd8_params_offset(numel: usize) -> Option<usize> {
    numel.checked_next_multiple_of(8)
}

fn refuse(message: &'static str) -> DelegateError {
    DelegateError::new(Error::InvalidProgram, message)
}

fn unsupported(message: &'static str) -> DelegateError {
    DelegateError::new(Error::NotSupported, message)
}

/// Reads `v`'s datatype and quantization; `alloc` gives method memory for scales.
pub(crate) fn read_elem<'n>(
    graph: &Graph<'_>,
    v: &ValueView<'_>,
    named: &dyn Fn(&str) -> Option<&'n [u8]>,
    alloc: &mut dyn FnMut(usize) -> Result<NonNull<f32>, DelegateError>,
) -> Result<Elem, DelegateError> {
    if v.dq_datatype.0 != 0 && v.dq_datatype != Datatype(D::xnn_datatype_invalid.0) {
        return Err(unsupported(
            "a delegate input is marked for run-time quantization (dq_datatype), which this backend does not implement",
        ));
    }
    let rank = v.rank();
    let per_tensor = |v: &ValueView<'_>| match v.quant {
        Some(QuantParams::PerTensor { scale, zero_point }) => {
            if !(scale.is_finite() && scale > 0.0) {
                return Err(refuse("a quantized value's scale is not a positive number"));
            }
            Ok(Quant { scale, zero_point })
        }
        _ => Err(refuse(
            "a per-tensor quantized value lacks per-tensor quantization parameters",
        )),
    };
    let dt = v.datatype.0;
    let elem = if dt == D::xnn_datatype_fp32.0 {
        if v.quant.is_some() {
            return Err(refuse("an fp32 value has quantization parameters"));
        }
        Elem::F32
    } else if dt == D::xnn_datatype_qint8.0 {
        let q = per_tensor(v)?;
        if !(-128..=127).contains(&q.zero_point) {
            return Err(refuse("a qint8 value's zero point is outside int8"));
        }
        Elem::Qs8(q)
    } else if dt == D::xnn_datatype_quint8.0 {
        let q = per_tensor(v)?;
        if !(0..=255).contains(&q.zero_point) {
            return Err(refuse("a quint8 value's zero point is outside uint8"));
        }
        Elem::Qu8(q)
    } else if dt == D::xnn_datatype_qcint8.0 || dt == D::xnn_datatype_qcint32.0 {
        let Some(QuantParams::PerChannel {
            channel_dim,
            scales,
            scale_buffer_idx,
            num_scales,
        }) = v.quant
        else {
            return Err(refuse(
                "a per-channel quantized value lacks per-channel parameters",
            ));
        };
        let dim = usize::try_from(channel_dim)
            .ok()
            .filter(|&d| d < rank)
            .ok_or(refuse("a per-channel value's channel dim is out of range"))?;
        let channels = v.dim(dim) as usize;
        let read = |i: usize| f32::from_bits(scales.uint(i, 4) as u32);
        let s = if scale_buffer_idx == 0 {
            if scales.len() != channels {
                return Err(refuse("a per-channel value has not one scale per channel"));
            }
            copy_scales(alloc, channels, dim, read)?
        } else {
            with_constant(graph, scale_buffer_idx, named, |bytes| {
                if num_scales as usize != channels || bytes.len() / 4 < channels {
                    return Err(refuse("a per-channel value has not one scale per channel"));
                }
                copy_scales(alloc, channels, dim, |i| {
                    let b = &bytes[4 * i..4 * i + 4];
                    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
                })
            })?
        };
        if dt == D::xnn_datatype_qcint8.0 {
            Elem::Qc8(s)
        } else {
            Elem::Qc32(s)
        }
    } else if dt == D::xnn_datatype_qdint8.0 {
        let Some(QuantParams::PerTokenDynamic { num_nonbatch_dims }) = v.quant else {
            return Err(refuse("a qdint8 value lacks per-token dynamic parameters"));
        };
        let row_dims = u8::try_from(num_nonbatch_dims)
            .ok()
            .filter(|&d| d >= 1 && usize::from(d) <= rank)
            .ok_or(refuse("a qdint8 value's row dims are out of range"))?;
        Elem::Qd8 { row_dims }
    } else if dt == D::xnn_datatype_qbint4.0 {
        let Some(QuantParams::PerChannelGroup {
            channel_dim,
            group_size,
            scale_buffer_idx,
            num_scales,
            ..
        }) = v.quant
        else {
            return Err(refuse("a qbint4 value lacks per-block parameters"));
        };
        // A 2-D [output channels, input channels] weight, blocks along each row.
        let dim = usize::try_from(channel_dim)
            .ok()
            .filter(|&d| rank == 2 && d == 0)
            .ok_or(unsupported(
                "a qbint4 value is not a 2-D weight with channels along dim 0",
            ))?;
        if scale_buffer_idx == 0 {
            return Err(unsupported(
                "a qbint4 value's block scales are fp32 in the graph (ExecuTorch 1.x writes them as bfloat16 constant data)",
            ));
        }
        let block = u32::try_from(group_size)
            .ok()
            .filter(|&g| g > 0)
            .ok_or(refuse("a qbint4 value's block size is not positive"))?;
        let (channels, k) = (v.dim(dim) as usize, v.dim(1 - dim) as usize);
        if !k.is_multiple_of(block as usize) {
            return Err(refuse("a qbint4 value's blocks do not divide its rows"));
        }
        let n = channels * (k / block as usize);
        // ExecuTorch stores block scales as bfloat16 in a constant buffer.
        let scales = with_constant(graph, scale_buffer_idx, named, |bytes| {
            if num_scales as usize != n || bytes.len() / 2 < n {
                return Err(refuse("a qbint4 value has not one scale per block"));
            }
            copy_scales(alloc, n, dim, |i| {
                let bf16 = u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]);
                f32::from_bits(u32::from(bf16) << 16)
            })
        })?;
        Elem::Qb4 { scales, block }
    } else {
        return Err(unsupported(
            "a value has a datatype this backend does not implement (fp32, qint8, quint8, qcint8, qcint32, qdint8 and qbint4 run)",
        ));
    };
    Ok(elem)
}

/// Runs `f` on the bytes of constant `idx` (named data or the payload's constant data).
fn with_constant<'n, R>(
    graph: &Graph<'_>,
    idx: u32,
    named: &dyn Fn(&str) -> Option<&'n [u8]>,
    f: impl FnOnce(&[u8]) -> Result<R, DelegateError>,
) -> Result<R, DelegateError> {
    match graph
        .constant(idx)
        .map_err(|e| DelegateError::new(e.error, e.reason()))?
    {
        ConstantRef::Named(key) => f(named(key).ok_or(DelegateError::new(
            Error::NotFound,
            "no named data (in the program or an attached .ptd) has a scale buffer's key",
        ))?),
        ConstantRef::Inline(bytes) => f(bytes),
    }
}

fn copy_scales(
    alloc: &mut dyn FnMut(usize) -> Result<NonNull<f32>, DelegateError>,
    n: usize,
    dim: usize,
    read: impl Fn(usize) -> f32,
) -> Result<Scales, DelegateError> {
    let len = u32::try_from(n).map_err(|_| refuse("a value has too many scales"))?;
    let ptr = alloc(n)?;
    for i in 0..n {
        let s = read(i);
        if !(s.is_finite() && s >= 0.0) {
            return Err(refuse(
                "a quantized value has a negative or non-finite scale",
            ));
        }
        // SAFETY: `alloc` gave `n` f32s of fresh method memory; `i < n`.
        unsafe { ptr.as_ptr().add(i).write(s) };
    }
    Ok(Scales {
        ptr,
        len,
        dim: dim as u8,
    })
}
