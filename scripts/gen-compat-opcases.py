#!/usr/bin/env python3
"""Generate the `compat_*` operator conformance cases (issue "Compatible the way
ExecuTorch promises") into tests/fixtures/opcases/.

Each case is a PyTorch OpInfo sample (torch.testing._internal.common_methods_invocations,
seeded) or a hand-written variant, exported through the default flow
`torch.export.export` -> `to_edge` -> `to_executorch` (in-place `index_put_` with
`ExecutorchBackendConfig(run_reinplace_pass=True)`). Expected outputs come from eager
PyTorch; the tolerance is torch.testing's default for the output dtype. Every case is also
run through ExecuTorch's own runtime (`executorch.runtime`) and the result is recorded as
`executorch_agrees`.

Run with the ExecuTorch 1.5.1 / torch 2.14.1 venv:
    /path/to/venv/bin/python scripts/gen-compat-opcases.py [OUT_DIR]
It prints the index entries to append to `index.yaml` (and writes them to
OUT_DIR/compat-index.yaml).
"""
import os
import sys

import torch
import yaml
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.runtime import Runtime
from torch.testing._internal.common_methods_invocations import op_db

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(__file__), "..", "tests", "fixtures", "opcases")
DTYPE = {torch.float32: "float32", torch.float16: "float16", torch.float64: "float64",
         torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}
# torch.testing.assert_close's defaults.
TOL = {torch.float32: (1.3e-6, 1e-5), torch.float16: (1e-3, 1e-5),
       torch.float64: (1e-7, 1e-7)}


