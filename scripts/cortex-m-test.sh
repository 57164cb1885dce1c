#!/usr/bin/env bash
# Builds examples/cortex_m for thumbv7em-none-eabihf and runs each model under QEMU's MPS2
# AN386 board (Cortex-M4): fails if a model's output is not ExecuTorch's (the firmware
# exits 1 through semihosting) or a run hangs. Then prints flash and RAM per binary,
# and of the runtime alone.
# Installs what it needs: the Rust target and Debian's qemu-system-arm.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

rustup target add thumbv7em-none-eabihf
if ! command -v qemu-system-arm >/dev/null; then
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd=sudo; fi
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y --no-install-recommends qemu-system-arm >/dev/null
fi

# The example's selection is the one etch select writes from its models.
cargo build --release -p et-cli --bin etch
(cd examples/cortex_m && "$root/target/release/etch" select \
  ../../tests/fixtures/mlp.pte ../../tests/fixtures/small_cnn.pte ../../tests/fixtures/q8/q8_fire.pte \
  -o "$root/target/cortex-m-selection.yaml" >/dev/null)
if ! diff -u examples/cortex_m/models.selected_operators.yaml target/cortex-m-selection.yaml; then
  echo "error: examples/cortex_m/models.selected_operators.yaml is stale: regenerate it with etch select" >&2
  exit 1
fi

cd examples/cortex_m
cargo fmt -- --check
cargo clippy --release --bins -- -D warnings
cargo build --release --bins
bin=target/thumbv7em-none-eabihf/release
for model in mlp small_cnn q8_fire; do
  echo "--- $model"
  timeout 120 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic \
    -semihosting-config enable=on,target=native -kernel "$bin/$model"
done
# The runtime alone (no kernels; it stops at mlp's first missing kernel, so its exit
# code is not checked), for its flash and RAM.
cargo build --release --no-default-features --bin runtime_only
"$root/scripts/arm-size.sh" "$bin"/{runtime_only,mlp,small_cnn,q8_fire}
