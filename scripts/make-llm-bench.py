#!/usr/bin/env python3
"""Makes real-size LLM programs for benchmarking, with ExecuTorch's reference outputs.

The programs are Llama-architecture models with random weights, exported by ExecuTorch
1.5.1's own LLM flow (`python -m executorch.extension.llm.export.export_llm --config
NAME.export.yaml`, as for the fixtures in tests/fixtures/llm), at the sizes people run:

    stories15m_8da4w   stories15m_fp32    dim 288, 6 layers, 6 heads, FFN 768, vocab 32000
    stories110m_8da4w  stories110m_fp32   dim 768, 12 layers, 12 heads, FFN 2048, vocab 32000
    llama1b_8da4w                         Llama 3.2 1B: dim 2048, 16 layers, 32 heads and
                                          8 KV heads, FFN 8192, vocab 128256, RoPE theta
                                          500000 with Llama 3.2's scaled RoPE

Every program: XNNPACK, KV cache with ExecuTorch's custom attention
(`use_sdpa_with_kv_cache`), dynamic prompt length, a context of 512 (max_seq_length and
max_context_length), metadata bos 1 and eos [2]. `_8da4w`: linears as int8 dynamic
activations x 4-bit weights in groups of 32, the embedding 4-bit in groups of 32
(`embedding_quantize: 4,32`); `_fp32`: no quantization, XNNPACK fp32 linears.

Weights: seeded (per shape), trained-like magnitudes: normal std 0.02 for the projections,
1.0 for the token embedding, 1/sqrt(dim) for the output layer (logits of std about 1 at
every size), norm weights 1. The exporter's own initialisation is not used: its output
layer gives all-zero logits, under which every greedy token is a tie.

For each program, ExecuTorch's Python runtime (`executorch.runtime`, one thread) runs a
fixed 30-token prompt at position 0, then 16 greedy decode steps, and the results are
written in the format of tests/fixtures/llm/*.llm.yaml: NAME.llm.yaml (prompt,
greedy_tokens, steps) and NAME.stepK.logits.bin (float32 little-endian [vocab]).
NAME.llm.yaml also gives split_prompt_difference: ExecuTorch against itself, the step 0
logits against those of the same prompt sent in two calls, the noise that summation order
alone makes in this model's logits (for 8da4w, where it passes through the activations'
quantization, far above float rounding).
scripts/check-llm-bench.py compares etch with them; scripts/bench-llm.py times both.

The cache, outside git: $ETCH_BENCH_CACHE/llm, by default ~/.cache/etch-bench/llm. It
holds NAME.pte, NAME.export.yaml (the config used), NAME.llm.yaml and the logits files;
the random checkpoints are written under work/ and removed once their programs exist.

Usage, with a venv holding ExecuTorch 1.5.1 and torch 2.14.1:

    /tmp/et/bin/python scripts/make-llm-bench.py                 # all, small ones first
    /tmp/et/bin/python scripts/make-llm-bench.py --only stories15m_8da4w
    /tmp/et/bin/python scripts/make-llm-bench.py --force         # rebuild what exists

A program whose .pte and .llm.yaml both exist is skipped (a .pte without its reference
only gets the reference). The 1B export takes about half an hour and over 10 GB of memory.
"""
import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import yaml

CONTEXT = 512
PROMPT_LEN = 30
DECODE_STEPS = 16
METADATA = '{"get_bos_id":1, "get_eos_ids":[2]}'

# Per shape: the params.json the exporter reads, its model_class (which decides the RoPE
# scaling: llama3_2 gets Llama 3.2's factor of 32), and the FFN width those params must
# give (checked against the exporter's own ModelArgs).
SHAPES = {
    "stories15m": dict(
        params=dict(dim=288, n_layers=6, n_heads=6, n_kv_heads=6, vocab_size=32000,
                    multiple_of=32, norm_eps=1e-5),
        model_class="stories110m", hidden=768),
    "stories110m": dict(
        params=dict(dim=768, n_layers=12, n_heads=12, n_kv_heads=12, vocab_size=32000,
                    multiple_of=32, norm_eps=1e-5),
        model_class="stories110m", hidden=2048),
    "llama1b": dict(
        # Llama 3.2 1B's own params.json: 2/3 x 4 x 2048 x 1.5, rounded up to 256 = 8192.
        params=dict(dim=2048, n_layers=16, n_heads=32, n_kv_heads=8, vocab_size=128256,
                    ffn_dim_multiplier=1.5, multiple_of=256, norm_eps=1e-5,
                    rope_theta=500000.0, use_scaled_rope=True),
        model_class="llama3_2", hidden=8192),
}

