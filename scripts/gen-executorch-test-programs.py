#!/usr/bin/env python3
"""Generate the programs ExecuTorch's own runtime tests load into
tests/fixtures/executorch_tests/, with ExecuTorch's own exporter script.

ExecuTorch's runtime/executor/test and extension/module/test load `.pte` files that its
build makes with `python -m test.models.export_program --modules ...` (and
`--external-constants` for the `*Program.pte` + `.ptd` pairs). This script runs that
exporter from an ExecuTorch source checkout (the fixtures used main at commit
cff6f4dd32e6), so the modules, seeds and export settings are upstream's, and then records
ExecuTorch's runtime outputs for the two programs whose values depend on random weights.

Run it with the ExecuTorch 1.5.1 / torch 2.14.1 venv, from any directory:
    python scripts/gen-executorch-test-programs.py EXECUTORCH_CHECKOUT [OUT_DIR]
"""
import os
import subprocess
import sys
import tempfile

import torch
from executorch.runtime import Runtime

MODULES = [
    "ModuleAdd", "ModuleAddHalf", "ModuleAddMul", "ModuleBasic",
    "ModuleDynamicCatUnallocatedIO", "ModuleIndex", "ModuleIntBool", "ModuleLinear",
    "ModuleMultipleEntry", "ModuleNoOp", "ModuleSimpleTrain", "ModuleStateful",
]
EXTERNAL = ["ModuleAddMul", "ModuleLinear"]


def export(checkout, out):
    # The exporter imports `..end2end.exported_module`, so it runs as a module of a
    # package laid out as upstream's `test/` directory.
    with tempfile.TemporaryDirectory() as pkg_root:
        pkg = os.path.join(pkg_root, "upstream_test")
        for sub in ("models", "end2end"):
            os.makedirs(os.path.join(pkg, sub))
            open(os.path.join(pkg, sub, "__init__.py"), "w").close()
        open(os.path.join(pkg, "__init__.py"), "w").close()
        for rel in ("models/export_program.py", "end2end/exported_module.py"):
            with open(os.path.join(checkout, "test", rel)) as src, \
                    open(os.path.join(pkg, rel), "w") as dst:
                dst.write(src.read())
        base = [sys.executable, "-m", "upstream_test.models.export_program", "--outdir", out]
        env = dict(os.environ, PYTHONPATH=pkg_root)
        subprocess.run(base + ["--modules", ",".join(MODULES)], check=True, env=env)
        subprocess.run(base + ["--modules", ",".join(EXTERNAL), "--external-constants"],
                       check=True, env=env)


def record(out, name, inputs):
    with open(os.path.join(out, name + ".pte"), "rb") as fh:
        # The program must outlive the method: its outputs point into the program.
        program = Runtime.get().load_program(fh.read())
    method = program.load_method("forward")
    for k, t in enumerate(inputs):
        t.numpy().tofile(os.path.join(out, f"{name}.in{k}.bin"))
    for k, t in enumerate(method.execute(list(inputs))):
        t.contiguous().numpy().tofile(os.path.join(out, f"{name}.out{k}.bin"))


def main():
    checkout = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "fixtures", "executorch_tests")
    out = os.path.abspath(out)
    export(checkout, out)
    x = torch.tensor([0.5, -1.0, 2.0])
    record(out, "ModuleLinear", [x])
    record(out, "ModuleSimpleTrain", [x, torch.tensor([1.0, 0.0, 0.0])])


if __name__ == "__main__":
    main()
