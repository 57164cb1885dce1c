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
/// `padding_mode` 0/1/2 is zeros/border/reflection. float32/float64 compute in f64 and
/// round once; float16/bfloat16 round every intermediate to their type, as PyTorch's
/// scalar kernel does (so coordinates and weights match eager PyTorch's).
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
        r: match input.dtype() {
            et_runtime::ScalarType::Half => to_half,
            et_runtime::ScalarType::BFloat16 => to_bfloat,
            _ => exact,
        },
    };
    et_switch!(Sel, input.dtype(), @floats, T => sample::<T>(&s, input, grid, out))
}

struct Sampler {
    mode: Interpolation,
    padding: Padding,
    align: bool,
    h: usize,
    w: usize,
    /// Rounds an intermediate to the element type: PyTorch samples float16 and bfloat16
    /// with its scalar kernel in that type, rounding after every operation (a nearest
    /// coordinate or a cubic weight lands elsewhere than in f32); identity for
    /// float32/float64, computed in f64 (PyTorch's vectorized kernel is within rounding of
    /// it).
    r: fn(f64) -> f64,
}

fn exact(v: f64) -> f64 {
    v
}

fn to_half(v: f64) -> f64 {
    et_runtime::f16::from_f64(v).to_f64()
}

fn to_bfloat(v: f64) -> f64 {
    et_runtime::bf16::from_f64(v).to_f64()
}

/// Mirrors `x` into `[low, high]` given as doubled bounds (so half-pixel edges stay
/// exact), each step rounded by `r`.
fn reflect_in(x: f64, twice_low: i64, twice_high: i64, r: fn(f64) -> f64) -> f64 {
    if twice_low == twice_high {
        return 0.0;
    }
    let min = twice_low as f64 / 2.0;
    let span = (twice_high - twice_low) as f64 / 2.0;
    let x = r(libm::fabs(r(x - min)));
    let extra = r(libm::fmod(x, span));
    let flips = libm::floor(r(x / span)) as i64;
    if flips % 2 == 0 {
        r(extra + min)
    } else {
        r(r(span - extra) + min)
    }
}

/// [`reflect_in`] in f64.
#[cfg(test)]
fn reflect(x: f64, twice_low: i64, twice_high: i64) -> f64 {
    reflect_in(x, twice_low, twice_high, exact)
}

impl Sampler {
    /// Maps a normalized coordinate to pixel space, in PyTorch's operation order.
    fn unnormalize(&self, c: f64, size: usize) -> f64 {
        let (r, size) = (self.r, size as f64);
        if self.align {
            r(r(r(c + 1.0) / 2.0) * (size - 1.0))
        } else {
            r(r(r(r(c + 1.0) * size) - 1.0) / 2.0)
        }
    }

    /// Applies the padding mode to a pixel-space coordinate along a dim of `size`.
    fn pad(&self, x: f64, size: usize) -> f64 {
        let last = (size - 1) as f64;
        match self.padding {
            Padding::Zeros => x,
            Padding::Border => x.clamp(0.0, last),
            Padding::Reflection => {
                let size = size as i64;
                let r = if self.align {
                    reflect_in(x, 0, 2 * (size - 1), self.r)
                } else {
                    reflect_in(x, -1, 2 * size - 1, self.r)
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

    /// The interpolated value at normalized `(gx, gy)` of a plane read through `plane`,
    /// with the operation order of PyTorch's scalar kernel.
    fn value(&self, plane: &dyn Fn(usize, usize) -> f64, gx: f64, gy: f64) -> f64 {
        let r = self.r;
        let ux = self.unnormalize(gx, self.w);
        let uy = self.unnormalize(gy, self.h);
        match self.mode {
            Interpolation::Bilinear => {
                let (x, y) = (self.pad(ux, self.w), self.pad(uy, self.h));
                let (x0, y0) = (libm::floor(x), libm::floor(y));
                let (x1, y1) = (x0 + 1.0, y0 + 1.0);
                let weights = [
                    r(r(x1 - x) * r(y1 - y)),
                    r(r(x - x0) * r(y1 - y)),
                    r(r(x1 - x) * r(y - y0)),
                    r(r(x - x0) * r(y - y0)),
                ];
                let (x0, y0) = (x0 as i64, y0 as i64);
                let taps = [(x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)];
                taps.iter().zip(weights).fold(0.0, |acc, (&(tx, ty), w)| {
                    r(acc + r(self.at(plane, tx, ty) * w))
                })
            }
            Interpolation::Nearest => {
                let (x, y) = (self.pad(ux, self.w), self.pad(uy, self.h));
                self.at(plane, libm::rint(x) as i64, libm::rint(y) as i64)
            }
            Interpolation::Bicubic => {
                // Taps at the unpadded coordinate; each tap's position is padded alone
                // (then truncated); rows are interpolated along x first, then along y.
                let (x0, y0) = (libm::floor(ux), libm::floor(uy));
                let (tx, ty) = (r(ux - x0), r(uy - y0));
                let tap = |xi: f64, yi: f64| {
                    let (x, y) = (self.pad(xi, self.w), self.pad(yi, self.h));
                    self.at(plane, x as i64, y as i64)
                };
                let mut rows = [0.0; 4];
                for (j, row) in rows.iter_mut().enumerate() {
                    let yi = y0 - 1.0 + j as f64;
                    let v = core::array::from_fn(|i| tap(x0 - 1.0 + i as f64, yi));
                    *row = cubic(v, tx, r);
                }
                cubic(rows, ty, r)
            }
        }
    }
}

/// Cubic convolution (A = -0.75) of the values at offsets -1, 0, 1, 2 at fractional
/// position `t`, each operation rounded by `r` as PyTorch's `cubic_interp1d`.
fn cubic(v: [f64; 4], t: f64, r: fn(f64) -> f64) -> f64 {
    const A: f64 = -0.75;
    let near = |x: f64| r(r(r(r(r((A + 2.0) * x) - (A + 3.0)) * x) * x) + 1.0);
    let far = |x: f64| r(r(r(r(r(r(A * x) - 5.0 * A) * x) + 8.0 * A) * x) - 4.0 * A);
    let x2 = r(1.0 - t);
    let w = [far(r(t + 1.0)), near(t), near(x2), far(r(x2 + 1.0))];
    v.iter()
        .zip(w)
        .map(|(&v, w)| r(v * w))
        .reduce(|a, b| r(a + b))
        .unwrap_or(0.0)
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
