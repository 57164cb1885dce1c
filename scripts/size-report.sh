#!/usr/bin/env bash
# Builds the size-test family in the release-size profile and reports, for each binary:
# stripped bytes, its own code and data (`code_and_data`), `size` text/data/bss, the number
# of registered kernels, the 15 largest symbols, and the code of each runtime part, kernel
# (and dtype instance) and shared helper (scripts/size-attribution.py). Fails if a
# stripped size, or code and data, exceeds its threshold in scripts/size-thresholds.txt.
#
#   scripts/size-report.sh            # all three, and size_test for aarch64
#   scripts/size-report.sh size_test  # one
#
# size_test is also cross-built for aarch64-unknown-linux-gnu (row `size_test.aarch64`)
# when aarch64-linux-gnu-gcc and qemu-aarch64 are installed, and run on noop.pte under
# qemu-aarch64; without them the row is left out with a note.
set -euo pipefail
cd "$(dirname "$0")/.."

root=$(pwd)
out=target/size-report
mkdir -p "$out"
ENTRY_BYTES=24 # size_of::<et_runtime::KernelEntry>() on 64-bit targets
TARGET=$(rustc -vV | awk '/^host:/ { print $2 }')
# No unwind tables (panics abort) and a non-PIE executable (no dynamic relocations for
# the registry's pointers). An explicit --target keeps these flags off build scripts and
# proc macros.
#
# Fat LTO still gives every function an .eh_frame entry (the prebuilt standard library's
# bitcode brings its unwind-table setting into the merged module), about 9 KB for
# size_test. Nothing reads them: panics abort and nothing unwinds. A linker script
# discards them, with the toolchain's .comment strings. Then: no RELRO segment (the GOT
# holds a handful of libc entries), GNU hash only, no build id.
link_script="$out/discard.ld"
cat > "$link_script" <<'LD'
SECTIONS { /DISCARD/ : { *(.eh_frame) *(.eh_frame_hdr) *(.comment) } }
INSERT AFTER .text;
LD
SIZE_RUSTFLAGS="-C force-unwind-tables=no -C relocation-model=static"
for arg in "-T,$root/$link_script" -z,norelro --hash-style=gnu --build-id=none; do
  SIZE_RUSTFLAGS+=" -C link-arg=-Wl,$arg"
done

# name | package | selection environment | fixture it must run | runtime-only checks
builds=(
  "size_test|size_test||noop.pte|strict"
  "size_test_all_ops|size_test_all_ops||add.pte|"
  "size_test_mv2|size_test_all_ops|ET_SELECT_OPS_MODEL=$root/tests/fixtures/mv2.pte|mv2.pte|"
)

