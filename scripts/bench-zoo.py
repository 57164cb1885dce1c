#!/usr/bin/env python3
"""The model zoo (scripts/make-zoo.py) timed on etch and on ExecuTorch+XNNPACK, side by side.

A manual benchmark (the tests never need it). Needs the zoo in the cache, the venv with
ExecuTorch 1.5.1 (see scripts/make-zoo.py) and a release etch:

    cargo build --release -p et-cli
    /tmp/et/bin/python scripts/make-zoo.py
    /tmp/et/bin/python scripts/bench-zoo.py [ROUNDS] [--models a,b] [--precisions fp32,int8] [--threads 1,2]

Every program of the manifest ($ETCH_BENCH_CACHE/zoo, default ~/.cache/etch-bench/zoo)
that exported, in each precision and thread count (1 pinned to CPU 0 with taskset, 2 on
CPUs 0 and 1; both runtimes get the same count: ExecuTorch's threadpool through
`portable_lib._unsafe_reset_threadpool`, etch through `--threads`), in fresh processes,
ExecuTorch then etch, interleaved, ROUNDS times (default 2); the figure is the minimum
over all rounds.

ExecuTorch: one warm-up `method.execute` and then N timed calls (`time.perf_counter`,
minimum; its figure includes the Python call, a few microseconds). N is at most
--iterations (30) and fewer for slow models, so that one process times about --budget
seconds (2) of forward calls, but at least 3. etch: `etch run --iterations N+1` with the
same N (its first call is the warm-up; the minimum is over all), its summary line's
minimum, which excludes loading.

Every etch run also writes its outputs, compared with the ones ExecuTorch gave at export
(the manifest's .outK.bin files): the column is max |etch - ExecuTorch| over max
|ExecuTorch| across the outputs, and a row over the tolerance (TOLERANCE below, per
precision, or the model's entry in TOLERANCE_OVERRIDES) says MISMATCH, also listed under
the table. An int8 row over its tolerance is still ok ("ok, quantization-level") when
etch's output is as close to the fp32 program's ExecuTorch output as ExecuTorch's own
int8 output is (mean |error| within QUANT_LEVEL of ExecuTorch's): deep int8 networks with
float parts (GELU, softmax, layer norm, attention products) flip a requantization
rounding wherever a float sum lands near a half step, and each runtime sums in its own
order, so their outputs part by a fraction of the quantization error itself; a wrong
kernel moves etch's output further from the fp32 one. A program etch (or ExecuTorch)
refuses shows the error instead of a time.
`--check-only` runs each program once through etch and prints only the checks (and
errors): which programs etch runs and gets right, in a minute or two.
"""
import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CPUS = {1: "0", 2: "0,1"}
# Relative to max |output|. fp32: both runtimes compute the same graph in float32 but
# sum in different orders, which deep networks amplify a little (up to about 5e-5 on
# this zoo). int8: the integer arithmetic can match exactly, but a rounding decided
# differently anywhere (a requantization tie, or a float part of the graph such as a
# softmax) moves the output by about one step of its scale, under 1% of its range.
TOLERANCE = {"fp32": 1e-4, "int8": 1e-2}
TOLERANCE_OVERRIDES = {}
# An int8 output over its tolerance passes when its mean |error| against the fp32
# program's output is at most this many times ExecuTorch's int8 output's.
QUANT_LEVEL = 1.05


def cache_dir():
    base = os.environ.get("ETCH_BENCH_CACHE") or os.path.expanduser("~/.cache/etch-bench")
    return Path(base) / "zoo"


def read_tensor(root, spec):
    import numpy as np

    return np.fromfile(root / spec["file"], dtype=np.dtype(spec["dtype"]).newbyteorder("<")
                       ).reshape(spec["shape"])


