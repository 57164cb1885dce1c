//! `aten::grid_sampler_2d.out`: sample an image at normalized grid coordinates.

use et_runtime::kernel;
use et_runtime::{et_switch, DtypeSelection, KernelContext, KernelError, KernelResult, Tensor};

use super::strides4;
use crate::util::element::Num;

/// How coordinates outside the image read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Padding {
    /// Zero outside.
    Zeros,
    /// The nearest edge pixel.
    Border,
    /// Mirrored at the edges.
    Reflection,
}

/// How the value at a coordinate is interpolated.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Interpolation {
    Bilinear,
    Nearest,
    Bicubic,
}

/// `out = F.grid_sample(input, grid, mode, padding_mode, align_corners)` for `input`
/// `[N, C, H, W]` and `grid` `[N, OH, OW, 2]` holding `(x, y)` in `[-1, 1]` (-1 the left /
/// top edge: the first pixel's centre with `align_corners`, its outer edge without).
/// `interpolation_mode` 0/1/2 is bilinear/nearest (ties to even)/bicubic (A = -0.75);
/// `padding_mode` 0/1/2 is zeros/border/reflection. Computed in f64, rounded once.
#[kernel("aten::grid_sampler_2d.out", accepts = [floats])]
pub fn grid_sampler_2d_out<Sel: DtypeSelection>(
    _ctx: &KernelContext<'_>,
    input: &Tensor,
    grid: &Tensor,
    interpolation_mode: i64,
    padding_mode: i64,
    align_corners: bool,
    out: &mut Tensor,
) -> KernelResult {
    let mode = match interpolation_mode {
        0 => Interpolation::Bilinear,
        1 => Interpolation::Nearest,
        2 => Interpolation::Bicubic,
        _ => {
            return Err(KernelError::invalid(
                "unknown grid_sampler interpolation mode",
            ))
        }
    };
    let padding = match padding_mode {
        0 => Padding::Zeros,
        1 => Padding::Border,
        2 => Padding::Reflection,
        _ => return Err(KernelError::invalid("unknown grid_sampler padding mode")),
    };
    let shapes_ok = input.dim() == 4
        && grid.dim() == 4
        && grid.size(0) == input.size(0)
        && grid.size(3) == 2
        && grid.dtype() == input.dtype()
        && out.dtype() == input.dtype()
        && input.dtype().is_floating();
    if !shapes_ok {
        return Err(KernelError::invalid(
            "grid_sampler needs floating [N, C, H, W] input and [N, OH, OW, 2] grid",
        ));
    }
    out.resize(&[input.size(0), input.size(1), grid.size(1), grid.size(2)])?;
    let s = Sampler {
        mode,
        padding,
        align: align_corners,
        h: input.size(2),
        w: input.size(3),
    };
    et_switch!(Sel, input.dtype(), @floats, T => sample::<T>(&s, input, grid, out))
}

struct Sampler {
    mode: Interpolation,
    padding: Padding,
    align: bool,
    h: usize,
    w: usize,
}

/// Maps a normalized coordinate to pixel space.
fn unnormalize(c: f64, size: usize, align: bool) -> f64 {
    let size = size as f64;
    if align {
        (c + 1.0) / 2.0 * (size - 1.0)
    } else {
        ((c + 1.0) * size - 1.0) / 2.0
    }
}

/// Mirrors `x` into `[low, high]` given as doubled bounds (so half-pixel edges stay exact).
fn reflect(x: f64, twice_low: i64, twice_high: i64) -> f64 {
    if twice_low == twice_high {
        return 0.0;
    }
    let min = twice_low as f64 / 2.0;
    let span = (twice_high - twice_low) as f64 / 2.0;
    let x = libm::fabs(x - min);
    let extra = libm::fmod(x, span);
    let flips = libm::floor(x / span) as i64;
    if flips % 2 == 0 {
        extra + min
    } else {
        span - extra + min
    }
}

impl Sampler {
    /// Applies the padding mode to a pixel-space coordinate along a dim of `size`.
    fn pad(&self, x: f64, size: usize) -> f64 {
        let last = (size - 1) as f64;
        match self.padding {
            Padding::Zeros => x,
            Padding::Border => x.clamp(0.0, last),
            Padding::Reflection => {
                let size = size as i64;
                let r = if self.align {
                    reflect(x, 0, 2 * (size - 1))
                } else {
                    reflect(x, -1, 2 * size - 1)
                };
                r.clamp(0.0, last)
            }
        }
    }

    /// The pixel at integer coordinates, or 0 outside the image.
    fn at(&self, plane: &dyn Fn(usize, usize) -> f64, x: i64, y: i64) -> f64 {
        if (0..self.w as i64).contains(&x) && (0..self.h as i64).contains(&y) {
            plane(x as usize, y as usize)
        } else {
            0.0
        }
    }

