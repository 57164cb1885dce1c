#!/usr/bin/env python3
"""Exports a torchvision CNN (random weights) int8 through ExecuTorch's documented flow
(PT2E XNNPACKQuantizer, symmetric, per-channel; XnnpackPartitioner) and writes the
program, its input and ExecuTorch's output, for comparison with `etch run`:

    python scripts/export-torchvision-q8.py resnet18 OUT_DIR   # venv with executorch 1.5.1
    etch run OUT_DIR/resnet18_q8.pte --input OUT_DIR/resnet18_q8.in0.bin --output-dir OUT_DIR/etch
    cmp OUT_DIR/etch/output0.bin OUT_DIR/resnet18_q8.out0.bin

Not a test: the files are large and need torchvision; the comparison is manual.
"""
import os
import sys

import numpy as np
import torch
import torchvision
from torch.export import export
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.exir import to_edge_transform_and_lower
from executorch.runtime import Runtime
torch.manual_seed(0)
name, out_dir = sys.argv[1], sys.argv[2]
os.makedirs(out_dir, exist_ok=True)
m = getattr(torchvision.models, name)(weights=None).eval()
x = (torch.randn(1, 3, 224, 224),)
ep = export(m, x).module()
q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
p = prepare_pt2e(ep, q)
for _ in range(4): p(torch.randn(1, 3, 224, 224))
c = convert_pt2e(p)
prog = to_edge_transform_and_lower(export(c, x), partitioner=[XnnpackPartitioner()]).to_executorch()
open(f"{out_dir}/{name}_q8.pte", "wb").write(prog.buffer)
x[0].numpy().astype(np.float32).tofile(f"{out_dir}/{name}_q8.in0.bin")
rt = Runtime.get()
meth = rt.load_program(prog.buffer).load_method("forward")
out = meth.execute([x[0]])[0]
out.numpy().astype(np.float32).tofile(f"{out_dir}/{name}_q8.out0.bin")
print(name, "exported", out.shape)