def executorch_child(root, pte, inputs, threads, iterations, budget):
    """Runs in a fresh process: prints {"ms": min forward time, "calls": N}."""
    import torch
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    portable_lib._unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(root / pte).load_method("forward")
    args = [torch.from_numpy(read_tensor(root, i).copy()) for i in inputs]
    t0 = time.perf_counter()
    method.execute(args)
    warm = time.perf_counter() - t0
    calls = max(3, min(iterations, math.ceil(budget / max(warm, 1e-9))))
    best = float("inf")
    for _ in range(calls):
        t0 = time.perf_counter()
        method.execute(args)
        best = min(best, time.perf_counter() - t0)
    print(json.dumps({"ms": best * 1e3, "calls": calls}))


def error_line(stderr, returncode, last):
    """The line of a failed run's stderr that says why: ExecuTorch's Python errors end
    with the exception, etch's message comes first (further lines list details)."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    if not lines:
        return f"exit status {returncode}"
    return (lines[-1] if last else lines[0])[:400].replace("|", "/")


def executorch(root, pte, inputs, threads, args):
    cmd = ["taskset", "-c", CPUS[threads], sys.executable, __file__, "--executorch-child",
           json.dumps({"pte": pte, "inputs": inputs, "threads": threads,
                       "iterations": args.iterations, "budget": args.budget})]
    env = dict(os.environ, ETCH_BENCH_CACHE=str(root.parent))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return {"error": "ExecuTorch: " + error_line(p.stderr, p.returncode, last=True)}
    return json.loads(p.stdout.strip().splitlines()[-1])


def etch(root, pte, inputs, outputs, threads, calls, binary, anchor=None):
    """Runs `pte` on etch and compares its outputs with `outputs` (ExecuTorch's); with
    `anchor` (the fp32 program's outputs, for an int8 program) also measures how far
    each runtime's outputs are from the anchor (mean |error|)."""
    import numpy as np

    with tempfile.TemporaryDirectory(prefix="etch-zoo-") as out:
        cmd = ["taskset", "-c", CPUS[threads], str(binary), "run", str(root / pte),
               "--iterations", str(calls + 1), "--threads", str(threads), "--output-dir", out]
        for i in inputs:
            cmd += ["--input", str(root / i["file"])]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": error_line(p.stderr, p.returncode, last=False)}
        # One run prints no timing line, which --check-only does not need.
        m = re.search(r"execute over \d+ runs.*?min ([\d.]+) us", p.stdout)
        if not m and calls:
            return {"error": "etch: no timing line in its output"}
        diff, scale, problem = 0.0, 0.0, None
        drift = {"etch": 0.0, "et": 0.0}
        for k, spec in enumerate(outputs):
            want = read_tensor(root, spec).astype(np.float64)
            path = Path(out) / f"output{k}.bin"
            if not path.exists():
                problem = f"output {k} not written"
                continue
            got = np.fromfile(path, dtype=np.dtype(spec["dtype"]).newbyteorder("<"))
            if got.size != want.size:
                problem = f"output {k}: {got.size} elements, ExecuTorch's has {want.size}"
                continue
            got = got.astype(np.float64).reshape(want.shape)
            if not np.isfinite(got).all() and np.isfinite(want).all():
                problem = f"output {k} has non-finite values"
            d = np.abs(got - want)
            diff = max(diff, float(np.nanmax(d)) if d.size else 0.0)
            scale = max(scale, float(np.max(np.abs(want))) if want.size else 0.0)
            if anchor and k < len(anchor) and want.size:
                fp32 = read_tensor(root, anchor[k]).astype(np.float64).reshape(want.shape)
                drift["etch"] += float(np.mean(np.abs(got - fp32)))
                drift["et"] += float(np.mean(np.abs(want - fp32)))
        result = {"rel": diff / scale if scale else diff, "problem": problem}
        if anchor:
            result["drift"] = drift
        if m:
            result["ms"] = float(m.group(1)) / 1e3
        return result


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"^Model name:\s*(.+)$", out, re.M)
        return m.group(1).strip() if m else "unknown"
    except OSError:
        return "unknown"


def main():
    if sys.argv[1:2] == ["--executorch-child"]:
        a = json.loads(sys.argv[2])
        executorch_child(cache_dir(), a["pte"], a["inputs"], a["threads"], a["iterations"],
                         a["budget"])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=2, metavar="ROUNDS")
    parser.add_argument("--models", help="comma-separated model names (default: all)")
    parser.add_argument("--precisions", default="fp32,int8")
    parser.add_argument("--threads", default="1,2", help="thread counts: 1, 2 or 1,2")
    parser.add_argument("--iterations", type=int, default=30,
                        help="most forward calls timed per process")
    parser.add_argument("--budget", type=float, default=2.0,
                        help="seconds of forward calls per process, which caps N for slow models")
    parser.add_argument("--etch", type=Path, default=None,
                        help="the etch binary (default: target/release/etch, or "
                             "$CARGO_TARGET_DIR/release/etch)")
    parser.add_argument("--check-only", action="store_true",
                        help="run each program once through etch (first thread count) and "
                             "compare its outputs; no timing, no ExecuTorch")
    args = parser.parse_args()
    root = cache_dir()
    manifest_path = root / "manifest.json"
    if not manifest_path.exists():
        sys.exit(f"no {manifest_path}: run scripts/make-zoo.py first")
    manifest = json.loads(manifest_path.read_text())["models"]
    binary = args.etch or Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release/etch"
    if not binary.exists():
        sys.exit(f"no {binary}: cargo build --release -p et-cli")
    names = args.models.split(",") if args.models else list(manifest)
    unknown = [n for n in names if n not in manifest]
    if unknown:
        sys.exit(f"not in the manifest: {', '.join(unknown)}")
    precisions = args.precisions.split(",")
    thread_counts = [int(t) for t in args.threads.split(",")]

    if args.check_only:
        check_only(root, manifest, names, precisions, thread_counts[0], binary)
        return
    cells = [(n, p, t) for t in thread_counts for n in names for p in precisions
             if manifest[n]["programs"].get(p, {}).get("status") == "ok"]
    results = {c: {"et": None, "etch": None} for c in cells}
    for r in range(args.rounds):
        for cell in cells:
            name, precision, threads = cell
            entry = manifest[name]
            program = entry["programs"][precision]
            res = results[cell]
            print(f"round {r + 1}/{args.rounds}: {name} {precision} {threads} thread(s)",
                  file=sys.stderr, flush=True)
            et = executorch(root, program["file"], entry["inputs"], threads, args)
            calls = et.get("calls") or (res["et"] or {}).get("calls") or args.iterations
            ours = etch(root, program["file"], entry["inputs"], program["outputs"], threads,
                        calls, binary, anchor(entry, precision))
            res["et"] = best(res["et"], et)
            res["etch"] = best(res["etch"], ours)
            if "rel" in ours:
                res["rel"] = max(res.get("rel", 0.0), ours["rel"])
                res["problem"] = res.get("problem") or ours["problem"]
                res["drift"] = ours.get("drift")

    command = " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *sys.argv])
    print(f"## etch vs ExecuTorch {manifest_version(manifest_path)} + XNNPACK: model zoo\n")
    print(f"- CPU: {cpu_model()} ({os.cpu_count()} logical CPUs)")
    print(f"- command: `{command}`")
    print(f"- {args.rounds} round(s), fresh processes, interleaved; each figure is the minimum "
          f"forward time over the rounds (ms); 1 thread on CPU 0, 2 threads on CPUs 0,1")
    print("- check: max |etch - ExecuTorch| / max |ExecuTorch| over the outputs; tolerance "
          + ", ".join(f"{p} {t:g}" for p, t in TOLERANCE.items()) + "\n")
    print("| model | precision | threads | ExecuTorch ms | etch ms | etch/ExecuTorch | output check |")
    print("|---|---|---|---|---|---|---|")
    ratios, bad = {}, []
    for cell in cells:
        name, precision, threads = cell
        res = results[cell]
        et, ours = res["et"], res["etch"]
        et_s = f"{et['ms']:.3f}" if "ms" in et else et["error"]
        ours_s = f"{ours['ms']:.3f}" if "ms" in ours else ours["error"]
        ratio = ""
        if "ms" in et and "ms" in ours:
            ratios.setdefault((precision, threads), []).append(ours["ms"] / et["ms"])
            ratio = f"{ours['ms'] / et['ms']:.2f}x"
        check = verdict(name, precision, res) if "rel" in res else ""
        if "MISMATCH" in check:
            bad.append(f"{name} {precision}, {threads} thread(s): {check}")
        print(f"| {name} | {precision} | {threads} | {et_s} | {ours_s} | {ratio} | {check} |")
    print("\n| precision | threads | models timed | geomean etch/ExecuTorch |")
    print("|---|---|---|---|")
    for threads in thread_counts:
        for precision in precisions:
            rs = ratios.get((precision, threads), [])
            g = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else float("nan")
            print(f"| {precision} | {threads} | {len(rs)} | {g:.2f}x |")
    failed = [(n, p, rec.get("error", "")) for n in names for p in precisions
              for rec in [manifest[n]["programs"].get(p, {})] if rec.get("status") != "ok"]
    if failed:
        print("\nNot exported (see the manifest):")
        for n, p, e in failed:
            print(f"- {n} {p}: {e}")
    if bad:
        print("\nOutputs over tolerance:")
        for b in bad:
            print(f"- {b}")


