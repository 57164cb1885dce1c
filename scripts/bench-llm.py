#!/usr/bin/env python3
"""LLM prefill, decode, load and memory, etch against ExecuTorch 1.5.1's own runtime.

A manual benchmark (the tests never need ExecuTorch). Needs a venv with ExecuTorch and,
for the real-size programs, the cache scripts/make-llm-bench.py writes:

    python3 -m venv /tmp/et && /tmp/et/bin/pip install executorch==1.5.1 torch==2.14.1
    cargo build --release -p et-cli
    /tmp/et/bin/python scripts/make-llm-bench.py        # once: $ETCH_BENCH_CACHE/llm,
                                                        # by default ~/.cache/etch-bench/llm
    /tmp/et/bin/python scripts/bench-llm.py [--rounds N] [--programs a,b] [--threads 1,2]

Programs: by default every program in the cache (stories15m_8da4w, stories15m_fp32,
stories110m_8da4w, stories110m_fp32, llama1b_8da4w: context 512) and the two fixtures of
tests/fixtures/llm (dim 64, context 128). `--programs` picks by name, cache first.

Both runtimes run with the same thread count, one thread pinned to CPU 0 (`taskset -c 0`)
and two threads on CPUs 0 and 1, in interleaved rounds: each round visits every thread
count and program, ExecuTorch and then etch. The table gives each figure's best round.

ExecuTorch runs in a subprocess of this script (`--executorch`, pinned like etch; its
thread pool set to the row's thread count), through `executorch.runtime` with
`executorch.extension.llm.custom_ops` and `executorch.kernels.quantized` imported for the
`llama::` and `quantized_decomposed::` kernels. One process per round loads the program
and makes, on that one method, the calls listed below; only the `forward` calls are
timed (inputs are built outside them), a few microseconds of each being the Python call.
etch runs as `etch generate --json`, one process per measurement, and reports its own
`forward` times.

Columns (ET: ExecuTorch; "etch/ET": etch's speed over ExecuTorch's, above 1 when etch is
faster, for times as for rates):

- decode tok/s: greedy decode calls of one token, 64 of them after a 30-token prompt
  (positions 30-93). The script also checks that both runtimes chose the same tokens.
- late decode tok/s: 32 decode calls after a 400-token prompt (positions 400-431 of the
  512-token context): attention over a long KV cache.
- bound: the memory-bandwidth ceiling on the decode rate beside it, read bandwidth /
  bytes a decode call must read: every weight of the XNNPACK-delegated layers (the
  linears and the output layer) as the program stores them (the sum of its named data,
  from `etch ops --json`), plus the fp32 KV cache up to the mean position. The token
  embedding (one row read per token), norm weights and RoPE tables are left out. A
  runtime that repacks the weights wider reads more than this (etch keeps 4-bit weights
  at half a byte). The bandwidth is the row's: one core for one thread, two for two.
- prefill 30 / 128 / 500 ms: one `forward` over a prompt of that many tokens at position
  0, warm: ExecuTorch's second of two back-to-back prefills; etch's prefill with
  `--warmup` (which generates once first). 500, not 512: a prompt must leave room in the
  context for the token it produces, and the exporter allows at most max_seq_length - 1
  tokens per call. A prompt that does not fit a program's context is "-".
- load ms: ExecuTorch: `load_program` and `load_method("forward")` timed in its process
  (the interpreter's start and imports not counted). etch, which does not report its
  load: the wall time of `etch generate --max-new-tokens 1` minus the time to first
  token it reports, so process start and exit are counted too.
- TTFT ms: time to first token: the first `forward` after loading (the 30-token prompt,
  cold) and the choice of its token.
- peak RSS MiB: each process's maximum resident set (`wait4`'s ru_maxrss): ExecuTorch's
  one process per round, etch's largest process. The program's pages that were read
  are counted. ExecuTorch's figure includes the Python interpreter and the torch and
  executorch imports (several hundred MiB before any program is loaded).

Read bandwidth is measured here: `numpy.dot(a, a)` over a float32 array (OpenBLAS's
vectorised dot, one thread: one read stream, little arithmetic per byte; over an array
in cache it runs well above the rate it gets from memory, unlike `numpy.sum`), the best
of eight passes: one process on CPU 0 over 1 GiB, then one process on each of CPUs 0 and
1 over 512 MiB each, started together, their rates summed. It is measured before and
after the rounds and the higher figure kept.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests/fixtures/llm"
CPUS = {1: "0", 2: "0,1"}
PREFILLS = (30, 128, 500)
DECODE_PROMPT, DECODE_STEPS = 30, 64
LATE_PROMPT, LATE_STEPS = 400, 32
# Ids below 512 fit every vocabulary here, the fixtures' included.
TOKENS = [1] + random.Random(512).choices(range(3, 512), k=511)


def cache_dir():
    root = os.environ.get("ETCH_BENCH_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "etch-bench"
    return base / "llm"


def fits(info, prompt, new_tokens):
    return prompt <= info["max_seq"] - 1 and prompt + new_tokens <= info["context"]


# ---- ExecuTorch, in its own process --------------------------------------------------

def executorch(path, threads, max_seq, context):
    import torch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: ops)
    import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed:: ops)
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    info = {"max_seq": max_seq, "context": context}
    # ExecuTorch's pool defaults to the core count: the row's thread count, as etch's.
    portable_lib._unsafe_reset_threadpool(threads)
    t0 = time.perf_counter()
    method = Runtime.get().load_program(path).load_method("forward")
    out = {"load_ms": (time.perf_counter() - t0) * 1e3}

    def forward(tokens, pos):
        inputs = [torch.tensor([tokens]), torch.tensor([pos])]
        t0 = time.perf_counter()
        token = int(method.execute(inputs)[0][0].argmax())
        return token, time.perf_counter() - t0

    def decode(token, pos, steps):
        tokens, spent = [], 0.0
        for _ in range(steps):
            token, dt = forward([token], pos)
            tokens.append(token)
            spent, pos = spent + dt, pos + 1
        return tokens, steps / spent

    token, dt = forward(TOKENS[:DECODE_PROMPT], 0)
    out["ttft_ms"] = dt * 1e3
    tokens, out["decode"] = decode(token, DECODE_PROMPT, DECODE_STEPS)
    out["tokens"] = [token] + tokens
    out["prefill"] = {}
    for n in PREFILLS:
        if fits(info, n, 1):
            forward(TOKENS[:n], 0)
            out["prefill"][n] = forward(TOKENS[:n], 0)[1] * 1e3
    out["late"] = None
    if fits(info, LATE_PROMPT, LATE_STEPS + 1):
        token, _ = forward(TOKENS[:LATE_PROMPT], 0)
        out["late"] = decode(token, LATE_PROMPT, LATE_STEPS)[1]
    return out


# ---- processes, measured from outside ------------------------------------------------

def measured(cmd):
    """Runs cmd; its stdout, its peak resident set in bytes and its wall time in s."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=err)
        out = p.stdout.read()
        # wait4, not wait: the rusage of this child alone (RUSAGE_CHILDREN would be the
        # largest of every child so far).
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        p.stdout.close()
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n"
                     f"{err.read().decode(errors='replace')[-3000:]}")
    return out.decode(), usage.ru_maxrss * 1024, wall


