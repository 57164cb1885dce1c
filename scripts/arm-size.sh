#!/usr/bin/env bash
# Flash, RAM and stack of examples/cortex_m firmware ELFs (scripts/cortex-m-test.sh builds
# them). Runs each under QEMU's MPS2 AN386 board for the stack high-water mark the
# firmware reports, and fails when a run fails (wrong output or the stack reaching its
# reserve: exit 1) or hangs. Prints a Markdown table:
#
#   flash    what is programmed: vector table, .text, .rodata, etch's registries and
#            .data's initial values, the model included;
#   model    of that, the embedded .pte (the firmware's PROGRAM) and the fixture's input
#            and expected output (INPUT, EXPECTED): the model's bytes, not the runtime's;
#   RAM      .data and .bss (the statics: the method arena, planned arenas and scratch
#            among them) plus the stack the run used;
#   stack    measured high-water mark, of the reserve memory.x sets.
set -euo pipefail
size_tool=$(command -v llvm-size || command -v arm-none-eabi-size)
nm_tool=$(command -v llvm-nm || command -v arm-none-eabi-nm)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

rows=()
for elf in "$@"; do
  name=$(basename "$elf")
  echo "--- $name"
  if ! timeout 120 qemu-system-arm -machine mps2-an386 -cpu cortex-m4 -nographic \
    -semihosting-config enable=on,target=native -kernel "$elf" | tee "$log"; then
    echo "error: $name failed under QEMU" >&2
    exit 1
  fi
  read -r used reserved < <(sed -n 's/^stack (bytes): \([0-9]*\) used of \([0-9]*\) reserved.*/\1 \2/p' "$log")
  [ -n "${reserved:-}" ] || { echo "error: $name reported no stack high-water mark" >&2; exit 1; }
  read -r flash statics < <("$size_tool" -A "$elf" | awk '
    $1 == ".data" { data = $2 }
    $1 == ".bss" || $1 == ".uninit" { bss += $2 }
    $1 == ".vector_table" || $1 == ".text" || $1 == ".rodata" || $1 ~ /^linkm/ { flash += $2 }
    END { print flash + data, bss + data }')
  # The firmware's statics PROGRAM, INPUT and EXPECTED (symbol sizes, in hex).
  model=0
  while read -r _ hex_size _ symbol; do
    case ${symbol%::h*} in *::PROGRAM | *::INPUT | *::EXPECTED) model=$((model + 16#$hex_size)) ;; esac
  done < <("$nm_tool" -S -C "$elf")
  [ "$model" -gt 0 ] || { echo "error: $name: no PROGRAM symbol (stripped?)" >&2; exit 1; }
  rows+=("$name $flash $model $statics $used $reserved")
  used="" reserved=""
done

echo
echo "| binary | flash | of which the model | flash without the model | RAM: .data + .bss | stack used / reserved | RAM with the stack used |"
echo "|---|---|---|---|---|---|---|"
for row in "${rows[@]}"; do
  read -r name flash model statics used reserved <<<"$row"
  printf '| %s | %d | %d | %d | %d | %d / %d | %d |\n' "$name" "$flash" "$model" \
    "$((flash - model))" "$statics" "$used" "$reserved" "$((statics + used))"
done
