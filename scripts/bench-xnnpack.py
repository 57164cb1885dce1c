#!/usr/bin/env python3
"""XNNPACK-lowered programs, etch's backend against ExecuTorch's runtime with XNNPACK.

A manual benchmark (the tests never need ExecuTorch). Needs a venv with ExecuTorch:

    python3 -m venv /tmp/et && /tmp/et/bin/pip install executorch==1.5.1 torch==2.14.1 pyyaml
    cargo build --release -p et-cli
    /tmp/et/bin/python scripts/bench-xnnpack.py [ROUNDS] [PROGRAM...]

For each program, thread count (1 pinned to CPU 0, 2 on CPUs 0 and 1) and round, ExecuTorch
(the fixture's inputs, 3 warm-up calls, 30 timed `forward` calls on one loaded method,
minimum) and then etch (`etch run --iterations 30 --json`, minimum), in fresh processes,
interleaved. ExecuTorch's figure includes its Python call (a few microseconds).
"""
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests/fixtures"
PROGRAMS = ["mv2_xnnpack", "mv2_xnnpack_q8", "tiny_transformer_xnnpack"]
CPUS = {1: "0", 2: "0,1"}
ITERATIONS = 30


def inputs(name):
    import numpy as np
    import yaml

    io = yaml.safe_load((FIXTURES / f"{name}.io.yaml").read_text())
    return [(np.fromfile(FIXTURES / i["file"], dtype=i["dtype"]).reshape(i["sizes"]), i)
            for i in io["inputs"]]


def executorch(name, threads):
    import torch
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    portable_lib._unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(FIXTURES / f"{name}.pte").load_method("forward")
    args = [torch.from_numpy(a.copy()) for a, _ in inputs(name)]
    for _ in range(3):
        method.execute(args)
    best = float("inf")
    for _ in range(ITERATIONS):
        t0 = time.perf_counter()
        method.execute(args)
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def etch(name, threads):
    cmd = ["taskset", "-c", CPUS[threads], ROOT / "target/release/etch", "run",
           FIXTURES / f"{name}.pte", "--iterations", str(ITERATIONS), "--threads", str(threads),
           "--json"]
    for _, i in inputs(name):
        cmd += ["--input", FIXTURES / i["file"]]
    out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
    return out["execute_us"]["min"] / 1e3


def main():
    if sys.argv[1:2] == ["--executorch"]:
        print(json.dumps(executorch(sys.argv[2], int(sys.argv[3]))))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    programs = sys.argv[2:] or PROGRAMS
    rows = []
    for threads in (1, 2):
        for name in programs:
            et, ours = [], []
            for _ in range(rounds):
                et.append(json.loads(subprocess.run(
                    ["taskset", "-c", CPUS[threads], sys.executable, __file__, "--executorch",
                     name, str(threads)],
                    check=True, capture_output=True, text=True).stdout.splitlines()[-1]))
                ours.append(etch(name, threads))
            rows.append((name, threads, min(et), min(ours)))
    print("| program | threads | ExecuTorch+XNNPACK ms | etch ms | etch/ExecuTorch time |")
    print("|---|---|---|---|---|")
    for name, threads, et, ours in rows:
        print(f"| {name} | {threads} | {et:.3f} | {ours:.3f} | {ours / et:.2f}x |")


if __name__ == "__main__":
    main()
