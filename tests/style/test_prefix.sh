#!/bin/sh
# The statics of every src/**/*.c carry one of their file's prefixes (STYLE.md: the file name is
# the function prefix): the file's name, the prefixes of its public functions, or the one
# abbreviation tests/style/prefixes registers for it (kr_ for kuberuntime/, pl_ for pleg.c...).
# A new file needs no line there while its statics begin with its own name. Prints each
# offender as FILE:LINE: NAME (allowed: ...).
set -u
top=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
exec python3 - "$top" <<'PY'
import collections, glob, os, re, sys
top = sys.argv[1]
reg = {}
for line in open(os.path.join(top, "tests/style/prefixes")):
    line = line.split("#", 1)[0].split()
    if line:
        reg[line[0]] = set(line[1:])
bad = 0
for path in sorted(glob.glob(os.path.join(top, "src/**/*.c"), recursive=True)):
    rel = os.path.relpath(path, top)
    s = open(path).read()
    base = os.path.basename(rel)[:-2]
    allowed = {base + "_"} | reg.get(rel, set())
    allowed |= {m.group(1).split("_")[0] + "_"
                for m in re.finditer(r"^(?!static)[a-z][^\n;=(]*\n([a-z_][a-z0-9_]*)\(", s, re.M)}
    for m in re.finditer(r"^static [^\n;=(]*\n([a-z_][a-z0-9_]*)\(", s, re.M):
        name = m.group(1)
        if not any(name.startswith(a) for a in allowed):
            line = s.count("\n", 0, m.start()) + 2
            print("%s:%d: %s (allowed: %s)" % (rel, line, name, " ".join(sorted(allowed))))
            bad += 1
print("%d statics without their file's prefix" % bad)
sys.exit(1 if bad else 0)
PY
