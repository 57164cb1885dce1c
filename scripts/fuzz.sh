#!/usr/bin/env bash
# Coverage-guided fuzzing of etch's load path (the long runs live outside CI).
#
#   scripts/fuzz.sh TARGET [SECONDS] [extra libFuzzer flags...]
#
# TARGET is `program` (any bytes as a .pte), `ptd` (any bytes as mlp_ptd.pte's data file),
# `xnnpack_payload` (any bytes as mlp_xnnpack.pte's delegate payload) or `tokenizer` (any
# bytes as a tokenizer.json or SentencePiece model). The seed corpus
# (fuzz/corpus/TARGET, not in git) is made from tests/fixtures on first use; findings land
# in fuzz/artifacts/TARGET. Needs cargo-fuzz (`cargo install cargo-fuzz`) and the nightly
# toolchain, for the fuzz crate only. Runs at the lowest CPU priority.
#
# Reproduce a finding: scripts/fuzz.sh TARGET 0 fuzz/artifacts/TARGET/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh program|ptd|xnnpack_payload|tokenizer [SECONDS] [flags...]}
seconds=${2:-600}
shift $(( $# >= 2 ? 2 : 1 ))
fixtures=tests/fixtures
corpus=fuzz/corpus/$target
mkdir -p "$corpus" "fuzz/artifacts/$target"

if [ -z "$(ls -A "$corpus")" ]; then
  case $target in
    program)
      # Every fixture program below 128 KiB (tiny_transformer included; mv2 is too big to
      # mutate usefully), and the bundled program.
      find "$fixtures" -maxdepth 1 \( -name '*.pte' -o -name '*.bpte' \) -size -128k \
        -exec cp {} "$corpus/" \;
      ;;
    ptd)
      cp "$fixtures/mlp_ptd.ptd" "$corpus/"
      ;;
    xnnpack_payload)
      # The payload itself: from its `XH00` header (4 bytes before the magic) to the end
      # of its constant data.
      python3 - "$fixtures/mlp_xnnpack.pte" "$corpus/mlp_xnnpack.payload" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
at = b.index(b"XH00") - 4
const_off, const_size = struct.unpack_from("<IQ", b, at + 18)
open(sys.argv[2], "wb").write(b[at:at + const_off + const_size])
PY
      ;;
    tokenizer)
      cp "$fixtures/llm/tokenizer.json" "$fixtures"/llm/spm/*.model "$corpus/" 2>/dev/null ||
        cp "$fixtures/llm/tokenizer.json" "$corpus/"
      ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
fi

# -max_len: the largest seed (tiny_transformer.pte) fits; -rss_limit_mb bounds memory;
# -timeout turns a hang into a finding.
if [ "$seconds" = 0 ]; then
  exec nice -n 19 cargo +nightly fuzz run "$target" "$@"
fi
exec nice -n 19 cargo +nightly fuzz run "$target" "$corpus" -- \
  -max_total_time="$seconds" -max_len=131072 -rss_limit_mb=2048 -timeout=10 \
  -print_final_stats=1 "$@"
