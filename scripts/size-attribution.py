#!/usr/bin/env python3
"""Where a binary's code goes: the .text bytes of each kernel (and each dtype instance of
it), each part of the runtime, and the shared helpers, so a user sees what a selection
choice costs.

    scripts/size-attribution.py BINARY [--top N]

BINARY must carry line tables and v0 symbol names (scripts/size-report.sh builds its
symbol copy of each size binary that way; the code is the stripped binary's). Every
instruction is looked up with `addr2line -i`, which gives the chain of functions inlined
at that address, each with its source file. The instruction's bytes go to the outermost
frame in the project's sources (the application's own frames are skipped): a kernel's
file (one operator per file), a runtime module, a shared helper's file. Bytes with no
project frame go to the library they come from (libm, core, compiler builtins).
"""

import argparse
import collections
import re
import subprocess
import sys

# Runtime parts by source file (paths relative to the repository), first match wins.
RUNTIME_PARTS = [
    ("et-runtime/src/prim_ops/", "prim ops"),
    ("et-runtime/src/etdump/", "profiler (etdump)"),
    ("et-schema/src/verify/", "verifier"),
    ("et-runtime/src/method/execute.rs", "executor"),
    ("et-runtime/src/method/trace.rs", "executor"),
    ("et-runtime/src/method/mod.rs", "executor"),
    ("et-runtime/src/kernel/args.rs", "executor"),
    ("et-runtime/src/kernel/outs.rs", "executor"),
    ("et-runtime/src/kernel/context.rs", "executor"),
    ("et-runtime/src/method/", "method builder (load_method)"),
    ("et-runtime/src/registry.rs", "method builder (load_method)"),
    ("et-runtime/src/kernel/", "method builder (load_method)"),
    ("et-runtime/src/selected.rs", "method builder (load_method)"),
    ("et-runtime/src/tensor.rs", "tensors and values"),
    ("et-runtime/src/value.rs", "tensors and values"),
    ("et-runtime/src/scalar.rs", "tensors and values"),
    ("et-runtime/src/memory.rs", "tensors and values"),
    ("et-runtime/src/", "program loader"),
    ("et-schema/src/", "program loader"),
]

KERNEL_ROOT = "et-ops/src/"
BACKEND_ROOT = "et-xnnpack/src/"
SKIPPED_ROOTS = ("examples/",)


def instructions(binary):
    """(address, size) of every instruction in the executable sections."""
    out = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", binary],
        check=True, capture_output=True, text=True,
    ).stdout
    addrs = [int(m.group(1), 16) for m in re.finditer(r"^\s+([0-9a-f]+):", out, re.M)]
    sections = subprocess.run(
        ["objdump", "-h", binary], check=True, capture_output=True, text=True
    ).stdout
    ends = []
    for m in re.finditer(r"^\s*\d+\s+(\S+)\s+([0-9a-f]+)\s+([0-9a-f]+)", sections, re.M):
        ends.append((int(m.group(3), 16), int(m.group(3), 16) + int(m.group(2), 16)))
    result = []
    for i, a in enumerate(addrs):
        nxt = addrs[i + 1] if i + 1 < len(addrs) else None
        end = next((e for s, e in ends if s <= a < e), a + 1)
        if nxt is None or nxt > end or nxt <= a:
            nxt = end
        result.append((a, nxt - a))
    return result


def frames(binary, addrs):
    """For each address, its inline chain, innermost first: [(function, file)]."""
    text = "\n".join(hex(a) for a in addrs) + "\n"
    out = subprocess.run(
        ["addr2line", "-e", binary, "-f", "-i", "-C", "-a"],
        input=text, check=True, capture_output=True, text=True,
    ).stdout.split("\n")
    chains, chain, i = [], None, 0
    while i < len(out):
        line = out[i]
        if line.startswith("0x"):
            chain = []
            chains.append(chain)
            i += 1
            continue
        if chain is not None and line and i + 1 < len(out):
            chain.append((line, out[i + 1].rsplit(":", 1)[0]))
            i += 2
            continue
        i += 1
    return chains


def relative(path, root):
    return path[len(root):] if root and path.startswith(root) else None


DTYPES = ("f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
          "u64", "Bool", "bool", "C32", "C64")


def generic_dtype(function):
    """The element type among a function's generic arguments (`add_impl::<f32>`,
    `map<i64, ...>`), if any."""
    for args in re.findall(r"<([^<>]*)>", function):
        for token in re.split(r"[\s,;()\[\]&*]+", args):
            token = token.rsplit("::", 1)[-1]
            if token in DTYPES:
                return token
    return None


def pseudo_path(function):
    """For code without line info, a source path guessed from its symbol's module path
    (`et_ops::binary::add::...` -> `et-ops/src/binary/add.rs`)."""
    m = re.match(r"^<?(et_ops|et_runtime|et_schema|et_xnnpack)::((?:\w+::)*?\w+)(?:::|$)", function)
    if not m:
        return None
    crate = m.group(1).replace("_", "-")
    modules = [p for p in m.group(2).split("::") if p and p[0].islower()][:2]
    return f"{crate}/src/" + "/".join(modules) + ".rs"


