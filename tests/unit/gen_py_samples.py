#!/usr/bin/env python3
"""Embed tests/fuzz/corpus/*.py as C strings for test_parse.c (writes to stdout)."""
import glob
import os

out = ['/* py_samples.h: realistic TileLang and torch Python files, embedded for test_parse.c.',
       " * Generated from the .py files in tests/fuzz/corpus (the fuzzer's seeds); regenerate when they change:",
       ' *   python3 tests/unit/gen_py_samples.py > tests/unit/py_samples.h */',
       '#ifndef TILEC_PY_SAMPLES_H', '#define TILEC_PY_SAMPLES_H', '']
names = []
for f in sorted(glob.glob('tests/fuzz/corpus/*.py')):
    n = os.path.basename(f)[:-3]
    names.append(n)
    out.append('static const char py_sample_%s[] =' % n)
    for line in open(f).read().split('\n')[:-1]:
        out.append('    "%s\\n"' % line.replace('\\', '\\\\').replace('"', '\\"'))
    out[-1] += ';'
    out.append('')
out.append('static const struct { const char *name, *text; } py_samples[] = {')
out += ['    {"%s.py", py_sample_%s},' % (n, n) for n in names]
out += ['};', '#endif']
print('\n'.join(out))
