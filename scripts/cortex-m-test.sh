#!/usr/bin/env bash
# Builds examples/cortex_m for thumbv7em-none-eabihf once per model, each a selective
# build for that model alone (ET_SELECT_OPS_MODEL, in a target directory of its own),
# and runs each under QEMU's MPS2 AN386 board (Cortex-M4) through scripts/arm-size.sh,
# which prints flash, RAM and stack per binary. Fails if a binary does not fit the
# memory.x regions (the link fails), a model's output is not ExecuTorch's, the stack
# reaches the bottom of its reserve (the firmware exits 1 through semihosting), or a run
# hangs.
# Installs what it needs: the Rust target and Debian's qemu-system-arm.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
fx=$root/tests/fixtures

rustup target add thumbv7em-none-eabihf
if ! command -v qemu-system-arm >/dev/null; then
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd=sudo; fi
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y --no-install-recommends qemu-system-arm >/dev/null
fi

cd examples/cortex_m
triple_release=thumbv7em-none-eabihf/release
elves=target/cortex-m
mkdir -p "$elves"

# NAME MODEL [cargo options]: the firmware for MODEL, copied to target/cortex-m/NAME.
build() {
  local name=$1 model=$2
  shift 2
  ET_SELECT_OPS_MODEL=$model cargo build --release --target-dir "target/$name" "$@"
  cp "target/$name/$triple_release/firmware" "$elves/$name"
}

cargo fmt -- --check
# Linted once, with small_cnn's selection (the host build dependencies are shared with
# its build below).
ET_SELECT_OPS_MODEL=$fx/small_cnn.pte cargo clippy --release --target-dir target/small_cnn -- -D warnings
build mlp "$fx/mlp.pte"
build small_cnn "$fx/small_cnn.pte"
build q8_fire "$fx/q8/q8_fire.pte"
# The runtime alone: no kernel crate, running noop.pte (no instructions), as
# examples/size_test does on x86-64.
build runtime_only "$fx/noop.pte" --no-default-features

"$root/scripts/arm-size.sh" "$elves"/{runtime_only,mlp,small_cnn,q8_fire}