wanted=("$@")
selected() {
  [ ${#wanted[@]} -eq 0 ] && return 0
  local w; for w in "${wanted[@]}"; do [ "$w" = "$1" ] && return 0; done; return 1
}

build() { # name package env strip [target] -> path of the binary
  local name=$1 pkg=$2 env=$3 strip=$4 target=${5:-$TARGET}
  local dir="target/size-$name-$strip"
  # The symbol copy also carries line tables and v0 symbol names (generic arguments in
  # the names), for scripts/size-attribution.py; neither changes what code is generated
  # beyond a percent or two.
  local flags="$SIZE_RUSTFLAGS" debug=false
  if [ "$strip" = false ]; then
    flags+=" -C symbol-mangling-version=v0"
    debug=line-tables-only
  fi
  env $env RUSTFLAGS="$flags" CARGO_TARGET_DIR="$dir" CARGO_PROFILE_RELEASE_SIZE_STRIP="$strip" \
    CARGO_PROFILE_RELEASE_SIZE_DEBUG="$debug" \
    cargo build --quiet --target "$target" --profile release-size -p "$pkg" >&2
  echo "$dir/$target/release-size/$pkg"
}

kernel_count() {
  local bytes
  bytes=$(readelf -SW "$1" | awk '$2 == "linkme_KERNELS" { print $6 }')
  echo $(( 16#${bytes:-0} / ENTRY_BYTES ))
}

threshold() { awk -v n="$1" '$1 == n { print $2 }' scripts/size-thresholds.txt; }

# The program's own code and data, from the section headers: code (.text, .init, .fini),
# read-only data, data, the kernel registry (linkme's sections) and the init/fini
# arrays; not what dynamic linking adds (.dynsym, .dynstr, relocations, .plt, .got,
# .dynamic), notes or headers: the "code + rodata + data" figure BENCHMARKS.md compares
# with ExecuTorch's size_test at the same flags.
code_and_data() {
  readelf -SW "$1" | python3 -c '
import re, sys
keep = re.compile(r"(\.text|\.init|\.fini|\.rodata|\.data|\.data\.rel\.ro|\.init_array|\.fini_array|linkme_.*|linkm2_.*)$")
total = 0
for line in sys.stdin:
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if m and keep.match(m.group(1)):
        total += int(m.group(2), 16)
print(total)'
}

status=0
reported=()
table="| binary | stripped bytes | code + data | text | data | bss | kernels | threshold |
|---|---|---|---|---|---|---|---|"
for b in "${builds[@]}"; do
  IFS='|' read -r name pkg env fixture strict <<< "$b"
  selected "$name" || continue
  bin=$(build "$name" "$pkg" "$env" true)
  cp "$bin" "$out/$name"
  if ! "$bin" "tests/fixtures/$fixture" > /dev/null; then
    echo "FAIL: $name does not run tests/fixtures/$fixture" >&2
    status=1
  fi
  bytes=$(stat -c %s "$bin")
  read -r text data bss _ < <(size "$bin" | tail -1)
  code=$(code_and_data "$bin")
  kernels=$(kernel_count "$bin")
  limit=$(threshold "$name")
  code_limit=$(threshold "$name.code")
  table+="
| $name | $bytes | $code | $text | $data | $bss | $kernels | ${limit:-none}${code_limit:+, code + data $code_limit} |"
  if [ -n "$limit" ] && [ "$bytes" -gt "$limit" ]; then
    echo "FAIL: $name is $bytes bytes, over its threshold of $limit" >&2
    status=1
  fi
  if [ -n "$code_limit" ] && [ "$code" -gt "$code_limit" ]; then
    echo "FAIL: $name has $code bytes of code and data, over its threshold of $code_limit" >&2
    status=1
  fi
  reported+=("$out/$name.symbols.txt")
  symbols=$(build "$name" "$pkg" "$env" false)
  {
    echo "## $name: 15 largest symbols"
    # Code and read-only data only (the static memory pools are .bss and cost no file size).
    nm --size-sort --reverse-sort -S --demangle "$symbols" > "$out/$name.nm"
    if [ -n "$strict" ]; then
      # Size discipline of the runtime: no source paths (panic locations), no log or
      # format strings, no formatting machinery.
      if strings "$bin" | grep -q '\.rs'; then
        echo "FAIL: $name contains source file paths" >&2
        status=1
      fi
      if grep -q 'core::fmt::' "$out/$name.nm"; then
        echo "FAIL: $name links core::fmt" >&2
        status=1
      fi
    fi
    awk '$3 ~ /^[tTrR]$/ && n++ < 15' "$out/$name.nm" |
      while read -r _addr size _kind sym; do printf '%8d  %s\n' "$((16#$size))" "$sym"; done
    echo
    echo "## $name: what each part costs"
    python3 scripts/size-attribution.py "$symbols"
    echo
  } > "$out/$name.symbols.txt"
done

# size_test for aarch64: the same flags, the cross linker, run under QEMU. No symbol
# report (the attribution reads host addr2line output).
A64=aarch64-unknown-linux-gnu
if selected size_test && command -v aarch64-linux-gnu-gcc > /dev/null && command -v qemu-aarch64 > /dev/null; then
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
  bin=$(build size_test.aarch64 size_test "" true "$A64")
  cp "$bin" "$out/size_test.aarch64"
  if ! qemu-aarch64 -L /usr/aarch64-linux-gnu "$bin" tests/fixtures/noop.pte > /dev/null; then
    echo "FAIL: size_test.aarch64 does not run tests/fixtures/noop.pte under qemu-aarch64" >&2
    status=1
  fi
  bytes=$(stat -c %s "$bin")
  read -r text data bss _ < <(aarch64-linux-gnu-size "$bin" | tail -1)
  code=$(code_and_data "$bin")
  limit=$(threshold size_test.aarch64)
  table+="
| size_test.aarch64 | $bytes | $code | $text | $data | $bss | $(kernel_count "$bin") | ${limit:-none} |"
  if [ -n "$limit" ] && [ "$bytes" -gt "$limit" ]; then
    echo "FAIL: size_test.aarch64 is $bytes bytes, over its threshold of $limit" >&2
    status=1
  fi
elif selected size_test; then
  echo "note: aarch64-linux-gnu-gcc or qemu-aarch64 missing; size_test.aarch64 not built" >&2
fi

echo "$table"
echo
cat "${reported[@]}" 2>/dev/null || true
# The Cortex-M example's flash, RAM and stack, when it has been built
# (scripts/cortex-m-test.sh builds each model's firmware, then reports the same table;
# the stack is measured by running each under qemu-system-arm).
arm_bins=examples/cortex_m/target/cortex-m
if [ -x "$arm_bins/mlp" ] && [ -x "$arm_bins/runtime_only" ] && command -v qemu-system-arm > /dev/null; then
  echo
  echo "Cortex-M (thumbv7em-none-eabihf), examples/cortex_m:"
  scripts/arm-size.sh "$arm_bins"/{runtime_only,mlp,small_cnn,q8_fire}
fi
exit $status
