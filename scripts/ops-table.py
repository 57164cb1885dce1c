#!/usr/bin/env python3
"""Prints et-ops/README.md's operator table from the conformance suites: for every
operator the cases call, the input dtypes of the cases that exercise it (all of which
`cargo test -p etch-tests --test opcases` and `--test opcases_parity` run and check
against PyTorch), then the operators no exported program can reach, which unit tests
cover.

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
