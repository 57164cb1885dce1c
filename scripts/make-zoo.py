#!/usr/bin/env python3
"""Exports a zoo of common models for benchmarking etch against ExecuTorch+XNNPACK.

A manual tool (the tests never need it). Needs the venv with ExecuTorch 1.5.1 and
torch 2.14.1 (see scripts/bench-xnnpack.py) plus torchvision and transformers, installed
without letting pip move torch:

    echo torch==2.14.1 > /tmp/torch-pin.txt
    /tmp/et/bin/pip install -c /tmp/torch-pin.txt torchvision transformers
    /tmp/et/bin/python scripts/make-zoo.py                  # every model
    /tmp/et/bin/python scripts/make-zoo.py --only resnet18,gpt2 --force
    /tmp/et/bin/python scripts/make-zoo.py --list

Writes into $ETCH_BENCH_CACHE/zoo (default ~/.cache/etch-bench/zoo), one folder per model:

    NAME/NAME.inK.bin           input K, raw little-endian (what `etch run --input` reads)
    NAME/NAME_fp32.pte          float32, lowered with XnnpackPartitioner
    NAME/NAME_int8.pte          PT2E int8 (XNNPACKQuantizer, symmetric per-channel), lowered
    NAME/NAME_PREC.outK.bin     ExecuTorch's output K for those inputs
    manifest.json               every model: its inputs, and per precision the program,
                                its outputs and "ok", or "failed" with the stage and the
                                error (paths relative to the zoo folder; a program that
                                exported but that ExecuTorch cannot run is kept)

Weights are each architecture's default initialisation under a fixed seed (nothing is
downloaded), with batch-norm statistics from a few seeded random batches; batch 1, eval
mode. Inputs are seeded random tensors, and the int8 programs are calibrated on a few
more. A program already on disk, or already recorded as failed, is skipped unless
--force. Every model is exported in a child process of its own, so that one crashing
exporter is recorded as a failure instead of ending the run. The whole zoo takes about
45 minutes on two cores and 3.5 GB of disk.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

PRECISIONS = ("fp32", "int8")
CALIBRATION_BATCHES = 4
BATCH_NORM_BATCHES, BATCH_NORM_BATCH = 2, 4


def cache_dir():
    base = os.environ.get("ETCH_BENCH_CACHE") or os.path.expanduser("~/.cache/etch-bench")
    return Path(base) / "zoo"


# ---------------------------------------------------------------------------------------
# Models: each builder returns (module, a function seed -> input tuple).


def image(size=224):
    def make(seed):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(1, 3, size, size, generator=g),)

    return make


def tokens(vocab, length=128, mask=False):
    def make(seed):
        g = torch.Generator().manual_seed(seed)
        ids = torch.randint(0, vocab, (1, length), generator=g, dtype=torch.long)
        if not mask:
            return (ids,)
        # A padded batch of one: the last eighth of the positions are masked out, so
        # the mask takes part in the computation instead of being all ones.
        m = torch.ones(1, length, dtype=torch.long)
        m[:, length - length // 8:] = 0
        return (ids, m)

    return make


def audio(samples=16000):
    def make(seed):
        g = torch.Generator().manual_seed(seed)
        return (torch.randn(1, samples, generator=g),)

    return make


def torchvision_model(name, size=224, **kwargs):
    def build():
        import torchvision

        return getattr(torchvision.models, name)(weights=None, **kwargs), image(size)

    return build


def vit_tiny():
    from torchvision.models import VisionTransformer

    m = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3,
                          hidden_dim=192, mlp_dim=768)
    # torchvision starts the classifier at zero (for fine-tuning), which would make every
    # output 0 and any two runtimes agree.
    torch.nn.init.normal_(m.heads.head.weight, std=0.02)
    return m, image()


class FirstOutput(torch.nn.Module):
    """Makes a module whose output is a dict or a Hugging Face ModelOutput give one tensor
    (the first field, or `key`): the program's output list is then that tensor alone."""

    def __init__(self, inner, key=None):
        super().__init__()
        self.inner = inner
        self.key = key

    def forward(self, *args):
        out = self.inner(*args)
        return out[self.key] if self.key is not None else out[0]


def deeplabv3():
    import torchvision

    m = torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
        weights=None, weights_backbone=None, aux_loss=False)
    return FirstOutput(m, "out"), image()


def hf(model_class, config_class, make_inputs, **config):
    def build():
        import transformers

        cfg = getattr(transformers, config_class)(**config)
        # Eager attention: the plain matmul-softmax-matmul graph every runtime lowers the
        # same way, rather than whichever fused kernel this transformers release picks.
        cfg._attn_implementation = "eager"
        m = getattr(transformers, model_class)(cfg)
        return FirstOutput(m), make_inputs

    return build


