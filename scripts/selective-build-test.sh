#!/usr/bin/env bash
# Builds the `etch` binary (release-size) under each compile-time selection mode and
# checks what each build can and cannot do; prints the size table for the README.
#
#   none                              every kernel
#   ET_SELECT_OPS_YAML=mv2.selected_operators.yaml   (ExecuTorch's own file)
#   ET_SELECT_OPS_MODEL=mv2.pte
#   ET_SELECT_OPS_LIST=aten::add.out
#   ET_SELECT_OPS_MODEL=mv2_xnnpack.pte  (XNNPACK node kinds, fp32 only)
#   ET_SELECT_OPS_MODEL=mv2_xnnpack_q8.pte  (XNNPACK node kinds, qint8 only)
#   ET_SELECT_OPS_MODEL=mv2_q8_portable.pte  (the quantized operator library)
#   ET_SELECT_OPS_MODEL=llama_tiny_8da4w.pte  (an LLM: et-llm's custom ops, 8da4w nodes)
#
# The builds leave out the CLI's `llm` feature (`etch generate`, the tokenizers) but
# the last, which is the one that needs it.
#
# Also checks that editing the selection file rebuilds with the new selection.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
fx="$root/tests/fixtures"
# Each selection gets its own target directory, under CARGO_TARGET_DIR when it is set.
target_root=${CARGO_TARGET_DIR:-$root/target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

build() { # mode-name env... -> path of etch (without the `llm` feature)
  local name=$1; shift
  env "$@" CARGO_TARGET_DIR="$target_root/select-$name" \
    cargo build --quiet --profile release-size -p et-cli --no-default-features --features xnnpack,threads >&2
  echo "$target_root/select-$name/release-size/etch"
}
build_llm() { # mode-name env... -> path of etch with `etch generate`
  local name=$1; shift
  env "$@" CARGO_TARGET_DIR="$target_root/select-$name" \
    cargo build --quiet --profile release-size -p et-cli >&2
  echo "$target_root/select-$name/release-size/etch"
}

kernel_total() { "$1" kernels --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'; }
kernel_names() { "$1" kernels --json | python3 -c 'import json,sys; print("\n".join(sorted({k["name"] for k in json.load(sys.stdin)["kernels"]})))'; }

# Runs MODEL (a fixture name) and compares output0.bin with the fixture's expected
# output within its io.yaml tolerance.
check_run() { # etch model label
  local etch=$1 model=$2 out="$work/$2-$3"
  "$etch" run "$fx/$model.pte" --input "$fx/$model.in0.bin" --output-dir "$out" > /dev/null
  python3 - "$out/output0.bin" "$fx/$model.out0.bin" "$fx/$model.io.yaml" <<'PY'
import re, struct, sys
got = open(sys.argv[1], 'rb').read(); want = open(sys.argv[2], 'rb').read()
io = open(sys.argv[3]).read()
rtol, atol = (float(re.search(rf'^{k}: (\S+)', io, re.M).group(1)) for k in ('rtol', 'atol'))
assert len(got) == len(want), (len(got), len(want))
g = struct.unpack(f'<{len(got)//4}f', got); w = struct.unpack(f'<{len(want)//4}f', want)
bad = [i for i, (a, b) in enumerate(zip(g, w)) if abs(a - b) > atol + rtol * abs(b)]
assert not bad, f'{len(bad)} logits differ, first at {bad[0]}: {g[bad[0]]} vs {w[bad[0]]}'
PY
}
check_mv2() { check_run "$1" mv2 "$2"; }
# Runs MODEL and requires output0.bin to equal the fixture's expected output byte for byte.
check_exact() { # etch model label
  local etch=$1 model=$2 out="$work/$2-$3"
  "$etch" run "$fx/$model.pte" --input "$fx/$model.in0.bin" --output-dir "$out" > /dev/null
  cmp -s "$out/output0.bin" "$fx/$model.out0.bin" || fail "$model ($3): output differs from ExecuTorch's"
}

node_kinds() { "$1" kernels --json | python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["xnnpack_node_kinds"]))'; }
# The datatype families the build holds over all its node kinds (`fp32 qint8`).
node_datatypes() { "$1" kernels --json | python3 -c 'import json,sys; print(" ".join(sorted({d for ds in json.load(sys.stdin)["xnnpack_node_datatypes"].values() for d in ds})))'; }

expect_missing() { # etch model op...
  local etch=$1 model=$2; shift 2
  if "$etch" run "$model" > "$work/out" 2> "$work/err"; then fail "$model ran in a build that should lack its kernels"; fi
  for op in "$@"; do grep -q "$op" "$work/err" || fail "$model: missing-kernel error does not name $op: $(cat "$work/err")"; done
}

prim_ops() { grep -E "$@" '^(executorch_prim::|aten::sym_|aten::_local_scalar_dense)' || true; }

declare -A size count
all=$(build none)
yaml=$(build yaml ET_SELECT_OPS_YAML="$fx/mv2.selected_operators.yaml")
model=$(build model ET_SELECT_OPS_MODEL="$fx/mv2.pte")
list=$(build list ET_SELECT_OPS_LIST=aten::add.out)
xnnpack=$(build xnnpack ET_SELECT_OPS_MODEL="$fx/mv2_xnnpack.pte")
xnnpack_q8=$(build xnnpack_q8 ET_SELECT_OPS_MODEL="$fx/mv2_xnnpack_q8.pte")
quantized=$(build quantized ET_SELECT_OPS_MODEL="$fx/mv2_q8_portable.pte")
llm=$(build_llm llm ET_SELECT_OPS_MODEL="$fx/llm/llama_tiny_8da4w.pte")
for m in all yaml model list xnnpack xnnpack_q8 quantized llm; do
  bin=${!m}
  size[$m]=$(stat -c %s "$bin")
  count[$m]=$(kernel_total "$bin")
done

# Every build registers the prim ops; selected builds register nothing else beyond the selection.
mv2_ops=$(grep -E '^  [a-z_]+::' "$fx/mv2.selected_operators.yaml" | sed 's/^  //; s/:$//' | sort -u)
# With them, load-time fusion's kernels for what mv2 calls: the selection keeps a fused
# kernel when the operators it replaces are selected (mv2 has no relu).
mv2_kernels=$(printf '%s\n%s\n%s\n' "$mv2_ops" etch::convolution_batch_norm.out \
  etch::convolution_batch_norm_hardtanh.out | sort -u)
for m in yaml model; do
  extra=$(kernel_names "${!m}" | prim_ops -v | sort -u | comm -23 - <(echo "$mv2_kernels") || true)
  [ -z "$extra" ] || fail "$m build registers kernels mv2 does not use: $extra"
  missing=$(comm -13 <(kernel_names "${!m}" | sort -u) <(echo "$mv2_kernels"))
  [ -z "$missing" ] || fail "$m build lacks mv2 kernels: $missing"
  check_mv2 "${!m}" "$m"
  expect_missing "${!m}" "$fx/int_ops.pte" aten::sub.out aten::gt.Tensor_out aten::where.self_out dim_order_ops::_to_dim_order_copy.out
done
[ "$(kernel_names "$list" | prim_ops -v)" = "aten::add.out" ] || fail "list build registers more than aten::add.out"
check_mv2 "$all" all

# The XNNPACK-lowered model's selection keeps exactly its payloads' node kinds (and no
# operator beyond the prim ops: every operator is delegated); the portable selections
# keep none.
mv2_xnnpack_kinds="Add Conv2d DepthwiseConv2d FullyConnected GlobalAvgPooling2d StaticReshape StaticTranspose"
[ "$(node_kinds "$xnnpack")" = "$mv2_xnnpack_kinds" ] || fail "xnnpack build holds node kinds $(node_kinds "$xnnpack")"
[ -z "$(kernel_names "$xnnpack" | prim_ops -v)" ] || fail "xnnpack build registers operators: $(kernel_names "$xnnpack" | prim_ops -v)"
for m in yaml model list; do
  [ -z "$(node_kinds "${!m}")" ] || fail "$m build holds XNNPACK node kinds: $(node_kinds "${!m}")"
done
[ "$(node_kinds "$all" | wc -w)" -ge 40 ] || fail "the unselected build holds only $(node_kinds "$all")"
check_run "$xnnpack" mv2_xnnpack xnnpack
# Node datatypes follow the selection: the float model's build holds no int8 variant of
# its kinds, and refuses the int8 model naming the (kind, datatype) pairs it lacks.
[ "$(node_datatypes "$xnnpack")" = "fp32" ] || fail "xnnpack build holds datatypes $(node_datatypes "$xnnpack")"
[ "$(node_datatypes "$all")" = "fp32 qdint8 qint8" ] || fail "the unselected build holds datatypes $(node_datatypes "$all")"
expect_missing "$xnnpack" "$fx/mv2_xnnpack_q8.pte" Add:qint8 Conv2d:qint8 DepthwiseConv2d:qint8 Convert:qint8 Clamp:qint8
# The int8 model's build holds its kinds in qint8 only, runs it bit for bit as ExecuTorch
# does, and refuses the float model naming the fp32 datatypes it lacks.
mv2_q8_kinds="Add Clamp Conv2d Convert DepthwiseConv2d FullyConnected GlobalAvgPooling2d StaticReshape StaticTranspose"
[ "$(node_kinds "$xnnpack_q8")" = "$mv2_q8_kinds" ] || fail "xnnpack_q8 build holds node kinds $(node_kinds "$xnnpack_q8")"
[ "$(node_datatypes "$xnnpack_q8")" = "qint8" ] || fail "xnnpack_q8 build holds datatypes $(node_datatypes "$xnnpack_q8")"
check_exact "$xnnpack_q8" mv2_xnnpack_q8 xnnpack_q8
expect_missing "$xnnpack_q8" "$fx/mv2_xnnpack.pte" Add:fp32 Conv2d:fp32 DepthwiseConv2d:fp32 FullyConnected:fp32 GlobalAvgPooling2d:fp32 StaticReshape:fp32 StaticTranspose:fp32 "datatype fp32"
if "$xnnpack_q8" check "$fx/mv2_xnnpack.pte" > "$work/out" 2> "$work/err"; then fail "xnnpack_q8 check accepted mv2_xnnpack"; fi
grep -q "node kind Conv2d:fp32" "$work/err" || fail "check does not name Conv2d:fp32: $(cat "$work/err")"
# The quantized portable model's build holds exactly its operators (the quantized
# library's quantize/dequantize among them) and runs it within its tolerance.
q8_ops=$(grep -E '^  [a-z_]+::' "$fx/mv2_q8_portable.selected_operators.yaml" | sed 's/^  //; s/:$//' | sort -u)
[ "$(kernel_names "$quantized" | prim_ops -v | sort -u)" = "$q8_ops" ] || fail "quantized build registers $(kernel_names "$quantized" | prim_ops -v)"
check_run "$quantized" mv2_q8_portable quantized
expect_missing "$quantized" "$fx/mv2.pte" aten::_native_batch_norm_legit_no_training.out
# A program needing other node kinds is refused at load, naming each of them.
expect_missing "$xnnpack" "$fx/tiny_transformer_xnnpack.pte" BatchMatrixMultiply Div Softmax Gelu aten::native_layer_norm.out

# The LLM program's build holds exactly its operators (et-llm's `llama::` ops among them)
# and its payloads' node kinds with their datatypes, and generates ExecuTorch's greedy
# tokens; the float LLM (fp32 FullyConnected) is refused naming the pair it lacks.
"$llm" select "$fx/llm/llama_tiny_8da4w.pte" -o "$work/llm.yaml" > /dev/null
llm_ops=$(sed -n '/^operators:/,$p' "$work/llm.yaml" | grep -E '^  [a-z_]+::' | sed 's/^  //; s/:$//' | sort -u | prim_ops -v)
[ "$(kernel_names "$llm" | prim_ops -v | sort -u)" = "$llm_ops" ] || fail "llm build registers $(kernel_names "$llm" | prim_ops -v)"
llm_kinds="Add Concatenate2 Convert FullyConnected Multiply ReciprocalSquareRoot Sigmoid StaticReshape Subtract"
[ "$(node_kinds "$llm")" = "$llm_kinds" ] || fail "llm build holds node kinds $(node_kinds "$llm")"
greedy=$(sed -n '/^greedy_tokens:/,/^[a-z]/p' "$fx/llm/llama_tiny_8da4w.llm.yaml" | sed -n 's/^- //p' | paste -sd,)
got=$("$llm" generate "$fx/llm/llama_tiny_8da4w.pte" --prompt-tokens 1,45,99,300,17,250 --temperature 0 --max-new-tokens 17 --json \
  | python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["generated_tokens"])))')
