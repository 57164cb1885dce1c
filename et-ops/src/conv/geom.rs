//! Convolution geometry: sizes, hyper-parameters and (n, c, h, w) strides of every
//! operand, with 1-d convolutions expressed as 2-d ones of height 1.

use et_runtime::{KernelError, KernelResult, Tensor};

/// Everything the convolution loops need, validated.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geom {
    pub n: usize,
    pub cin: usize,
    pub cout: usize,
    pub groups: usize,
    /// Input channels per group.
    pub cin_g: usize,
    /// Output channels per group.
    pub cout_g: usize,
    pub ih: usize,
    pub iw: usize,
    pub oh: usize,
    pub ow: usize,
    pub kh: usize,
    pub kw: usize,
    pub sh: usize,
    pub sw: usize,
    pub ph: usize,
    pub pw: usize,
    pub dh: usize,
    pub dw: usize,
    pub transposed: bool,
    /// Input strides in (n, c, h, w) order.
    pub is: [usize; 4],
    /// Weight strides: (cout, cin/g, kh, kw), or (cin, cout/g, kh, kw) when transposed.
    pub ws: [usize; 4],
}

/// A tensor's strides as (n, c, h, w); a 3-d tensor gets a size-1 height of stride 0.
pub(crate) fn strides4(t: &Tensor) -> [usize; 4] {
    let s = t.strides();
    if s.len() == 3 {
        [s[0], s[1], 0, s[2]]
    } else {
        [s[0], s[1], s[2], s[3]]
    }
}

fn err(msg: &'static str) -> KernelError {
    KernelError::invalid(msg)
}

/// Spatial parameter `i` (0 = height, 1 = width) of a list given per spatial dim, or one
/// value for all; 1-d convolutions use `default` for the height.
fn spatial(list: &[i64], i: usize, spatial_dims: usize, default: i64) -> KernelResult<i64> {
    if spatial_dims == 1 {
        if i == 0 {
            return Ok(default);
        }
        return list
            .first()
            .copied()
            .ok_or(err("convolution parameter list is empty"));
    }
    match list.len() {
        1 => Ok(list[0]),
        2 => Ok(list[i]),
        _ => Err(err("convolution parameter list has the wrong length")),
    }
}

fn to_usize(v: i64) -> KernelResult<usize> {
    usize::try_from(v).map_err(|_| err("convolution size is negative"))
}