class Fn(torch.nn.Module):
    """Calls `f` on the tensor inputs; every other argument is baked into `f`."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def forward(self, *xs):
        return self.f(*xs)


def samples(name, dtype, variant=""):
    torch.manual_seed(0)
    op = next(o for o in op_db if o.name == name and o.variant_test_name == variant)
    return list(op.sample_inputs("cpu", dtype, requires_grad=False))


def write(case, f, inputs, reinplace=False):
    inputs = tuple(t.contiguous() for t in inputs)
    ep = torch.export.export(Fn(f), inputs)
    cfg = ExecutorchBackendConfig(run_reinplace_pass=True) if reinplace else None
    prog = to_edge(ep).to_executorch(cfg) if cfg else to_edge(ep).to_executorch()
    # Eager on copies: an in-place op must not touch the inputs written to disk.
    want = f(*[t.clone() for t in inputs])
    want = [want] if isinstance(want, torch.Tensor) else list(want)
    with open(os.path.join(OUT, case + ".pte"), "wb") as fh:
        fh.write(prog.buffer)
    rtol, atol = TOL.get(want[0].dtype, (0.0, 0.0))
    spec = {"program": case + ".pte", "method": "forward", "rtol": rtol, "atol": atol}
    ios = {"inputs": [], "outputs": []}
    for kind, ts in (("in", inputs), ("out", want)):
        for k, t in enumerate(ts):
            fname = f"{case}.{kind}{k}.bin"
            t.contiguous().numpy().tofile(os.path.join(OUT, fname))
            ios[kind + "puts"].append(
                {"dtype": DTYPE[t.dtype], "sizes": list(t.shape), "file": fname})
    note = None
    try:
        got = Runtime.get().load_program(prog.buffer).load_method("forward").execute(
            [t.clone() for t in inputs])
        agrees = len(got) == len(want) and all(
            g.dtype == w.dtype and g.shape == w.shape
            and torch.allclose(g.double(), w.double(), rtol=rtol, atol=atol, equal_nan=True)
            for g, w in zip(got, want))
        if not agrees:
            err = max((g.double() - w.double()).abs().max().item() for g, w in zip(got, want))
            note = f"outside tolerance (max abs error {err:.3g})"
    except RuntimeError as e:
        agrees, note = False, f"the runtime refuses it: {e}"
    spec["executorch_agrees"] = bool(agrees)
    if note:
        spec["executorch_note"] = note
    spec.update(ios)
    with open(os.path.join(OUT, case + ".io.yaml"), "w") as fh:
        yaml.safe_dump(spec, fh, sort_keys=False)
    ops = sorted({f"{o.name}.{o.overload}" if o.overload else o.name
                  for o in prog.executorch_program.execution_plan[0].operators})
    print(f"{case}: executorch_agrees={agrees} {ops}", file=sys.stderr)
    entry = {"case": case, "operators": ops, "executorch_agrees": bool(agrees)}
    if note:
        entry["executorch_note"] = note
    return entry


def cases():
    aten = torch.ops.aten
    out = []
    # index_put with a bool mask: OpInfo samples 1 and 3 (a [5] mask over a [5, 5] tensor).
    for dtype in (torch.float32, torch.float16):
        for i in (1, 3):
            s = samples("index_put", dtype)[i]
            acc = s.kwargs["accumulate"]
            name = f"compat_index_put_mask{'_accumulate' if acc else ''}_{DTYPE[dtype]}"
            out.append((name, lambda x, m, v, acc=acc: aten.index_put(x, [m], v, acc),
                        (s.input, s.args[0][0], s.args[1]), False))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 4, 2, generator=g)
    m2 = torch.rand(3, 4, generator=g) > 0.5
    # A 2-D mask covering dims 0-1, values broadcast over the remaining dim.
    out.append(("compat_index_put_mask2d_float32",
                lambda x, m, v: aten.index_put(x, [m], v),
                (x, m2, torch.tensor([5.0, -5.0])), False))
    # A mask after a `None`: x[:, m] = v.
    m1 = torch.tensor([True, False, True, True])
    out.append(("compat_index_put_none_mask_int64",
                lambda x, m, v: aten.index_put(x, [None, m], v),
                (torch.arange(12).reshape(3, 4), m1, torch.tensor([-1, -2, -3])), False))
    # A mask and an integer index broadcast together: x[m, i] += v.
    out.append(("compat_index_put_mask_int_accumulate_float32",
                lambda x, m, i, v: aten.index_put(x, [m, i], v, True),
                (torch.zeros(4, 5), m1, torch.tensor([1, 3, -1]), torch.tensor([1.0, 2.0, 3.0])),
                False))
    # In place (the reinplace pass turns index_put on a clone into index_put_), with a
    # bool mask over the first dim.
    out.append(("compat_index_put_inplace_mask_int32",
                lambda x, m, v: x.clone().index_put_([m], v),
                (torch.arange(8, dtype=torch.int32).reshape(4, 2), m1,
                 torch.tensor([7, 8], dtype=torch.int32)), True))
    # (index.Tensor with a mask next to an integer index does not export: the mask's
    # true count is an unbacked size that torch.export cannot relate to the index's.)
    # masked_scatter whose mask has a higher rank than self (OpInfo sample 3: [5] and [5, 5]).
    for dtype in (torch.float32, torch.float16):
        s = samples("masked_scatter", dtype)[3]
        out.append((f"compat_masked_scatter_mask_rank_{DTYPE[dtype]}",
                    lambda x, m, src: x.masked_scatter(m, src),
                    (s.input, s.args[0], s.args[1]), False))
    x3 = torch.arange(3.0)
    m3 = torch.rand(2, 1, 3, generator=g) > 0.3
    out.append(("compat_masked_scatter_mask_rank3_float32",
                lambda x, m, src: x.masked_scatter(m, src),
                (x3, m3, torch.randn(2, 4, 3, generator=g)), False))
    # Anti-aliased bilinear: every OpInfo sample (float32).
    for i, s in enumerate(samples("_upsample_bilinear2d_aa", torch.float32)):
        kw = dict(s.kwargs)
        if "scale_factors" in kw:
            f = lambda x, kw=kw: aten._upsample_bilinear2d_aa.vec(
                x, kw["output_size"], kw["align_corners"], kw["scale_factors"])
        else:
            f = lambda x, kw=kw: aten._upsample_bilinear2d_aa(
                x, kw["output_size"], kw["align_corners"], kw["scales_h"], kw["scales_w"])
        out.append((f"compat_upsample_bilinear2d_aa_s{i}_float32", f, (s.input,), False))
    # grid_sampler_2d on float16: every OpInfo sample.
    for i, s in enumerate(samples("grid_sampler_2d", torch.float16)):
        mode, pad, align = s.args[1:]
        out.append((f"compat_grid_sampler_2d_s{i}_float16",
                    lambda x, gr, a=(mode, pad, align): aten.grid_sampler_2d(x, gr, *a),
                    (s.input, s.args[0]), False))
    # scaled_dot_product_attention, float32, the deterministic (dropout 0) samples.
    for i, s in enumerate(samples("nn.functional.scaled_dot_product_attention", torch.float32)):
        kw = dict(s.kwargs)
        if kw.get("dropout_p", 0.0) != 0.0:
            continue
        mask = kw.pop("attn_mask", None)
        ts = (s.input, *s.args) + ((mask,) if mask is not None else ())
        f = lambda q, k, v, *m, kw=kw: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, *m, **kw)
        out.append((f"compat_sdpa_s{i}_float32", f, ts, False))
    return out


if __name__ == "__main__":
    only = os.environ.get("ONLY", "")
    index = []
    for name, f, ins, reinplace in cases():
        if only and only not in name:
            continue
        try:
            index.append(write(name, f, ins, reinplace))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"{name}: FAILED {type(e).__name__}: {str(e)[:300]}", file=sys.stderr)
    with open(os.path.join(OUT, "compat-index.yaml"), "w") as fh:
        yaml.safe_dump(index, fh, sort_keys=False)