[ "$got" = "$greedy" ] || fail "llm build generated $got, ExecuTorch $greedy"
expect_missing "$llm" "$fx/llm/llama_tiny_fp32.pte" FullyConnected:fp32

# The model-based build instantiated only float32: an int64 add is refused at load with
# the operator and its kernel key, not run with the wrong types.
expect_missing "$model" "$fx/opcases/add_int64.pte" "aten::add.out (kernel key v1/4;"
# The YAML build honours the file's kernel keys too (float32 only for mv2).
expect_missing "$yaml" "$fx/opcases/add_int64.pte" "aten::add.out (kernel key v1/4;"

# Editing the selection file rebuilds with the new contents.
cp "$fx/mv2.selected_operators.yaml" "$work/sel.yaml"
before=$(kernel_total "$(build rebuild ET_SELECT_OPS_YAML="$work/sel.yaml")")
cat "$fx/add.selected_operators.yaml" > "$work/sel.yaml"
after=$(kernel_total "$(build rebuild ET_SELECT_OPS_YAML="$work/sel.yaml")")
[ "$before" != "$after" ] || fail "changing the selection file did not rebuild (still $before kernels)"

# Two variables at once is a compile error naming both.
if env ET_SELECT_OPS_LIST=aten::add.out ET_SELECT_OPS_MODEL="$fx/mv2.pte" CARGO_TARGET_DIR="$target_root/select-list" \
   cargo build --quiet --profile release-size -p et-cli 2> "$work/err"; then
  fail "two selection variables were accepted"