def check_only(root, manifest, names, precisions, threads, binary):
    print("| model | precision | etch | output check |")
    print("|---|---|---|---|")
    for name in names:
        for precision in precisions:
            entry = manifest[name]
            program = entry["programs"].get(precision, {})
            if program.get("status") != "ok":
                print(f"| {name} | {precision} | not exported: "
                      f"{program.get('error', 'not in the manifest yet')} | |")
                continue
            res = etch(root, program["file"], entry["inputs"], program["outputs"], threads, 0,
                       binary, anchor(entry, precision))
            print(f"| {name} | {precision} | {res.get('error', 'ran')} | "
                  f"{verdict(name, precision, res) if 'rel' in res else ''} |", flush=True)


def anchor(entry, precision):
    """The fp32 program's outputs, the reference an int8 program's drift is measured
    against (None for fp32 rows, or when the fp32 program did not export)."""
    fp32 = entry["programs"].get("fp32", {})
    if precision != "int8" or fp32.get("status") != "ok":
        return None
    return fp32["outputs"]


def verdict(name, precision, res):
    tol = TOLERANCE_OVERRIDES.get((name, precision), TOLERANCE[precision])
    text = f"{res['rel']:.1e}"
    drift = res.get("drift")
    if not res["problem"] and not res["rel"] <= tol and drift and drift["et"] > 0 \
            and drift["etch"] <= QUANT_LEVEL * drift["et"]:
        return (f"ok, quantization-level {text} (mean abs error against fp32: etch "
                f"{drift['etch']:.3g}, ExecuTorch {drift['et']:.3g})")
    if res["problem"] or not res["rel"] <= tol:
        return f"**MISMATCH** {text}" + (f" ({res['problem']})" if res["problem"] else "") \
            + f", tolerance {tol:g}"
    return f"ok {text}"


def best(old, new):
    """The faster of two results; an error stays visible unless a round succeeded."""
    if old is None:
        return new
    if "ms" in new and ("ms" not in old or new["ms"] < old["ms"]):
        return new
    return old


def manifest_version(path):
    return json.loads(path.read_text()).get("versions", {}).get("executorch", "")


if __name__ == "__main__":
    main()
