#!/usr/bin/env python3
"""promparse.py FAMILY [LABEL=VALUE ...] < EXPOSITION

Reads a /metrics answer (Prometheus text format 0.0.4) on stdin and parses ALL of it with
Debian's python3-prometheus-client: a malformed exposition exits 2. Then, for the family
FAMILY as exposed (e.g. kubelet_evictions), checks that its "# HELP FAMILY text" (text not
empty) and "# TYPE FAMILY type" lines come once each, before its first sample if it has
any (exit 4 otherwise), and prints "TYPE VALUE": its type and the value of the sample whose labels are
exactly the LABEL=VALUE pairs given (exit 3 when there is none).
"""
import sys

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("promparse: python3-prometheus-client is not installed", file=sys.stderr)
    sys.exit(77)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 1
    fam = sys.argv[1]
    want = dict(a.split("=", 1) for a in sys.argv[2:])
    text = sys.stdin.read()
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as e:  # the parser raises ValueError and others
        print("promparse: the exposition does not parse: %s" % e, file=sys.stderr)
        return 2
    helps = [l for l in text.splitlines() if l.startswith("# HELP %s " % fam)]
    types = [l for l in text.splitlines() if l.startswith("# TYPE %s " % fam)]
    first = next((i for i, l in enumerate(text.splitlines())
                  if l.startswith(fam + "{") or l.startswith(fam + " ")), None)
    type_at = next((i for i, l in enumerate(text.splitlines())
                    if l.startswith("# TYPE %s " % fam)), None)
    if len(helps) != 1 or len(types) != 1 or not helps[0][len("# HELP %s " % fam):].strip() \
            or (first is not None and type_at > first):
        print("promparse: %s: HELP %d, TYPE %d, first sample at %s, TYPE at %s"
              % (fam, len(helps), len(types), first, type_at), file=sys.stderr)
        return 4
    # The library names a counter's family without its "_total" and its samples with it.
    names = {fam, fam[:-len("_total")] if fam.endswith("_total") else fam}
    for f in families:
        if f.name not in names:
            continue
        for s in f.samples:
            if s.labels == want and s.name in (fam, fam + "_total", f.name + "_total"):
                v = s.value
                print(f.type, int(v) if v == int(v) else v)
                return 0
    print("promparse: %s%s: no such sample" % (fam, want), file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