    /// The interpolated value at normalized `(gx, gy)` of a plane read through `plane`.
    fn value(&self, plane: &dyn Fn(usize, usize) -> f64, gx: f64, gy: f64) -> f64 {
        let ux = unnormalize(gx, self.w, self.align);
        let uy = unnormalize(gy, self.h, self.align);
        match self.mode {
            Interpolation::Bilinear => {
                let (x, y) = (self.pad(ux, self.w), self.pad(uy, self.h));
                let (x0, y0) = (libm::floor(x), libm::floor(y));
                let (tx, ty) = (x - x0, y - y0);
                let (x0, y0) = (x0 as i64, y0 as i64);
                self.at(plane, x0, y0) * (1.0 - tx) * (1.0 - ty)
                    + self.at(plane, x0 + 1, y0) * tx * (1.0 - ty)
                    + self.at(plane, x0, y0 + 1) * (1.0 - tx) * ty
                    + self.at(plane, x0 + 1, y0 + 1) * tx * ty
            }
            Interpolation::Nearest => {
                let (x, y) = (self.pad(ux, self.w), self.pad(uy, self.h));
                self.at(plane, libm::rint(x) as i64, libm::rint(y) as i64)
            }
            Interpolation::Bicubic => {
                // Taps at the unpadded coordinate; each tap's position is padded alone.
                let (x0, y0) = (libm::floor(ux), libm::floor(uy));
                let (cx, cy) = (cubic_weights(ux - x0), cubic_weights(uy - y0));
                let mut acc = 0.0;
                for (j, wy) in cy.iter().enumerate() {
                    let y = self.pad(y0 - 1.0 + j as f64, self.h);
                    for (i, wx) in cx.iter().enumerate() {
                        let x = self.pad(x0 - 1.0 + i as f64, self.w);
                        acc += wy * wx * self.at(plane, x as i64, y as i64);
                    }
                }
                acc
            }
        }
    }
}

/// The four cubic-convolution weights (A = -0.75) of taps at offsets -1, 0, 1, 2 for a
/// fractional position `t`.
fn cubic_weights(t: f64) -> [f64; 4] {
    const A: f64 = -0.75;
    let near = |x: f64| ((A + 2.0) * x - (A + 3.0)) * x * x + 1.0;
    let far = |x: f64| ((A * x - 5.0 * A) * x + 8.0 * A) * x - 4.0 * A;
    [far(t + 1.0), near(t), near(1.0 - t), far(2.0 - t)]
}

fn sample<T: Num>(s: &Sampler, input: &Tensor, grid: &Tensor, out: &mut Tensor) -> KernelResult {
    let (is, gs, os) = (strides4(input), strides4(grid), strides4(out));
    let x = input.data::<T>()?;
    let g = grid.data::<T>()?;
    let (n, c, oh, ow) = (out.size(0), out.size(1), out.size(2), out.size(3));
    let y = out.data_mut::<T>()?;
    for b in 0..n {
        for i in 0..oh {
            for j in 0..ow {
                let at = b * gs[0] + i * gs[1] + j * gs[2];
                let (gx, gy) = (g[at].to_f64(), g[at + gs[3]].to_f64());
                for ch in 0..c {
                    let base = b * is[0] + ch * is[1];
                    let plane = |px: usize, py: usize| x[base + py * is[2] + px * is[3]].to_f64();
                    y[b * os[0] + ch * os[1] + i * os[2] + j * os[3]] =
                        T::from_f64(s.value(&plane, gx, gy));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::elementwise::with_ctx;
    use et_runtime::AllDtypes;
    use et_runtime::{ScalarType, TensorBuf};

    #[test]
    fn samples_corners_and_centres() {
        with_ctx(|ctx| {
            let x = TensorBuf::from_slice(&[1, 1, 2, 2], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
            // The image centre, the top-left corner, and a point far outside.
            let g =
                TensorBuf::from_slice(&[1, 1, 3, 2], &[0.0f64, 0.0, -1.0, -1.0, 5.0, 5.0]).unwrap();
            let mut o = TensorBuf::zeros(ScalarType::Double, &[1, 1, 1, 3]).unwrap();
            grid_sampler_2d_out::<AllDtypes>(ctx, &x, &g, 0, 0, true, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[2.5, 1.0, 0.0]);
            grid_sampler_2d_out::<AllDtypes>(ctx, &x, &g, 0, 1, true, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap(), &[2.5, 1.0, 4.0]);
            // Without align_corners, -1 is the outer edge: half the pixel is padding.
            grid_sampler_2d_out::<AllDtypes>(ctx, &x, &g, 0, 0, false, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap()[1], 0.25);
            grid_sampler_2d_out::<AllDtypes>(ctx, &x, &g, 2, 1, true, &mut o).unwrap();
            assert_eq!(o.data::<f64>().unwrap()[1], 1.0);
            assert!(grid_sampler_2d_out::<AllDtypes>(ctx, &x, &g, 3, 0, true, &mut o).is_err());
        });
    }

    #[test]
    fn reflects() {
        assert_eq!(reflect(-0.5, 0, 4), 0.5);
        assert_eq!(reflect(2.5, 0, 4), 1.5);
        assert_eq!(reflect(-1.5, -1, 3), 0.5);
    }
}