impl Geom {
    /// Validates the arguments of `aten::convolution` and computes the output shape.
    #[allow(
        clippy::too_many_arguments,
        reason = "the operator's own argument list"
    )]
    pub(crate) fn new(
        input: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[i64],
        padding: &[i64],
        dilation: &[i64],
        transposed: bool,
        output_padding: &[i64],
        groups: i64,
    ) -> KernelResult<Geom> {
        let nd = input.dim();
        if nd != 3 && nd != 4 {
            return Err(err(
                "convolution supports 3-d (1-d conv) and 4-d (2-d conv) inputs",
            ));
        }
        if weight.dim() != nd {
            return Err(err("convolution weight rank differs from the input's"));
        }
        let sp = nd - 2;
        let dt = input.dtype();
        if weight.dtype() != dt || bias.is_some_and(|b| b.dtype() != dt) {
            return Err(err("convolution tensors must share one dtype"));
        }
        let groups = usize::try_from(groups)
            .ok()
            .filter(|&g| g > 0)
            .ok_or(err("convolution groups must be positive"))?;
        let sizes = input.sizes();
        let ws = weight.sizes();
        let (n, cin) = (sizes[0], sizes[1]);
        let (ih, iw) = if sp == 1 {
            (1, sizes[2])
        } else {
            (sizes[2], sizes[3])
        };
        let (kh, kw) = if sp == 1 { (1, ws[2]) } else { (ws[2], ws[3]) };
        if !cin.is_multiple_of(groups) {
            return Err(err(
                "convolution input channels are not divisible by groups",
            ));
        }
        let cin_g = cin / groups;
        let (cout, cout_g) = if transposed {
            if ws[0] != cin {
                return Err(err(
                    "transposed convolution weight does not match input channels",
                ));
            }
            let cout = ws[1]
                .checked_mul(groups)
                .ok_or(err("convolution size overflows"))?;
            (cout, ws[1])
        } else {
            if ws[1] != cin_g {
                return Err(err(
                    "convolution weight does not match input channels per group",
                ));
            }
            if !ws[0].is_multiple_of(groups) {
                return Err(err(
                    "convolution output channels are not divisible by groups",
                ));
            }
            (ws[0], ws[0] / groups)
        };
        if let Some(b) = bias {
            if b.dim() != 1 || b.size(0) != cout {
                return Err(err(
                    "convolution bias must be 1-d with one value per output channel",
                ));
            }
        }
        let p = |list: &[i64], i: usize, d: i64| spatial(list, i, sp, d);
        let (sh, sw) = (p(stride, 0, 1)?, p(stride, 1, 1)?);
        let (ph, pw) = (p(padding, 0, 0)?, p(padding, 1, 0)?);
        let (dh, dw) = (p(dilation, 0, 1)?, p(dilation, 1, 1)?);
        if sh < 1 || sw < 1 || dh < 1 || dw < 1 {
            return Err(err("convolution stride and dilation must be positive"));
        }
        if ph < 0 || pw < 0 {
            return Err(err("convolution padding must be non-negative"));
        }
        // Output sizes in i128 so no parameter combination can overflow.
        let out_size =
            |i: usize, k: usize, s: i64, pd: i64, d: i64, op: i64| -> KernelResult<usize> {
                let (i, k) = (i as i128, k as i128);
                let (s, pd, d, op) = (s as i128, pd as i128, d as i128, op as i128);
                let o = if transposed {
                    (i - 1) * s - 2 * pd + d * (k - 1) + op + 1
                } else {
                    let span = i + 2 * pd - d * (k - 1) - 1;
                    if span < 0 {
                        return Err(err("convolution kernel is larger than the padded input"));
                    }
                    span / s + 1
                };
                if o < 0 || (o == 0 && i > 0) {
                    return Err(err("convolution output size is not positive"));
                }
                usize::try_from(o).map_err(|_| err("convolution output size overflows"))
            };
        let (oph, opw) = if transposed {
            let (a, b) = (p(output_padding, 0, 0)?, p(output_padding, 1, 0)?);
            if a < 0 || b < 0 || (a >= sh && a >= dh) || (b >= sw && b >= dw) {
                return Err(err("transposed convolution output padding is out of range"));
            }
            (a, b)
        } else {
            (0, 0)
        };
        let oh = out_size(ih, kh, sh, ph, dh, oph)?;
        let ow = out_size(iw, kw, sw, pw, dw, opw)?;
        Ok(Geom {
            n,
            cin,
            cout,
            groups,
            cin_g,
            cout_g,
            ih,
            iw,
            oh,
            ow,
            kh,
            kw,
            sh: to_usize(sh)?,
            sw: to_usize(sw)?,
            ph: to_usize(ph)?,
            pw: to_usize(pw)?,
            dh: to_usize(dh)?,
            dw: to_usize(dw)?,
            transposed,
            is: strides4(input),
            ws: strides4(weight),
        })
    }

    /// The output range `lo..hi` of positions `o` whose input index `o * s + k * d - p`
    /// lies in `0..len` (non-transposed).
    #[inline]
    pub(crate) fn valid_range(
        out_len: usize,
        len: usize,
        s: usize,
        k_off: usize,
        p: usize,
    ) -> (usize, usize) {
        // i = o*s + k_off - p >= 0  <=>  o >= ceil((p - k_off) / s)
        let lo = if p > k_off {
            (p - k_off).div_ceil(s)
        } else {
            0
        };
        // i <= len - 1  <=>  o <= (len - 1 + p - k_off) / s
        let hi = if len + p > k_off {
            ((len - 1 + p - k_off) / s + 1).min(out_len)
        } else {
            0
        };
        (lo.min(hi), hi)
    }
}