def et_round(info, threads):
    out, rss, _ = measured(["taskset", "-c", CPUS[threads], sys.executable, __file__,
                            "--executorch", info["path"], threads, info["max_seq"],
                            info["context"]])
    r = json.loads(out.splitlines()[-1])
    r["prefill"] = {int(n): ms for n, ms in r["prefill"].items()}
    r["rss"] = rss
    return r


def etch_round(info, threads):
    rss = 0

    def generate(prompt, new_tokens, warmup=False):
        nonlocal rss
        out, peak, wall = measured(
            ["taskset", "-c", CPUS[threads], ROOT / "target/release/etch", "generate",
             info["path"], "--prompt-tokens", ",".join(map(str, TOKENS[:prompt])),
             "--temperature", "0", "--max-new-tokens", new_tokens, "--threads", threads,
             "--json"] + (["--warmup"] if warmup else []))
        rss = max(rss, peak)
        return json.loads(out), wall

    r = {}
    cold, wall = generate(DECODE_PROMPT, 1)
    r["ttft_ms"] = cold["time_to_first_token_ms"]
    r["load_ms"] = wall * 1e3 - cold["time_to_first_token_ms"]
    early, _ = generate(DECODE_PROMPT, DECODE_STEPS + 1)
    r["decode"], r["tokens"] = early["decode_tokens_per_s"], early["generated_tokens"]
    r["prefill"] = {n: generate(n, 1, warmup=True)[0]["prefill_ms"]
                    for n in PREFILLS if fits(info, n, 1)}
    r["late"] = None
    if fits(info, LATE_PROMPT, LATE_STEPS + 1):
        r["late"] = generate(LATE_PROMPT, LATE_STEPS + 1)[0]["decode_tokens_per_s"]
    r["rss"] = rss
    return r


