#!/usr/bin/env bash
# Cross-builds the aarch64 test subset and runs it under qemu-aarch64 (user-mode
# emulation): et-ops' and et-xnnpack's unit tests (every kernel against its scalar
# reference, the NEON GEMM level included) and the fixture tests that compare whole
# programs with ExecuTorch's outputs: `fixtures` (the portable programs, mv2 among them),
# `quantized` (the quantized operators' programs) and `xnnpack` (fp32 and int8 programs
# through the XNNPACK backend). They are the ones that run the NEON paths on real models;
# the rest of the tests crate checks the runtime's logic, which has no per-architecture
# code, and would double the time under emulation.
#
# Twice: with `-cpu max` (every optional extension QEMU emulates: the int8 kernels take
# I8MM's `usdot` and dotprod's `sdot`), and with `-cpu cortex-a57` (plain ARMv8.0: NEON
# and nothing more, so the int8 kernels take the `smlal`/`sadalp` fallback), so that code
# built for aarch64's baseline is shown to run on the oldest cores. In between,
# et-xnnpack's unit tests run once more with `-cpu cortex-a76` (dotprod without I8MM: the
# `sdot` kernels in the product path; a second or two). `ETCH_EXPECT_ARM_DOT` makes a
# unit test fail unless the run-time detection found the level each CPU model has, so a
# green run shows which int8 paths ran. Measured on a shared 2-core x86-64 VM:
# the cross-build takes most of the time (about 8 min for the unit tests and 12 min for
# the fixture tests when other builds share the cores); under `-cpu max` the runs take
# et-ops 22 s, et-xnnpack 2 s, `fixtures` 16 s, `quantized` 11 s and `xnnpack` 262 s
# (82 s, and 121 s under cortex-a57, measured again with the aarch64 int8 kernels).
# `xnnpack` runs under `-cpu max` only: every path it takes also runs under cortex-a57
# through the unit tests and the other fixtures, and a second run would add 4 minutes.
#
# Needs: `rustup target add aarch64-unknown-linux-gnu`, and Debian's `qemu-user` and
# `gcc-aarch64-linux-gnu`. The linker and runner are set here, not in a .cargo/config, so
# host builds are untouched.
set -euo pipefail
cd "$(dirname "$0")/.."

export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
target=aarch64-unknown-linux-gnu
sysroot=/usr/aarch64-linux-gnu

use_cpu() { # cpu, expected int8 level
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="qemu-aarch64 -L $sysroot -cpu $1"
  export ETCH_EXPECT_ARM_DOT=$2
  echo "--- qemu-aarch64 -cpu $1 (int8 level $2)"
}

run() { # cpu, expected int8 level, fixture tests...
  use_cpu "$1" "$2"; shift 2
  cargo test --target "$target" -p et-ops -p et-xnnpack --lib
  cargo test --target "$target" -p etch-tests "$@"
}

run max I8mm --test fixtures --test quantized --test xnnpack
use_cpu cortex-a76 DotProd
cargo test --target "$target" -p et-xnnpack --lib
run cortex-a57 Neon --test fixtures --test quantized
