#!/usr/bin/env python3
"""Export tests/fixtures/add_relu.pte and its inputs and outputs (see tests/fixtures/README.md).

Run with the ExecuTorch 1.5.1 / torch 2.14.1 venv:
    /path/to/venv/bin/python scripts/gen-add-relu-fixture.py
The program returns `y = relu(h + c)` with `h = relu(a + b)`, then `h`, then `a * b + c`
(an add not followed by a relu): two `aten::add.out` -> `aten::relu.out` runs a downstream
crate's rewrite rule can fuse, and one add it must leave alone. `h` and the inputs live to
the end, so the memory plan puts no relu's out over an input of its add (a fused call
reading and writing the same bytes would be refused at load). Exported with default settings;
the expected outputs are ExecuTorch's own runtime's (eager PyTorch agrees exactly).
The selection file is ExecuTorch's gen_oplist's, run afterwards in tests/fixtures:
    python -m executorch.codegen.tools.gen_oplist \
        --output_path=add_relu.selected_operators.yaml --model_file_path=add_relu.pte
"""
import os

import numpy as np
import torch
import yaml
from executorch.exir import to_edge
from executorch.runtime import Runtime

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures")
NAME = "add_relu"


class AddRelu(torch.nn.Module):
    def forward(self, a, b, c):
        h = torch.relu(a + b)
        return torch.relu(h + c), h, a * b + c


def main():
    torch.manual_seed(0)
    model = AddRelu().eval()
    args = (torch.randn(4, 8), torch.randn(4, 8), torch.randn(4, 8))
    prog = to_edge(torch.export.export(model, args)).to_executorch()
    path = os.path.join(OUT, NAME + ".pte")
    with open(path, "wb") as fh:
        fh.write(prog.buffer)
    method = Runtime.get().load_program(path).load_method("forward")
    got = method.execute(list(args))
    want = model(*args)
    for g, w in zip(got, want):
        assert torch.equal(g, w), "ExecuTorch and eager PyTorch differ"
    spec = {"program": NAME + ".pte", "method": "forward", "rtol": 0.0, "atol": 0.0,
            "inputs": [], "outputs": []}
    for k, t in enumerate(args):
        f = f"{NAME}.in{k}.bin"
        t.numpy().astype(np.float32).tofile(os.path.join(OUT, f))
        spec["inputs"].append({"dtype": "float32", "sizes": list(t.shape), "file": f})
    for k, t in enumerate(got):
        f = f"{NAME}.out{k}.bin"
        t.numpy().astype(np.float32).tofile(os.path.join(OUT, f))
        spec["outputs"].append({"dtype": "float32", "sizes": list(t.shape), "file": f})
    with open(os.path.join(OUT, NAME + ".io.yaml"), "w") as fh:
        yaml.safe_dump(spec, fh, sort_keys=False)


if __name__ == "__main__":
    main()