QUANT = {
    "8da4w": {"qmode": "8da4w", "group_size": 32, "embedding_quantize": "4,32"},
    "fp32": {},
}

# Small ones first, so that a failure on the 1B export leaves the others usable.
PROGRAMS = [
    ("stories15m_8da4w", "stories15m", "8da4w"),
    ("stories15m_fp32", "stories15m", "fp32"),
    ("stories110m_8da4w", "stories110m", "8da4w"),
    ("stories110m_fp32", "stories110m", "fp32"),
    ("llama1b_8da4w", "llama1b", "8da4w"),
]


def cache_dir():
    root = os.environ.get("ETCH_BENCH_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "etch-bench"
    return base / "llm"


def prompt():
    # Ids below 512 are valid in every vocabulary here, the fixtures' included.
    rng = random.Random(30)
    return [1] + [rng.randrange(3, 512) for _ in range(PROMPT_LEN - 1)]


def write_checkpoint(shape, path):
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs

    spec = SHAPES[shape]
    args = ModelArgs(**spec["params"])
    if args.hidden_dim != spec["hidden"]:
        sys.exit(f"{shape}: the params give an FFN of {args.hidden_dim}, not {spec['hidden']}")
    # Only the parameter names and shapes are needed: no memory behind them.
    with torch.device("meta"):
        model = construct_transformer(args)
    gen = torch.Generator().manual_seed(zlib.crc32(shape.encode()))
    dim = spec["params"]["dim"]
    state = {}
    for name, p in model.named_parameters():
        if name.endswith("norm.weight"):
            state[name] = torch.ones(p.shape)
            continue
        std = {"tok_embeddings.weight": 1.0, "output.weight": 1 / math.sqrt(dim)}.get(name, 0.02)
        state[name] = torch.randn(p.shape, generator=gen) * std
    torch.save(state, path)


def export_config(name, shape, quant, work):
    return {
        "base": {
            "model_class": SHAPES[shape]["model_class"],
            "checkpoint": str(work / f"{shape}.pth"),
            "params": str(work / f"{shape}.params.json"),
            "metadata": METADATA,
        },
        "model": {"dtype_override": "fp32", "use_kv_cache": True, "use_sdpa_with_kv_cache": True},
        "export": {
            "max_seq_length": CONTEXT,
            "max_context_length": CONTEXT,
            # A name ending in .pte is used verbatim: the program lands in work/ and is
            # moved into the cache only once complete.
            "output_name": str(work / f"{name}.pte"),
        },
        "quantization": QUANT[quant],
        "backend": {"xnnpack": {"enabled": True, "extended_ops": True}},
    }


def export(name, shape, quant, cache, work):
    checkpoint = work / f"{shape}.pth"
    if not checkpoint.exists():
        print(f"{shape}: writing a random checkpoint", flush=True)
        (work / f"{shape}.params.json").write_text(json.dumps(SHAPES[shape]["params"]))
        write_checkpoint(shape, work / f"{shape}.pth.partial")
        (work / f"{shape}.pth.partial").rename(checkpoint)
    config = cache / f"{name}.export.yaml"
    config.write_text(yaml.safe_dump(export_config(name, shape, quant, work), sort_keys=False))
    print(f"{name}: exporting", flush=True)
    # Hydra writes its run logs under the working directory: keep them in work/.
    run_dir = work / f"{name}.hydra"
    run_dir.mkdir(exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "executorch.extension.llm.export.export_llm", "--config",
         str(config)],
        cwd=run_dir, check=True)
    (work / f"{name}.pte").rename(cache / f"{name}.pte")
    shutil.rmtree(run_dir, ignore_errors=True)


