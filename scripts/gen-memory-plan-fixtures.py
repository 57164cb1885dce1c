#!/usr/bin/env python3
"""Export the memory-plan fixtures in tests/fixtures/executorch_tests/ (see its README).

Run with the ExecuTorch 1.5.1 / torch 2.14.1 venv:
    /path/to/venv/bin/python scripts/gen-memory-plan-fixtures.py
Each program is a small MLP (linear, relu, linear, add of the input's sum) exported with
`to_edge(torch.export.export(...)).to_executorch(ExecutorchBackendConfig(
memory_planning_pass=...))`; expected outputs come from eager PyTorch, and each program is
checked against ExecuTorch's own runtime where that runtime can run it.
"""
import os

import torch
import yaml
from executorch.exir import ExecutorchBackendConfig, to_edge
from executorch.exir.passes import MemoryPlanningPass
from executorch.runtime import Runtime

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "executorch_tests")


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(4, 8)
        self.b = torch.nn.Linear(8, 3)

    def forward(self, x, y):
        return self.b(torch.relu(self.a(x))) + y, x * 2.0


class InputsInArena2(MemoryPlanningPass):
    """Plans the graph inputs into arena (mem_id) 2 and everything else into arena 1, as
    ExecuTorch's multi-pool tests do by giving specs a mem_id before planning (the greedy
    algorithm keeps a preset mem_id)."""

    def run(self, graph_module, graph_signature=None):
        for node in graph_module.graph.nodes:
            spec = node.meta.get("spec")
            if spec is None or not hasattr(spec, "mem_id"):
                continue
            if node.op == "placeholder" and getattr(spec, "const", False) is False:
                spec.mem_id = 2
            elif getattr(spec, "const", False) is False:
                spec.mem_id = 1
        return super().run(graph_module, graph_signature)


def export(name, planning, readme):
    torch.manual_seed(0)
    model = Mlp().eval()
    args = (torch.randn(2, 4), torch.randn(2, 3))
    ep = torch.export.export(model, args)
    prog = to_edge(ep).to_executorch(ExecutorchBackendConfig(memory_planning_pass=planning))
    with open(os.path.join(OUT, name + ".pte"), "wb") as fh:
        fh.write(prog.buffer)
    want = model(*args)
    plan = prog.executorch_program.execution_plan[0]
    spec = {"program": name + ".pte", "method": "forward", "rtol": 1.3e-6, "atol": 1e-5,
            "non_const_buffer_sizes": list(plan.non_const_buffer_sizes),
            "inputs": [], "outputs": []}
    for kind, ts in (("in", args), ("out", want)):
        for k, t in enumerate(ts):
            f = f"{name}.{kind}{k}.bin"
            t.detach().numpy().tofile(os.path.join(OUT, f))
            spec[kind + "puts"].append({"dtype": "float32", "sizes": list(t.shape), "file": f})
    try:
        got = Runtime.get().load_program(prog.buffer).load_method("forward").execute(list(args))
        agrees = all(torch.allclose(g, w, rtol=1.3e-6, atol=1e-5) for g, w in zip(got, want))
        spec["executorch_agrees"] = bool(agrees)
    except RuntimeError as e:
        spec["executorch_agrees"] = False
        spec["executorch_note"] = f"executorch.runtime cannot run it: {e}"
    with open(os.path.join(OUT, name + ".io.yaml"), "w") as fh:
        yaml.safe_dump(spec, fh, sort_keys=False)
    print(name, spec["non_const_buffer_sizes"], spec.get("executorch_agrees"),
          spec.get("executorch_note", ""), "|", readme)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    export("mem_two_arenas", InputsInArena2(), "inputs in arena 2")
    export("unplanned_inputs", MemoryPlanningPass(alloc_graph_input=False), "")
    export("unplanned_outputs", MemoryPlanningPass(alloc_graph_output=False), "")
    export("unplanned_io", MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False), "")
