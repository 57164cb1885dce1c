#!/usr/bin/env python3
"""Prefill and decode of the LLM fixtures, etch against ExecuTorch's own runtime.

A manual benchmark (the tests never need ExecuTorch). Needs a venv with ExecuTorch:

    python3 -m venv /tmp/et && /tmp/et/bin/pip install executorch==1.5.1 torch==2.14.1
    cargo build --release -p et-cli
    /tmp/et/bin/python scripts/bench-llm.py [ROUNDS]

Both runtimes run with the same thread count, interleaved: one thread pinned to CPU 0
(`taskset -c 0`), then two threads on CPUs 0 and 1. For each program, thread count and
round, ExecuTorch (a prefill of the 6-token prompt at position 0, then 99
decode calls of one token, three times on one loaded method) and then etch (`etch generate
--json`, three runs, a fresh process each). Only `forward` calls are timed; ExecuTorch's
figure includes the Python call (measured separately: a few microseconds). Two prefill
figures: the first `forward` after loading (cold caches and planned memory) and a warm
one (ExecuTorch: the best later prefill on the loaded method; etch: `etch generate
--warmup`, which generates once before the reported generation); decode is the best rate.
"""
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROMPT = [1, 45, 99, 300, 17, 250]
NEW_TOKENS = 100
# One-thread rows pinned to CPU 0, two-thread rows to CPUs 0 and 1.
CPUS = {1: "0", 2: "0,1"}


def executorch(name, threads):
    import torch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: ops)
    import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed:: ops)
    from executorch.runtime import Runtime

    from executorch.extension.pybindings import portable_lib

    # The row's thread count, as etch's (ExecuTorch's pool defaults to the core count).
    portable_lib._unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(ROOT / f"tests/fixtures/llm/{name}.pte").load_method("forward")
    prefills, best_decode = [], None
    for _ in range(3):
        inputs = [torch.tensor([PROMPT]), torch.tensor([0])]
        t0 = time.perf_counter()
        logits = method.execute(inputs)[0]
        prefill = time.perf_counter() - t0
        token, pos, decode, tokens = int(logits[0].argmax()), len(PROMPT), 0.0, []
        tokens.append(token)
        for _ in range(NEW_TOKENS - 1):
            # The inputs are built outside the timed call, as etch builds its own.
            inputs = [torch.tensor([[token]]), torch.tensor([pos])]
            t0 = time.perf_counter()
            logits = method.execute(inputs)[0]
            decode += time.perf_counter() - t0
            token, pos = int(logits[0].argmax()), pos + 1
            tokens.append(token)
        prefills.append(prefill * 1e3)
        best_decode = decode if best_decode is None else min(best_decode, decode)
    return prefills[0], min(prefills[1:]), (NEW_TOKENS - 1) / best_decode, tokens


def etch(name, threads):
    def run(warmup):
        out = subprocess.run(
            ["taskset", "-c", CPUS[threads], ROOT / "target/release/etch", "generate",
             ROOT / f"tests/fixtures/llm/{name}.pte", "--prompt-tokens",
             ",".join(map(str, PROMPT)), "--temperature", "0",
             "--max-new-tokens", str(NEW_TOKENS), "--threads", str(threads), "--json"]
            + (["--warmup"] if warmup else []),
            check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    cold = [run(False) for _ in range(3)]
    warm = [run(True) for _ in range(3)]
    return (min(r["prefill_ms"] for r in cold), min(r["prefill_ms"] for r in warm),
            max(r["decode_tokens_per_s"] for r in cold + warm), cold[0]["generated_tokens"])


def main():
    if sys.argv[1:2] == ["--executorch"]:
        print(json.dumps(executorch(sys.argv[2], int(sys.argv[3]))))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rows = []
    for name, threads in [(n, t) for t in (1, 2) for n in ["llama_tiny_fp32", "llama_tiny_8da4w"]]:
        for _ in range(rounds):
            et = [json.loads(subprocess.run(
                ["taskset", "-c", CPUS[threads], sys.executable, __file__, "--executorch", name,
                 str(threads)],
                check=True, capture_output=True, text=True).stdout.splitlines()[-1])
                for _ in range(3)]
            et = (min(e[0] for e in et), min(e[1] for e in et), max(e[2] for e in et), et[0][3])
            ours = etch(name, threads)
            assert ours[3] == et[3], f"{name}: etch chose {ours[3][:8]}, ExecuTorch {et[3][:8]}"
            rows.append((name, threads, et, ours))
    print("| program | threads | first prefill ms, ExecuTorch / etch | warm prefill ms, ExecuTorch / etch "
          "| decode tok/s, ExecuTorch / etch | decode etch/ExecuTorch |")
    print("|---|---|---|---|---|---|")
    for name, threads, et, ours in rows:
        print(f"| {name} | {threads} | {et[0]:.3f} / {ours[0]:.3f} | {et[1]:.3f} / {ours[1]:.3f} "
              f"| {et[2]:.0f} / {ours[2]:.0f} | {ours[2] / et[2]:.2f}x |")

if __name__ == "__main__":
    main()