def reference(name, shape, quant, cache):
    import torch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: ops)
    import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed:: ops)
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime

    print(f"{name}: recording ExecuTorch's reference", flush=True)
    # One thread: the reference does not depend on the machine's core count.
    portable_lib._unsafe_reset_threadpool(1)
    method = Runtime.get().load_program(cache / f"{name}.pte").load_method("forward")
    tokens, pos, steps, greedy = prompt(), 0, [], []
    for k in range(DECODE_STEPS + 1):
        logits = method.execute([torch.tensor([tokens]), torch.tensor([pos])])[0][0]
        logits = logits.to(torch.float32).contiguous()
        file = f"{name}.step{k}.logits.bin"
        (cache / file).write_bytes(logits.numpy().astype("<f4").tobytes())
        steps.append({"tokens": tokens, "input_pos": pos, "logits": file,
                      "logits_std": float(logits.std())})
        greedy.append(int(logits.argmax()))
        if k == 0:
            first = logits
        pos += len(tokens)
        tokens = [greedy[-1]]
    # ExecuTorch against itself: the prompt in two calls. The same function of the same
    # tokens, with other summation orders; how far that alone moves the logits is the
    # scale against which another runtime's differences are judged.
    half = PROMPT_LEN // 2
    method.execute([torch.tensor([prompt()[:half]]), torch.tensor([0])])
    split = method.execute([torch.tensor([prompt()[half:]]), torch.tensor([half])])[0][0]
    split_difference = float((split - first).abs().max() / first.abs().max())
    tolerance = (
        "fp32: the logits within 1e-4 relative to max|logits|; greedy tokens identical"
        if quant == "fp32" else
        "8da4w: activations are quantized per token at run time (asymmetric int8), so a "
        "float difference far below 1e-6 can move one activation by one quantization "
        "step, and the step's error grows through the layers (see split_prompt): report "
        "the largest difference relative to max|logits| and the greedy tokens that "
        "agree; a token chosen differently where ExecuTorch's top two logits are closer "
        "than that difference is a near tie, not an error")
    record = {
        "program": f"{name}.pte",
        "method": "forward",
        "prompt": prompt(),
        "greedy_tokens": greedy,
        "steps": steps,
        "inputs": "tokens int64 [1, n], input_pos int64 [1]",
        "split_prompt_difference": split_difference,
        "split_prompt": f"ExecuTorch against itself: max|difference| / max|logits| between "
                        f"the step 0 logits and those of the prompt in two calls ({half} "
                        f"tokens at position 0, then {PROMPT_LEN - half} at {half}), the "
                        f"float noise of summation order through this model",
        "tolerance": tolerance,
        "max_context_length": CONTEXT,
        "params": SHAPES[shape]["params"],
        "weights": "random, seeded: normal std 0.02 for projections, 1/sqrt(dim) for the "
                   "output layer, 1.0 for the token embedding, norms 1",
        "made_by": f"ExecuTorch 1.5.1 executorch.extension.llm.export.export_llm with the "
                   f"config in {name}.export.yaml; reference from executorch.runtime, one "
                   f"thread",
    }
    (cache / f"{name}.llm.yaml").write_text(yaml.safe_dump(record, sort_keys=False))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", metavar="NAME", choices=[p[0] for p in PROGRAMS],
                    help="build this program only")
    ap.add_argument("--force", action="store_true", help="rebuild programs that exist")
    args = ap.parse_args()
    cache = cache_dir()
    work = cache / "work"
    work.mkdir(parents=True, exist_ok=True)
    todo = [p for p in PROGRAMS if args.only in (None, p[0])]
    exports = [n for n, _, _ in todo if args.force or not (cache / f"{n}.pte").exists()]
    for i, (name, shape, quant) in enumerate(todo):
        pte, record = cache / f"{name}.pte", cache / f"{name}.llm.yaml"
        if name in exports:
            record.unlink(missing_ok=True)
            export(name, shape, quant, cache, work)
        if not record.exists():
            reference(name, shape, quant, cache)
        print(f"{name}: {pte} ({pte.stat().st_size / 2**20:.1f} MiB)", flush=True)
        # The checkpoint stays while a later export of the same shape needs it.
        if not any(s == shape and n in exports for n, s, _ in todo[i + 1:]):
            for f in (work / f"{shape}.pth", work / f"{shape}.params.json"):
                f.unlink(missing_ok=True)
    print(f"cache: {cache}")


if __name__ == "__main__":
    main()
