#!/usr/bin/env bash
# Flash and RAM of Cortex-M ELF binaries: flash is what is programmed (vector table,
# .text, .rodata, the registries, .data's initial values); RAM is .data and .bss (the
# stack takes the rest of the RAM region, see examples/cortex_m/README.md).
set -euo pipefail
size_tool=$(command -v llvm-size || command -v arm-none-eabi-size)
printf '%-12s %10s %10s\n' binary "flash" "RAM"
for elf in "$@"; do
  "$size_tool" -A "$elf" | awk -v name="$(basename "$elf")" '
    $1 == ".data" { data = $2 }
    $1 == ".bss" || $1 == ".uninit" { bss += $2 }
    $1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" || $1 ~ /^linkm/ { flash += $2 }
    END { printf "%-12s %10d %10d\n", name, flash + data, bss + data }'
done
