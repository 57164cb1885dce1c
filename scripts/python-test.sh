#!/usr/bin/env bash
# The Python package (et-python): builds the `etch` wheel with maturin, installs it in a
# venv under target/ beside ExecuTorch's own Python runtime, and runs its tests, which
# compare the two on the reference programs.
#
# The venv (target/python-venv, or $ETCH_PYTHON_VENV: about 6 GB with torch's CUDA
# libraries, so a machine may keep one outside its checkouts) is kept between runs, and
# pip only checks what is already installed, so a second run only rebuilds the wheel.
# torch comes from PyPI with its CUDA dependencies: `import torch` (which executorch's
# runtime does) needs them even on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${ETCH_PYTHON_VENV:-target/python-venv}
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet "maturin>=1.9,<2" pytest numpy pyyaml tokenizers \
  "torch==2.14.1" "executorch==1.5.1"

rm -rf target/wheels
"$venv/bin/maturin" build --release --manifest-path et-python/Cargo.toml \
  --interpreter "$venv/bin/python" --out target/wheels
wheel=$(ls target/wheels/etch-*.whl)
# One wheel for every CPython from 3.9 on: the stable ABI's tag.
case "$wheel" in
  *-cp39-abi3-*) echo "wheel: $wheel" ;;
  *) echo "error: $wheel is not an abi3 wheel" >&2; exit 1 ;;
esac
"${pip[@]}" install --quiet --force-reinstall --no-deps "$wheel"

# From target/, so `import etch` finds the installed wheel, not et-python/python.
venv_python=$(cd "$venv" && pwd)/bin/python
cd target
"$venv_python" -m pytest -q -p no:cacheprovider ../et-python/tests