MODELS = {
    "resnet18": torchvision_model("resnet18"),
    "resnet50": torchvision_model("resnet50"),
    "mobilenet_v2": torchvision_model("mobilenet_v2"),
    "mobilenet_v3_large": torchvision_model("mobilenet_v3_large"),
    "efficientnet_b0": torchvision_model("efficientnet_b0"),
    "regnet_y_400mf": torchvision_model("regnet_y_400mf"),
    "shufflenet_v2_x1_0": torchvision_model("shufflenet_v2_x1_0"),
    "squeezenet1_1": torchvision_model("squeezenet1_1"),
    "densenet121": torchvision_model("densenet121"),
    "inception_v3": torchvision_model("inception_v3", size=299, aux_logits=False,
                                      init_weights=True),
    "convnext_tiny": torchvision_model("convnext_tiny"),
    "vit_tiny": vit_tiny,
    "swin_t": torchvision_model("swin_t"),
    "deeplabv3_mobilenet_v3_large": deeplabv3,
    # BERT-base, DistilBERT and MobileBERT shapes: the configs' defaults. Their output is
    # the last hidden state (1x128xhidden), which says more about accuracy than a head.
    "bert_base": hf("BertModel", "BertConfig", tokens(30522, mask=True)),
    "distilbert": hf("DistilBertModel", "DistilBertConfig", tokens(30522, mask=True)),
    "mobilebert": hf("MobileBertModel", "MobileBertConfig", tokens(30522, mask=True)),
    # GPT-2 small with its LM head, whole sequence at once, no KV cache.
    "gpt2": hf("GPT2LMHeadModel", "GPT2Config", tokens(50257), use_cache=False),
    # wav2vec2-base (the config's defaults) on one second of 16 kHz audio.
    "wav2vec2_base": hf("Wav2Vec2Model", "Wav2Vec2Config", audio()),
}


# ---------------------------------------------------------------------------------------
# Export of one model (runs in a child process).


def save(tensor, path):
    import numpy as np

    a = tensor.detach().contiguous().numpy()
    a.astype(a.dtype.newbyteorder("<"), copy=False).tofile(path)
    record = {"file": f"{path.parent.name}/{path.name}", "dtype": str(a.dtype),
              "shape": list(a.shape)}
    if a.dtype.kind == "f" and a.size:
        record["max_abs"] = float(abs(a).max())
    return record


def lower(exported):
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    return to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()


def export_fp32(model, example):
    return lower(torch.export.export(model, example))


def export_int8(model, example, make_inputs):
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    graph = torch.export.export(model, example).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = integer_constants_back(prepare_pt2e(graph, quantizer))
    for seed in range(2, 2 + CALIBRATION_BATCHES):
        prepared(*make_inputs(seed))
    converted = convert_pt2e(prepared)
    return lower(torch.export.export(converted, example))


def settle_batch_norms(model, make_inputs):
    """Gives batch norms the running statistics of seeded random inputs.

    Fresh batch norms have mean 0 and variance 1, so in eval mode they pass activations
    through unscaled, and a deep network with default init then computes numbers far
    from a trained one's (inception_v3's logits reach 1e12). A few forward passes in
    training mode bring every layer back to unit scale, as training would."""
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.momentum = None  # a plain average over the batches below
    model.train()
    with torch.no_grad():
        for seed in range(100, 100 + BATCH_NORM_BATCHES):
            batch = [make_inputs(seed * 10 + k) for k in range(BATCH_NORM_BATCH)]
            model(*(torch.cat(parts) for parts in zip(*batch)))


def integer_constants_back(graph):
    """Gives back their integer dtype to the scalars of integer adds and multiplies.

    XNNPACKQuantizer's annotation pass turns every scalar operand of `aten.add.Tensor`
    and `aten.mul.Tensor` into a float32 constant, integer arithmetic included: the
    transformers' index computations (`arange(n) + 0` building attention-mask and
    position indices) then yield float indices and the calibration run fails."""
    for node in graph.graph.nodes:
        if node.op != "get_attr" or not node.target.startswith("_tensor_constant"):
            continue
        value = getattr(graph, node.target)
        wanted = {u.meta["val"].dtype for u in node.users
                  if isinstance(u.meta.get("val"), torch.Tensor)
                  and not u.meta["val"].dtype.is_floating_point}
        if value.is_floating_point() and len(wanted) == 1:
            setattr(graph, node.target, value.to(wanted.pop()))
    return graph