def wrapper_dtype(function):
    m = re.search(r"__et_wrapper_(\w+)", function)
    return m.group(1) if m else None


_REGISTERS = {}


def registers_kernels(root, path):
    """Whether the source file registers a kernel (`#[kernel(`): an operator's file, not a
    helper of its family."""
    if path not in _REGISTERS:
        try:
            with open(root + path, encoding="utf-8") as f:
                _REGISTERS[path] = "#[kernel(" in f.read()
        except OSError:
            _REGISTERS[path] = True
    return _REGISTERS[path]


def classify(chain, root):
    """(group, name, instance) for one instruction's inline chain."""
    project = [
        (f, relative(p, root) or pseudo_path(f))
        for f, p in reversed(chain)
        if relative(p, root) or pseudo_path(f)
    ]
    application = [f for f, p in project if p.startswith(SKIPPED_ROOTS)]
    project = [(f, p) for f, p in project if not p.startswith(SKIPPED_ROOTS)]
    if not project and application:
        return ("other", "the application (main, I/O)", None)
    if not project:
        function = chain[-1][0] if chain else "??"
        if function.startswith("libm::") or re.match(r"^(ceil|floor|fmod|round|trunc|exp|log|pow|sin|cos|tan)f?$", function):
            return ("other", "libm", None)
        if function.startswith("compiler_builtins") or function.startswith("__"):
            return ("other", "compiler builtins", None)
        if function.startswith(("core::", "alloc::", "<core::", "<alloc::", "<[", "<&", "<usize", "<u", "<i", "<f")) or "<core::" in function:
            return ("other", "core library", None)
        if function == "??":
            return ("other", "padding and unattributed", None)
        return ("other", "other: " + function.split("::")[0][:40], None)
    function, path = project[0]
    if path.startswith(KERNEL_ROOT):
        rel = path[len(KERNEL_ROOT):]
        parts = rel.split("/")
        family_level = len(parts) == 1 or (len(parts) == 2 and parts[1] == "mod.rs")
        helper = not registers_kernels(root, path) and not path.endswith("/")
        if family_level or helper or parts[0].removesuffix(".rs") in ("util", "lib", "gemm"):
            return ("shared", "et-ops/" + "/".join(parts[:2]).removesuffix(".rs"), None)
        op = "/".join(parts[:2]).removesuffix(".rs")
        instance = wrapper_dtype(function)
        if instance in (None, "fallback"):
            instance = next((d for d in map(generic_dtype, (f for f, _ in project)) if d), None)
        return ("kernel", op, instance or "shared by its dtypes")
    if path.startswith(BACKEND_ROOT):
        rel = path[len(BACKEND_ROOT):].removesuffix(".rs")
        return ("backend", "xnnpack/" + rel, None)
    for prefix, part in RUNTIME_PARTS:
        if path.startswith(prefix):
            return ("runtime", part, None)
    return ("other", path, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--top", type=int, default=25, help="kernels and helpers listed")
    args = parser.parse_args()

    insns = instructions(args.binary)
    chains = frames(args.binary, [a for a, _ in insns])
    if len(chains) != len(insns):
        sys.exit(f"addr2line answered {len(chains)} of {len(insns)} addresses")
    # The repository root as the debug info spells it: the directory holding et-runtime/.
    root = ""
    for chain in chains:
        for _, p in chain:
            m = re.match(r"(.*/)(et-runtime|et-schema|et-ops)/src/", p)
            if m:
                root = m.group(1)
                break
        if root:
            break

    totals = collections.Counter()
    instances = collections.defaultdict(collections.Counter)
    for (_, size), chain in zip(insns, chains):
        group, name, instance = classify(chain, root)
        totals[(group, name)] += size
        if instance:
            instances[name][instance] += size

    def section(title, group, top=None):
        rows = sorted(((v, n) for (g, n), v in totals.items() if g == group), reverse=True)
        if not rows:
            return
        print(f"{title}: {sum(v for v, _ in rows):,} bytes")
        for v, n in rows[:top]:
            extra = ""
            if group == "kernel":
                parts = sorted(instances[n].items(), key=lambda kv: -kv[1])
                extra = "  " + "; ".join(f"{k} {b:,}" for k, b in parts[:6])
                if len(parts) > 6:
                    extra += f"; {len(parts) - 6} more"
            print(f"  {v:>9,}  {n}{extra}")
        if top and len(rows) > top:
            rest = sum(v for v, _ in rows[top:])
            print(f"  {rest:>9,}  ({len(rows) - top} more)")

    total = sum(totals.values())
    print(f"code by part ({total:,} bytes of executable sections, symbol build):")
    section("runtime", "runtime")
    section("kernels (bytes per operator; dtype instances after it)", "kernel", args.top)
    section("kernel helpers shared by several operators", "shared", args.top)
    section("XNNPACK backend", "backend", args.top)
    section("libraries and padding", "other", args.top)


if __name__ == "__main__":
    main()