fi
grep -q ET_SELECT_OPS_LIST "$work/err" && grep -q ET_SELECT_OPS_MODEL "$work/err" || fail "error does not name both variables"

# A node kind or datatype family the XNNPACK schema does not know fails the build (et-xnnpack's
# build script), naming each wrong entry.
printf 'kernel_metadata:\n  etch::xnnpack_node_kinds: [Add, Conv3d, "Conv2d:int8"]\n' > "$work/bad_kinds.yaml"
if env ET_SELECT_OPS_YAML="$work/bad_kinds.yaml" CARGO_TARGET_DIR="$target_root/select-rebuild" \
   cargo check --quiet --profile release-size -p et-xnnpack 2> "$work/err"; then
  fail "unknown XNNPACK node kinds were accepted"
fi
grep -q '`Conv3d` is not an XNNPACK node kind' "$work/err" && grep -q '`Conv2d:int8` names an unknown datatype family' "$work/err" \
  || fail "the node-kind error does not name both entries: $(cat "$work/err")"

echo "| build | stripped bytes | registered kernels |"
echo "|---|---|---|"
echo "| no selection | ${size[all]} | ${count[all]} |"
echo "| ET_SELECT_OPS_YAML=mv2.selected_operators.yaml | ${size[yaml]} | ${count[yaml]} |"
echo "| ET_SELECT_OPS_MODEL=mv2.pte | ${size[model]} | ${count[model]} |"
echo "| ET_SELECT_OPS_LIST=aten::add.out | ${size[list]} | ${count[list]} |"
echo "| ET_SELECT_OPS_MODEL=mv2_xnnpack.pte | ${size[xnnpack]} | ${count[xnnpack]} (+ 7 XNNPACK node kinds, fp32) |"
echo "| ET_SELECT_OPS_MODEL=mv2_xnnpack_q8.pte | ${size[xnnpack_q8]} | ${count[xnnpack_q8]} (+ 9 XNNPACK node kinds, qint8) |"
echo "| ET_SELECT_OPS_MODEL=mv2_q8_portable.pte | ${size[quantized]} | ${count[quantized]} |"
echo "| ET_SELECT_OPS_MODEL=llama_tiny_8da4w.pte (with \`etch generate\`) | ${size[llm]} | ${count[llm]} (+ 9 XNNPACK node kinds) |"
echo "selective builds: all checks passed (rebuild on edit: $before -> $after kernels)"
