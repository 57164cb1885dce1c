#!/usr/bin/env python3
"""Prefill and decode of the LLM fixtures, etch against ExecuTorch's own runtime.

A manual benchmark (the tests never need ExecuTorch). Needs a venv with ExecuTorch:

    python3 -m venv /tmp/et && /tmp/et/bin/pip install executorch==1.5.1 torch==2.14.1
    cargo build --release -p et-cli
    /tmp/et/bin/python scripts/bench-llm.py [ROUNDS]

Both runtimes run pinned to CPU 0 (`taskset -c 0`), one thread, interleaved: for each
program and round, ExecuTorch (a prefill of the 6-token prompt at position 0, then 99
decode calls of one token, three times on one loaded method, best of the three) and then
etch (`etch generate --json`, three runs). Only `forward` calls are timed; ExecuTorch's
figure includes the Python call (measured separately: a few microseconds).
"""
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROMPT = [1, 45, 99, 300, 17, 250]
NEW_TOKENS = 100


def executorch(name):
    import torch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: ops)
    import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed:: ops)
    from executorch.runtime import Runtime

    from executorch.extension.pybindings import portable_lib

    # One thread, as etch's rows (ExecuTorch's pool defaults to the core count).
    portable_lib._unsafe_reset_threadpool(1)
    method = Runtime.get().load_program(ROOT / f"tests/fixtures/llm/{name}.pte").load_method("forward")
    best_prefill = best_decode = float("inf")
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
        best_prefill, best_decode = min(best_prefill, prefill), min(best_decode, decode)
    return best_prefill * 1e3, (NEW_TOKENS - 1) / best_decode, tokens


def etch(name):
    runs = []
    for _ in range(3):
        out = subprocess.run(
            ["taskset", "-c", "0", ROOT / "target/release/etch", "generate",
             ROOT / f"tests/fixtures/llm/{name}.pte", "--prompt-tokens",
             ",".join(map(str, PROMPT)), "--temperature", "0",
             "--max-new-tokens", str(NEW_TOKENS), "--json"],
            check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out))
    prefill = min(r["prefill_ms"] for r in runs)
    decode = max(r["decode_tokens_per_s"] for r in runs)
    return prefill, decode, runs[0]["generated_tokens"]


def main():
    if sys.argv[1:2] == ["--executorch"]:
        print(json.dumps(executorch(sys.argv[2])))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rows = []
    for name in ["llama_tiny_fp32", "llama_tiny_8da4w"]:
        for _ in range(rounds):
            et = json.loads(subprocess.run(
                ["taskset", "-c", "0", sys.executable, __file__, "--executorch", name],
                check=True, capture_output=True, text=True).stdout.splitlines()[-1])
            ours = etch(name)
            assert ours[2] == et[2], f"{name}: etch chose {ours[2][:8]}, ExecuTorch {et[2][:8]}"
            rows.append((name, et[0], et[1], ours[0], ours[1]))
    print("| program | ExecuTorch prefill ms | etch prefill ms | ExecuTorch decode tok/s | etch decode tok/s | decode etch/ExecuTorch |")
    print("|---|---|---|---|---|---|")
    for name, ep, ed, op, od in rows:
        print(f"| {name} | {ep:.3f} | {op:.3f} | {ed:.0f} | {od:.0f} | {od / ed:.2f}x |")


if __name__ == "__main__":
    main()
