#!/usr/bin/env python3
"""Checks etch against ExecuTorch's reference on the cached benchmark LLM programs.

The programs and references come from scripts/make-llm-bench.py, in $ETCH_BENCH_CACHE/llm
(by default ~/.cache/etch-bench/llm). Needs only python3 with PyYAML, and etch built:

    cargo build --release -p et-cli
    python3 scripts/check-llm-bench.py [--programs stories15m_8da4w,...] [--threads N]

For every NAME.llm.yaml in the cache (or those named):

- tokens: `etch generate NAME.pte --prompt-tokens PROMPT --temperature 0
  --max-new-tokens 17 --json`, its generated tokens against ExecuTorch's greedy tokens
  (how many agree from the first; a generation etch ended at an end-of-sequence token
  is compared as far as it goes).
- logits: `etch generate` does not print logits, and `etch run` executes one call on a
  freshly loaded method, whose KV cache starts empty. Step 0 is ExecuTorch's own call
  (the prompt at position 0). Step K > 0, a decode call in ExecuTorch, is checked as the
  prefill of the prompt and ExecuTorch's first K greedy tokens at position 0, whose last
  position's logits are the same function of the same tokens: an attention over the
  same keys and values, computed in another order. The figure is
  max|etch - ExecuTorch| / max|ExecuTorch| over the vocabulary.

The "ExecuTorch vs itself" column is the reference's split_prompt_difference: the step 0
logits against ExecuTorch's own for the same prompt sent in two calls, how far summation
order alone moves this model's logits.

Tolerance, as for the fixtures (tests/fixtures/llm/README.md): an fp32 program passes with
every step within 1e-4 and all tokens identical. 8da4w programs quantize activations per
token at run time, so a float difference far below 1e-6 can move an activation by a
quantization step, and the error grows through the layers (compare the "itself" column):
their logit difference is reported. One passes with identical tokens, or where the first
token etch chose differently is a near tie: ExecuTorch's top token leads etch's by no more
than that step's measured difference (etch having seen the same tokens until then).
Exit status 1 if any program fails.
"""
import argparse
import array
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
FP32_TOLERANCE = 1e-4
MAX_MEMORY_MIB = 32768


def cache_dir():
    root = os.environ.get("ETCH_BENCH_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "etch-bench"
    return base / "llm"


def floats(path):
    a = array.array("f")
    a.frombytes(Path(path).read_bytes())
    if sys.byteorder != "little":
        a.byteswap()
    return a


def int64s(values):
    a = array.array("q", values)
    if sys.byteorder != "little":
        a.byteswap()
    return a.tobytes()


def etch(args):
    done = subprocess.run([str(ROOT / "target/release/etch"), *map(str, args)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"etch exited with {done.returncode}")
    return done.stdout


def generated(pte, ref, threads):
    out = json.loads(etch([
        "generate", pte, "--prompt-tokens", ",".join(map(str, ref["prompt"])),
        "--temperature", "0", "--max-new-tokens", len(ref["greedy_tokens"]),
        "--threads", threads, "--json"]))
    return out["generated_tokens"], out["stop"] == "end_of_sequence"


def step_errors(pte, ref, cache, threads):
    """max|etch - ExecuTorch| / max|ExecuTorch| for every step, in order."""
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "pos.bin").write_bytes(int64s([0]))
        for k, step in enumerate(ref["steps"]):
            tokens = ref["prompt"] + ref["greedy_tokens"][:k]
            (tmp / "tokens.bin").write_bytes(int64s(tokens))
            # `etch run` refuses a method whose buffers, as sized from the file, pass
            # --max-memory-mib (4096 by default): the 1B program's sizes come to 13 GB,
            # of which it touches under 3.
            etch(["run", pte, "--input", f"{tmp / 'tokens.bin'}:1x{len(tokens)}",
                  "--input", tmp / "pos.bin", "--threads", threads, "--max-memory-mib",
                  MAX_MEMORY_MIB, "--output-dir", tmp / "out"])
            got, want = floats(tmp / "out/output0.bin"), floats(cache / step["logits"])
            if len(got) != len(want):
                raise RuntimeError(f"step {k}: {len(got)} logits, ExecuTorch has {len(want)}")
            scale = max(abs(x) for x in want)
            errors.append(max(abs(g - w) for g, w in zip(got, want)) / scale)
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", help="comma-separated names (default: every cached one)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    cache = cache_dir()
    if args.programs:
        names = args.programs.split(",")
    else:
        names = sorted((p.name[:-len(".llm.yaml")] for p in cache.glob("*.llm.yaml")),
                       key=lambda n: (cache / f"{n}.pte").stat().st_size)
    if not names:
        sys.exit(f"no programs in {cache}: run scripts/make-llm-bench.py first")
    rows, failed = [], False
    for name in names:
        ref = yaml.safe_load((cache / f"{name}.llm.yaml").read_text())
        pte = cache / ref["program"]
        fp32 = name.endswith("_fp32")
        print(f"{name}: checking", file=sys.stderr, flush=True)
        try:
            got, ended = generated(pte, ref, args.threads)
            errors = step_errors(pte, ref, cache, args.threads)
        except RuntimeError as e:
            rows.append((name, "-", "-", "-", "-", f"etch failed: {e}"))
            failed = True
            continue
        want = ref["greedy_tokens"]
        agree = 0
        while agree < min(len(got), len(want)) and got[agree] == want[agree]:
            agree += 1
        tokens = f"{agree}/{len(want)}"
        if agree == len(want) or (ended and agree == len(got)):
            ok = not fp32 or max(errors) <= FP32_TOLERANCE
            verdict = "pass" if ok else f"FAIL: logits beyond {FP32_TOLERANCE:g}"
            if ended and agree < len(want):
                tokens += " (etch stopped at end of sequence)"
        else:
            # Until the first difference etch was given ExecuTorch's tokens, so that step's
            # measured difference is the scale of the error behind etch's choice there.
            logits = floats(cache / ref["steps"][agree]["logits"])
            margin = (logits[want[agree]] - logits[got[agree]]) / max(abs(x) for x in logits)
            near_tie = not fp32 and margin <= errors[agree]
            ok = near_tie
            verdict = (f"{'pass: a near tie' if near_tie else 'FAIL'} at token {agree + 1}: "
                       f"ExecuTorch's {want[agree]} leads etch's {got[agree]} by "
                       f"{margin:.1e}, the step's difference {errors[agree]:.1e}")
        failed |= not ok
        split = ref.get("split_prompt_difference")
        rows.append((name, tokens, f"{errors[0]:.2e}", f"{max(errors[1:], default=0):.2e}",
                     "-" if split is None else f"{split:.2e}", verdict))
    print(f"etch against ExecuTorch 1.5.1's reference, {cache}, {args.threads} thread(s)\n")
    print("| program | greedy tokens agreeing | step 0 max diff / max abs | steps 1-16 "
          "(as one prefill each) max diff / max abs | ExecuTorch vs itself, prompt split "
          "| result |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
