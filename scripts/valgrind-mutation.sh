#!/usr/bin/env bash
# The mutation suite (tests/tests/mutation) under valgrind's memcheck: every corrupted
# file goes through load, load_method and execute, and any invalid read or write, use of
# uninitialised memory or invalid free fails the run (exit 1).
#
#   scripts/valgrind-mutation.sh [DIVISOR]
#
# DIVISOR (default 10) runs one case in DIVISOR (ETCH_MUTATION_DIVISOR): memcheck is
# some 50 times slower than a native run. DIVISOR=1 runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
divisor=${1:-10}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
bin=$(cargo test -p etch-tests --test mutation --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "mutation" and m.get("executable"):
        print(m["executable"])')
echo "valgrind on $bin (one case in $divisor)"
ETCH_MUTATION_DIVISOR=$divisor exec valgrind --quiet --error-exitcode=1 --leak-check=no \
  --track-origins=no "$bin" --test-threads=2 --nocapture
