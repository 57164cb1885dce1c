//! upsample operators: nearest and bilinear 2-d resizing of `[N, C, H, W]` tensors in any
//! dim order, with PyTorch's source-index arithmetic (done in the compute type, f32 for
//! float32, so indices and weights match PyTorch's bit for bit).

pub mod grid_sampler_2d;
pub mod upsample_bilinear2d;
pub mod upsample_bilinear2d_aa;
pub mod upsample_nearest2d;

use et_runtime::{KernelError, KernelResult, Tensor};

/// The output size and the user scale (if any) of each spatial dim, from exactly one of
/// `output_size` and `scale_factors` (`floor(in * scale)`, as PyTorch's `.vec` overloads).
fn out_sizes(
    input: &Tensor,
    output_size: Option<&[i64]>,
    scale_factors: Option<&[f64]>,
) -> KernelResult<([usize; 2], [Option<f64>; 2])> {
    if input.dim() != 4 {
        return Err(KernelError::invalid("upsample_2d expects a 4-d input"));
    }
    let ins = [input.size(2), input.size(3)];
    if ins.contains(&0) {
        return Err(KernelError::invalid(
            "upsample input height and width must be positive",
        ));
    }
    match (output_size, scale_factors) {
        (Some(o), None) if o.len() == 2 => {
            let mut r = [0usize; 2];
            for (d, &v) in r.iter_mut().zip(o) {
                *d = usize::try_from(v)
                    .ok()
                    .filter(|&x| x > 0)
                    .ok_or(KernelError::invalid(
                        "upsample output size must be positive",
                    ))?;
            }
            Ok((r, [None, None]))
        }
        (None, Some(s)) if s.len() == 2 => {
            let mut r = [0usize; 2];
            for ((d, &sc), &i) in r.iter_mut().zip(s).zip(&ins) {
                let v = libm::floor(i as f64 * sc);
                if !(v >= 1.0 && v < (1u64 << 52) as f64) {
                    return Err(KernelError::invalid(
                        "upsample scale gives an empty or huge output",
                    ));
                }
                *d = v as usize;
            }
            Ok((r, [Some(s[0]), Some(s[1])]))
        }
        _ => Err(KernelError::invalid(
            "upsample needs exactly one of output_size and scale_factors, with two values",
        )),
    }
}

/// PyTorch's `compute_scales_value`: `1 / scale` for a given positive scale, else
/// `in / out`, in the compute type `C`.
fn scale_value(scale: Option<f64>, input: usize, output: usize) -> f64 {
    match scale {
        Some(s) if s > 0.0 => 1.0 / s,
        _ => input as f64 / output as f64,
    }
}

/// A tensor's (n, c, h, w) strides.
fn strides4(t: &Tensor) -> [usize; 4] {
    let s = t.strides();
    [s[0], s[1], s[2], s[3]]
}