# ---- memory bandwidth ----------------------------------------------------------------

def bandwidth_pass(mib, start):
    import numpy as np

    a = np.ones(mib << 18, dtype=np.float32)
    np.dot(a, a)
    # Both processes of a two-core measurement start reading at the same moment.
    time.sleep(max(0.0, start - time.monotonic()))
    best = 0.0
    for _ in range(8):
        t0 = time.perf_counter()
        np.dot(a, a)
        best = max(best, a.nbytes / (time.perf_counter() - t0))
    return best


def bandwidth(cpus):
    """Read bandwidth in bytes/s over the given CPUs, one reading process on each."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    start = time.monotonic() + 3.0
    procs = [subprocess.Popen(["taskset", "-c", cpu, sys.executable, __file__, "--bandwidth",
                               str(1024 // len(cpus)), str(start)],
                              stdout=subprocess.PIPE, text=True, env=env) for cpu in cpus]
    return sum(float(p.communicate()[0].split()[-1]) for p in procs)


# ---- the programs --------------------------------------------------------------------

def program_info(name):
    for d in (cache_dir(), FIXTURES):
        if (d / f"{name}.pte").exists():
            break
    else:
        sys.exit(f"{name}: no {name}.pte in {cache_dir()} or {FIXTURES}")
    export = yaml.safe_load((d / f"{name}.export.yaml").read_text())["export"]
    params = yaml.safe_load((d / f"{name}.llm.yaml").read_text())["params"]
    ops = json.loads(subprocess.run([ROOT / "target/release/etch", "ops", d / f"{name}.pte",
                                     "--json"], check=True, capture_output=True,
                                    text=True).stdout)
    heads = params.get("n_kv_heads") or params["n_heads"]
    return {
        "name": name,
        "path": str(d / f"{name}.pte"),
        "max_seq": export["max_seq_length"],
        "context": export["max_context_length"],
        "weight_bytes": sum(entry["bytes"] for entry in ops["named_data"]),
        # fp32 K and V, each [context, kv heads, head dim] per layer.
        "kv_bytes_per_pos": 2 * params["n_layers"] * heads
                            * (params["dim"] // params["n_heads"]) * 4,
    }


def default_programs():
    cache = sorted((p for p in cache_dir().glob("*.pte")
                    if p.with_name(p.stem + ".llm.yaml").exists()),
                   key=lambda p: p.stat().st_size)
    return ["llama_tiny_fp32", "llama_tiny_8da4w"] + [p.stem for p in cache]


# ---- the table -----------------------------------------------------------------------

def best(rounds, get, pick):
    values = [v for v in (get(r) for r in rounds) if v is not None]
    return pick(values) if values else None


def cell(et, ours, fmt, faster):
    """ "ET / etch | etch/ET speed" for two figures; faster(et, ours) is the ratio."""
    if et is None or ours is None:
        return "- | -"
    return f"{fmt(et)} / {fmt(ours)} | {faster(et, ours):.2f}x"


def table(rows, bw, rounds):
    cpu = next((l.split(":", 1)[1].strip() for l in subprocess.run(
        ["lscpu"], capture_output=True, text=True).stdout.splitlines()
        if l.startswith("Model name")), "unknown CPU")
    rate = lambda et, ours: ours / et  # noqa: E731
    speed = lambda et, ours: et / ours  # noqa: E731
    f0 = lambda v: f"{v:.0f}" if v >= 100 else f"{v:.1f}"  # noqa: E731
    ms = lambda v: f"{v:.1f}" if v >= 10 else f"{v:.2f}"  # noqa: E731
    lines = [
        f"CPU: {cpu}; read bandwidth {bw[1] / 1e9:.1f} GB/s on one core, "
        f"{bw[2] / 1e9:.1f} GB/s on two; {rounds} round(s), best of each; "
        f"ET = ExecuTorch 1.5.1, etch/ET = etch's speed over ExecuTorch's",
        "",
        "| program | threads | decode tok/s ET / etch | etch/ET | bound tok/s "
        "| late decode tok/s ET / etch | etch/ET | bound tok/s "
        + "".join(f"| prefill {n} ms ET / etch | etch/ET " for n in PREFILLS)
        + "| load ms ET / etch | TTFT ms ET / etch | peak RSS MiB ET / etch |",
        "|---|---|" + "---|" * (6 + 2 * len(PREFILLS) + 3),
    ]
    notes = []
    for info, threads, et_rounds, our_rounds in rows:
        e = lambda get, pick: best(et_rounds, get, pick)  # noqa: E731
        o = lambda get, pick: best(our_rounds, get, pick)  # noqa: E731

        def bound(pos):
            return f0(bw[threads] / (info["weight_bytes"] + pos * info["kv_bytes_per_pos"]))

        late_pos = LATE_PROMPT + LATE_STEPS / 2
        late = e(lambda r: r["late"], max)
        cells = [
            info["name"], str(threads),
            cell(e(lambda r: r["decode"], max), o(lambda r: r["decode"], max), f0, rate),
            bound(DECODE_PROMPT + DECODE_STEPS / 2),
            cell(late, o(lambda r: r["late"], max), f0, rate),
            bound(late_pos) if late is not None else "-",
        ]
        for n in PREFILLS:
            cells.append(cell(e(lambda r: r["prefill"].get(n), min),
                              o(lambda r: r["prefill"].get(n), min), ms, speed))
        cells.append(cell(e(lambda r: r["load_ms"], min), o(lambda r: r["load_ms"], min),
                          ms, speed).split(" | ")[0])
        cells.append(cell(e(lambda r: r["ttft_ms"], min), o(lambda r: r["ttft_ms"], min),
                          ms, speed).split(" | ")[0])
        cells.append(cell(e(lambda r: r["rss"], max) / 2**20, o(lambda r: r["rss"], max) / 2**20,
                          lambda v: f"{v:.0f}", speed).split(" | ")[0])
        lines.append("| " + " | ".join(cells) + " |")
        for et, ours in zip(et_rounds, our_rounds):
            n = min(len(et["tokens"]), len(ours["tokens"]))
            if et["tokens"][:n] != ours["tokens"][:n]:
                first = next(i for i in range(n) if et["tokens"][i] != ours["tokens"][i])
                notes.append(f"{info['name']}, {threads} thread(s): the greedy tokens differ "
                             f"from the {first + 1}th of {n} on")
                break
    lines.append("")
    lines += sorted(set(notes)) or ["Both runtimes chose the same greedy tokens."]
    return "\n".join(lines)


def main():
    if sys.argv[1:2] == ["--executorch"]:
        path, threads, max_seq, context = sys.argv[2], *map(int, sys.argv[3:6])
        print(json.dumps(executorch(path, threads, max_seq, context)))
        return
    if sys.argv[1:2] == ["--bandwidth"]:
        print(bandwidth_pass(int(sys.argv[2]), float(sys.argv[3])))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--programs", help="comma-separated names (default: the cache's and "
                                       "the fixtures')")
    ap.add_argument("--threads", default="1,2", help="thread counts, of 1 and 2")
    args = ap.parse_args()
    names = args.programs.split(",") if args.programs else default_programs()
    infos = [program_info(n) for n in names]
    threads = [int(t) for t in args.threads.split(",")]
    print("measuring read bandwidth", file=sys.stderr, flush=True)
    bw = {1: bandwidth(["0"]), 2: bandwidth(["0", "1"])}
    results = {(i["name"], t): ([], []) for i in infos for t in threads}
    for k in range(args.rounds):
        for t in threads:
            for info in infos:
                print(f"round {k + 1}: {info['name']}, {t} thread(s)", file=sys.stderr,
                      flush=True)
                et, ours = results[(info["name"], t)]
                et.append(et_round(info, t))
                ours.append(etch_round(info, t))
    # Again after the rounds: a neighbour on a shared machine lowers a measurement, and
    # the bound is a ceiling, so the higher figure is the one to use.
    print("measuring read bandwidth again", file=sys.stderr, flush=True)
    bw = {1: max(bw[1], bandwidth(["0"])), 2: max(bw[2], bandwidth(["0", "1"]))}
    rows = [(i, t, *results[(i["name"], t)]) for t in threads for i in infos]
    print(table(rows, bw, args.rounds))


if __name__ == "__main__":
    main()