def run_executorch(buffer, example):
    """ExecuTorch's outputs for `example`. Its runtime says why a load fails only in its
    C++ log on file descriptor 2, so that log is caught and its failure lines are added
    to the exception's message."""
    from executorch.runtime import Runtime

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 2)
        try:
            method = Runtime.get().load_program(buffer).load_method("forward")
            return method.execute(list(example))
        except Exception as e:
            log.seek(0)
            why = [l.strip() for l in log.read().decode(errors="replace").splitlines()
                   if "fail" in l.lower() and "cpuinfo" not in l]
            raise RuntimeError(f"{e} ({'; '.join(why)})" if why else str(e)) from e
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def export_one(name, precisions, out):
    """Exports `name` in each of `precisions`; prints its manifest entry as JSON."""
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model, make_inputs = MODELS[name]()
    settle_batch_norms(model, make_inputs)
    model = model.eval()
    example = make_inputs(1)
    entry = {"inputs": [save(t, out / f"{name}.in{k}.bin") for k, t in enumerate(example)],
             "programs": {}}
    for precision in precisions:
        started = time.time()
        record = {"file": f"{name}/{name}_{precision}.pte"}
        stage = "export"
        (out / f"{name}_{precision}.pte").unlink(missing_ok=True)
        try:
            with torch.no_grad():
                if precision == "fp32":
                    program = export_fp32(model, example)
                else:
                    program = export_int8(model, example, make_inputs)
            # Kept even when ExecuTorch then cannot run it: etch may, and the file shows why.
            (out / f"{name}_{precision}.pte").write_bytes(program.buffer)
            record["bytes"] = len(program.buffer)
            stage = "ExecuTorch's run of the exported program"
            outputs = run_executorch(program.buffer, example)
            files = []
            for k, o in enumerate(outputs):
                if not isinstance(o, torch.Tensor):
                    raise TypeError(f"output {k} is a {type(o).__name__}, not a tensor")
                files.append(save(o, out / f"{name}_{precision}.out{k}.bin"))
            record.update(status="ok", outputs=files)
        except Exception as e:  # noqa: BLE001 - every failure is recorded, not raised
            traceback.print_exc()
            message = f"{type(e).__name__}: {e}".strip().splitlines()[0][:500]
            record.update(status="failed", error=f"{stage}: {message}")
        record["export_s"] = round(time.time() - started, 1)
        entry["programs"][precision] = record
        print(f"{name} {precision}: {record['status']} in {record['export_s']} s"
              + (f" ({record['error']})" if record["status"] == "failed" else ""),
              file=sys.stderr, flush=True)
    print(json.dumps(entry))


# ---------------------------------------------------------------------------------------
# Driver.


def load_manifest(root):
    path = root / "manifest.json"
    if path.exists():
        return json.loads(path.read_text())
    return {"models": {}}


def write_manifest(root, manifest):
    from importlib.metadata import version

    manifest["versions"] = {p: version(p) for p in ("executorch", "torch", "torchvision",
                                                     "transformers")}
    order = {name: k for k, name in enumerate(MODELS)}
    manifest["models"] = dict(sorted(manifest["models"].items(),
                                     key=lambda kv: order.get(kv[0], len(order))))
    tmp = root / "manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1) + "\n")
    tmp.replace(root / "manifest.json")


def wanted(root, entry, name, force):
    """The precisions of `name` still to export."""
    if force or entry is None:
        return list(PRECISIONS)
    todo = []
    for precision in PRECISIONS:
        record = entry.get("programs", {}).get(precision)
        if record is None:
            todo.append(precision)
        elif record["status"] == "ok" and not (root / record["file"]).exists():
            todo.append(precision)
    return todo


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated model names")
    parser.add_argument("--force", action="store_true",
                        help="export again even if the program exists or failed before")
    parser.add_argument("--list", action="store_true", help="print the model names")
    parser.add_argument("--child", nargs=2, metavar=("NAME", "PRECISIONS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    root = cache_dir()
    if args.child:
        name, precisions = args.child
        export_one(name, precisions.split(","), root / name)
        return
    if args.list:
        print("\n".join(MODELS))
        return
    names = args.only.split(",") if args.only else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s): {', '.join(unknown)}; --list shows them")
    root.mkdir(parents=True, exist_ok=True)
    for name in names:
        manifest = load_manifest(root)
        entry = manifest["models"].get(name)
        todo = wanted(root, entry, name, args.force)
        if not todo:
            print(f"{name}: cached", file=sys.stderr)
            continue
        child = subprocess.run([sys.executable, __file__, "--child", name, ",".join(todo)],
                               stdout=subprocess.PIPE, text=True)
        if child.returncode == 0 and child.stdout.strip():
            fresh = json.loads(child.stdout.strip().splitlines()[-1])
        else:
            # The child died (a crash in an exporter, or out of memory): every precision
            # it was asked for is recorded as failed with its exit status.
            why = f"exporter process exited with status {child.returncode}"
            fresh = {"inputs": (entry or {}).get("inputs", []),
                     "programs": {p: {"file": f"{name}/{name}_{p}.pte", "status": "failed",
                                      "error": why} for p in todo}}
            print(f"{name}: {why}", file=sys.stderr)
        merged = entry or {"programs": {}}
        merged["inputs"] = fresh["inputs"]
        merged["programs"].update(fresh["programs"])
        manifest["models"][name] = merged
        write_manifest(root, manifest)
    summary(load_manifest(root))


def summary(manifest):
    print(f"{'model':<30} " + " ".join(f"{p:<8}" for p in PRECISIONS))
    for name, entry in manifest["models"].items():
        cells = [entry["programs"].get(p, {}).get("status", "-") for p in PRECISIONS]
        print(f"{name:<30} " + " ".join(f"{c:<8}" for c in cells))
        for p in PRECISIONS:
            record = entry["programs"].get(p, {})
            if record.get("status") == "failed":
                print(f"    {p}: {record['error']}")


if __name__ == "__main__":
    main()
