#!/usr/bin/env bash
# The C API's examples (examples/c) under valgrind and AddressSanitizer: a C caller's
# view of etch's memory (no invalid read or write, no leak across the handles' *_free
# functions) on MobileNetV2 (portable and XNNPACK), the LLM generator and bad input.
#
#   scripts/capi-test.sh        (CAPI_PROFILE=release to check an optimized library)
#
# The library is built with cargo's `test` profile by default, which `cargo test
# --workspace` (the examples test) has usually built already.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
profile=${CAPI_PROFILE:-test}
case "$profile" in
  test | dev) profile_dir=debug ;;
  *) profile_dir=$profile ;;
esac
lib="${CARGO_TARGET_DIR:-$root/target}/$profile_dir"

if ! command -v valgrind > /dev/null; then
  sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq valgrind > /dev/null
fi

cargo build --quiet -p et-capi --profile "$profile"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The static library linked whole (docs/c-api.md: its kernel registrations are
# referenced by no symbol), and what the Rust standard library needs from the system.
link=(-Wl,--whole-archive "$lib/libetch.a" -Wl,--no-whole-archive -lpthread -ldl -lm)
build() { # source exe extra-flags...
  local source=$1 exe=$2; shift 2
  local compiler=cc std=-std=c11
  if [[ $source == *.cpp ]]; then compiler=c++; std=-std=c++17; fi
  "$compiler" "$std" -Wall -Wextra -Werror -g -O1 "$@" -I et-capi/include \
    "examples/c/$source" "${link[@]}" -o "$work/$exe"
}

examples=("mv2.c tests/fixtures" "bad_input.c tests/fixtures" "llm.cpp tests/fixtures/llm")
for example in "${examples[@]}"; do
  read -r source arg <<< "$example"
  name=${source%.*}
  build "$source" "$name"
  build "$source" "$name-asan" -fsanitize=address -fno-omit-frame-pointer

  echo "--- $source under valgrind"
  valgrind --error-exitcode=1 --leak-check=full --suppressions=scripts/capi-valgrind.supp \
    --log-file="$work/$name.valgrind" \
    "$work/$name" "$arg" > "$work/$name.out" || {
      cat "$work/$name.out" "$work/$name.valgrind"; echo "FAIL: $source under valgrind" >&2; exit 1; }
  tail -n 1 "$work/$name.out"
  grep -E "ERROR SUMMARY|definitely lost|in use at exit" "$work/$name.valgrind" | sed 's/^==[0-9]*== /  /'

  echo "--- $source with AddressSanitizer"
  ASAN_OPTIONS=detect_leaks=1 "$work/$name-asan" "$arg" > "$work/$name-asan.out" 2>&1 || {
      cat "$work/$name-asan.out"; echo "FAIL: $source with AddressSanitizer" >&2; exit 1; }
  tail -n 1 "$work/$name-asan.out"
done
echo "C API examples: clean under valgrind and AddressSanitizer"
