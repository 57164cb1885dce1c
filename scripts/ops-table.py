#!/usr/bin/env python3
"""Prints et-ops/README.md's operator table from the conformance suites: for every
operator the cases call, the input dtypes of the cases that exercise it (all of which
`cargo test -p etch-tests --test opcases` and `--test opcases_parity` run and check
against PyTorch), then the operators no exported program can reach, which unit tests
cover; then the quantized library's table from the `q_*` cases of
tests/fixtures/q_dq_ops.index.yaml (`--test quantized`) and its unit-tested operators.

Usage: python3 scripts/ops-table.py > /tmp/table.md  (needs PyYAML: pip install pyyaml)
"""
import collections
import os
import yaml

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cases = os.path.join(root, 'tests', 'fixtures', 'opcases')
index = yaml.safe_load(open(os.path.join(cases, 'index.yaml')))
index += yaml.safe_load(open(os.path.join(cases, 'index-parity.yaml')))
order = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64',
         'complex64', 'complex128']
# Portable operators no program from the stock exporter calls (see the opcases README).
UNREACHABLE = {
    'aten::_native_batch_norm_legit.out': 'unit tests (running statistics are mutable inputs)',
    'aten::lift_fresh_copy.out': 'unit tests (export re-traces it into clone)',
    'et_copy::_d2h_copy.out': 'unit tests (needs device memory, which etch has not: '
                              'InvalidArgument, as ExecuTorch on CPU tensors)',
    'et_copy::_h2d_copy.out': 'unit tests (needs device memory, which etch has not: '
                              'InvalidArgument, as ExecuTorch on CPU tensors)',
}
dtypes = collections.defaultdict(set)
count = collections.Counter()
for entry in index:
    io = yaml.safe_load(open(os.path.join(cases, entry['case'] + '.io.yaml')))
    kinds = {t['dtype'] for t in io['inputs'] + io['outputs']}
    for op in entry['operators']:
        dtypes[op] |= kinds
        count[op] += 1
# What the training-only, random and uninitialised-output operators do here.
NOTES = {
    'aten::convolution_backward.out': 'gradients of a 2-d, non-transposed convolution '
                                      '(as ExecuTorch\'s kernel supports)',
    'aten::max_pool2d_with_indices_backward.grad_input': 'routes each gradient to the '
                                                         'input position its index names',
    'aten::native_dropout.out': 'training mode draws a keep mask and scales kept values '
                                'by 1/(1-p), as PyTorch (ExecuTorch does not scale)',
    'aten::rand.out': 'uniform [0, 1) from a SplitMix64 stream per call (values are not '
                      'PyTorch\'s; cases check dtype and shape)',
    'aten::randn.out': 'standard normal (Box-Muller) from a SplitMix64 stream per call',
    'aten::empty.out': 'resizes; contents unspecified',
    'dim_order_ops::_empty_dim_order.out': 'resizes; contents unspecified',
}
print('| operator | dtypes covered by the conformance cases | cases | notes |')
print('|---|---|---|---|')
for op in sorted(dtypes):
    ds = ', '.join(sorted(dtypes[op], key=lambda d: order.index(d) if d in order else 99))
    print(f'| `{op}` | {ds} | {count[op]} | {NOTES.get(op, "")} |')
for op, why in sorted(UNREACHABLE.items()):
    print(f'| `{op}` | — | 0 | {why} |')

# ExecuTorch's quantized library (kernels/quantized/quantized.yaml): the q_* programs in
# tests/fixtures (`cargo test -p etch-tests --test quantized`, compared with ExecuTorch's
# own quantized kernels), and unit tests for the operators no case calls.
fixtures = os.path.join(root, 'tests', 'fixtures')
q_index = yaml.safe_load(open(os.path.join(fixtures, 'q_dq_ops.index.yaml')))
q_dtypes = collections.defaultdict(set)
q_count = collections.Counter()
for entry in q_index:
    io = yaml.safe_load(open(os.path.join(fixtures, entry['case'] + '.io.yaml')))
    kinds = {t['dtype'] for t in io['inputs'] + io['outputs']}
    for op in entry['operators']:
        q_dtypes[op] |= kinds
        q_count[op] += 1
Q_UNIT = {
    'quantized_decomposed::add.out': 'unit tests: uint8 to int64 data, ranges in [0, 255]',
    'quantized_decomposed::embedding_2bit.out': 'unit tests: uint8 packing four values, '
                                                'float32/16, bfloat16 params',
    'quantized_decomposed::embedding_2bit.dtype_out': 'unit tests',
    'quantized_decomposed::embedding_4bit.out': 'unit tests: uint8 packing two values, '
                                                'float32/16, bfloat16 params',
    'quantized_decomposed::embedding_4bit.dtype_out': 'unit tests',
    'quantized_decomposed::embedding_byte.dtype_out': 'unit tests: scales in any of '
                                                      'float32/16, bfloat16',
    'quantized_decomposed::mixed_linear.out': 'unit tests: float32/16 input, int8 weight, '
                                              'per-row or grouped scales; no zero points '
                                              '(as ExecuTorch)',
    'quantized_decomposed::mixed_mm.out': 'unit tests: float32/16 input, int8 weight; no '
                                          'zero points (as ExecuTorch)',
}
print()
print('## Quantized operators')
print()
print("ExecuTorch 1.5's quantized library (`kernels/quantized/quantized.yaml`, 19 operators,")
print("`src/quantized/`), with ExecuTorch's arithmetic: float32 steps, half-to-even rounding,")
print('saturation to `[quant_min, quant_max]`. Cases are the `q_*` programs of')
print('`tests/fixtures/q_dq_ops.index.yaml`, compared exactly with ExecuTorch\'s quantized')
print('kernels; `mv2_q8_portable` runs three of them 365 kernel calls deep.')
print()
print('| operator | dtypes covered by the cases | cases | notes |')
print('|---|---|---|---|')
for op in sorted(set(q_dtypes) | set(Q_UNIT)):
    ds = ', '.join(sorted(q_dtypes[op], key=lambda d: order.index(d) if d in order else 99))
    print(f'| `{op}` | {ds or "—"} | {q_count[op]} | {Q_UNIT.get(op, "")} |')
