#!/usr/bin/env python3
"""Export a handful of programs with an older ExecuTorch release, and record that
release's own runtime outputs, into tests/fixtures/older/<version>/.

ExecuTorch promises that a `.pte` keeps loading on later runtimes; these fixtures check
that etch runs files written by earlier exporters. Each release needs its own torch:
1.0.x with torch 2.9, 1.2.0 with torch 2.11, 1.4.x with torch 2.13 (the pins in each
wheel's metadata). The cases are an MLP, a small CNN, a transformer block and the MLP
lowered to XNNPACK, all float32, exported through the default flow
`torch.export.export` -> `to_edge` (or `to_edge_transform_and_lower` with the XNNPACK
partitioner) -> `to_executorch`. The expected outputs are the release's own Python
runtime (`executorch.runtime`) on seeded inputs.

Run it with a Python environment that has that release of `executorch` and its torch:
    python scripts/gen-older-fixtures.py [OUT_ROOT]
"""
import os
import sys

import torch
import yaml
from executorch.exir import to_edge, to_edge_transform_and_lower
from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
from executorch.runtime import Runtime
from importlib.metadata import version


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))

    def forward(self, x):
        return self.net(x)


class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv1(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


class TransformerBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = torch.nn.TransformerEncoderLayer(
            d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.block(x)


CASES = [
    ("mlp", Mlp, (4, 16), False),
    ("small_cnn", SmallCnn, (1, 3, 16, 16), False),
    ("transformer_block", TransformerBlock, (2, 6, 32), False),
    ("mlp_xnnpack", Mlp, (4, 16), True),
]


def main():
    release = version("executorch")
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "older")
    out = os.path.join(root, release)
    os.makedirs(out, exist_ok=True)
    for name, cls, shape, xnnpack in CASES:
        torch.manual_seed(0)
        model = cls().eval()
        x = torch.randn(*shape)
        ep = torch.export.export(model, (x,))
        if xnnpack:
            edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
        else:
            edge = to_edge(ep)
        buffer = edge.to_executorch().buffer
        with open(os.path.join(out, name + ".pte"), "wb") as fh:
            fh.write(buffer)
        # The program must outlive the method: its outputs point into the program.
        program = Runtime.get().load_program(buffer)
        got = program.load_method("forward").execute([x.clone()])
        with torch.no_grad():
            eager = model(x)
        drift = float((got[0] - eager).abs().max())
        x.numpy().tofile(os.path.join(out, f"{name}.in0.bin"))
        got[0].contiguous().numpy().tofile(os.path.join(out, f"{name}.out0.bin"))
        spec = {
            "program": name + ".pte", "method": "forward", "rtol": 1e-5, "atol": 1e-5,
            "inputs": [{"dtype": "float32", "sizes": list(shape), "file": f"{name}.in0.bin"}],
            "outputs": [{"dtype": "float32", "sizes": list(got[0].shape),
                         "file": f"{name}.out0.bin"}],
        }
        with open(os.path.join(out, name + ".io.yaml"), "w") as fh:
            yaml.safe_dump(spec, fh, sort_keys=False)
        print(f"{release} {name}: {len(buffer)} bytes, ExecuTorch vs eager {drift:.2e}")


if __name__ == "__main__":
    main()
