#!/usr/bin/env python3
"""Fits the polynomial and rational coefficients of et-ops' vectorized math
(`et-ops/src/util/vmath/functions.rs`) and prints them rounded to f32, with the maximum
relative error of the rounded approximation.

    pip install numpy mpmath && python3 scripts/vmath-coefficients.py

Fits are minimax in relative error, by Lawson's iteratively reweighted least squares over
Chebyshev-spaced points (a rational one linearized around its previous denominator),
against mpmath at 40 digits.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def f32(v):
    return float(np.float32(v))


def lawson(a, b, iterations=400):
    """Coefficients c minimizing max |a c - b| (rows already divided by their weight)."""
    w = np.ones(len(b)) / len(b)
    for _ in range(iterations):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(a * sw[:, None], b * sw, rcond=None)
        w = w * np.abs(a @ c - b)
        w /= w.sum()
    return c


def chebyshev_points(lo, hi, n):
    return lo + (hi - lo) * (np.cos(np.linspace(0, np.pi, n)) + 1) / 2


def exp_coefficients():
    """e^r = 1 + r + r^2 (1/2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4) on |r| <= ln(2)/2."""
    half = float(mp.log(2)) / 2 * 1.002  # a margin for n rounded without a fused multiply-add
    r = chebyshev_points(-half, half, 4000)
    r = r[np.abs(r) > 1e-6]
    exact = np.array([float(mp.exp(mp.mpf(x))) for x in r])
    # What is left for c3.. after 1 + r + r^2/2, relative to e^r.
    rest = np.array([float(mp.exp(mp.mpf(x)) - 1 - x - mp.mpf(x) ** 2 / 2) for x in r])
    basis = np.stack([r ** (k + 2) for k in range(1, 5)], axis=1)
    c = [0.5] + [f32(v) for v in lawson(basis / exact[:, None], rest / exact)]
    approx = 1 + r + r * r * sum(c[k] * r ** k for k in range(5))
    print("exp: 1/2, c3..c6 =", [repr(np.float32(v)) for v in c[1:]])
    print("     max relative error", np.max(np.abs(approx / exact - 1)))


def erf_coefficients(p_degree=6, q_degree=4):
    """erf(z) = z P(z^2) / Q(z^2), Q(0) = 1, on |z| up to where erf rounds to 1."""
    limit = mp.mpf("3.9")
    while mp.erfc(limit) > mp.mpf(2) ** -25:
        limit += mp.mpf("0.005")
    limit = float(limit)
    z = chebyshev_points(1e-4, limit, 6000)
    g = np.array([float(mp.erf(mp.mpf(x)) / x) for x in z])
    u = (z / limit) ** 2  # the fit's variable, scaled into [0, 1]
    p0 = f32(2 / np.sqrt(np.pi))  # P(0), fixed to its f32 rounding
    q_prev = np.ones_like(u)
    for _ in range(12):
        a = np.concatenate(
            [
                np.stack([u ** k for k in range(1, p_degree + 1)], 1),
                -g[:, None] * np.stack([u ** k for k in range(1, q_degree + 1)], 1),
            ],
            1,
        )
        weight = g * q_prev
        c = lawson(a / weight[:, None], (g - p0) / weight, 300)
        p = np.concatenate([[p0], c[:p_degree]])
        q = np.concatenate([[1.0], c[p_degree:]])
        q_prev = sum(q[k] * u ** k for k in range(q_degree + 1))
    t_scale = limit ** 2
    p = [f32(p[k] / t_scale ** k) for k in range(p_degree + 1)]
    q = [f32(q[k] / t_scale ** k) for k in range(q_degree + 1)]
    zz = np.linspace(1e-4, limit, 40001)
    tt = zz * zz
    exact = np.array([float(mp.erf(mp.mpf(x))) for x in zz])
    approx = zz * sum(p[k] * tt ** k for k in range(p_degree + 1))
    approx /= sum(q[k] * tt ** k for k in range(q_degree + 1))
    print(f"erf: saturation {limit:.3f}")
    print("     P =", [repr(np.float32(v)) for v in p])
    print("     Q =", [repr(np.float32(v)) for v in q])
    print("     max relative error", np.max(np.abs(approx / exact - 1)))


if __name__ == "__main__":
    exp_coefficients()
    erf_coefficients()
