#!/usr/bin/env python3
"""Prints et-ops/README.md's operator table from the conformance suite: for every
operator the suite calls, the input dtypes of the cases that exercise it (all of which
`cargo test -p etch-tests --test opcases` runs and checks against PyTorch).

Usage: python3 scripts/ops-table.py > /tmp/table.md  (needs PyYAML: pip install pyyaml)
"""
import collections
import os
import yaml

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cases = os.path.join(root, 'tests', 'fixtures', 'opcases')
index = yaml.safe_load(open(os.path.join(cases, 'index.yaml')))
order = ['bool', 'uint8', 'int8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64']
dtypes = collections.defaultdict(set)
count = collections.Counter()
for entry in index:
    io = yaml.safe_load(open(os.path.join(cases, entry['case'] + '.io.yaml')))
    kinds = {t['dtype'] for t in io['inputs'] + io['outputs']}
    for op in entry['operators']:
        dtypes[op] |= kinds
        count[op] += 1
print('| operator | dtypes covered by the conformance cases | cases |')
print('|---|---|---|')
for op in sorted(dtypes):
    ds = ', '.join(sorted(dtypes[op], key=lambda d: order.index(d) if d in order else 99))
    print(f'| `{op}` | {ds} | {count[op]} |')
