#!/usr/bin/env python3
"""Stricter than the suite's exit code: every scenario in RESULTS_DIR must
have no FAILURE and no WARNING check, scored or not (the extensions'
scenarios, which the suite does not score, included), and every scenario
named after --expect must have run with no check SKIPPED (a scenario the
suite skipped, for instance because the server did not declare the
extension it tests, is a failure).

    check.py RESULTS_DIR [--expect SCENARIO...]
"""
import glob
import json
import os
import re
import sys


def main():
    results = sys.argv[1]
    expected = set(sys.argv[sys.argv.index("--expect") + 1:]) if "--expect" in sys.argv else set()
    bad = []
    seen = 0
    ran = set()
    for path in sorted(glob.glob(os.path.join(results, "server-*", "checks.json"))):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\dZ.-]+$", "", os.path.basename(os.path.dirname(path))[len("server-"):])
        seen += 1
        ran.add(name)
        for check in json.load(open(path, encoding="utf-8")):
            status = check.get("status")
            if status in ("FAILURE", "WARNING") or (status == "SKIPPED" and name in expected):
                bad.append(f"{name}: {status} {check.get('id')}: {check.get('errorMessage', '')}")
    if seen == 0:
        sys.exit(f"no scenario results under {results}")
    for name in sorted(expected - ran):
        bad.append(f"{name}: did not run")
    for line in bad:
        print(line)
    print(f"{seen - len({b.split(':')[0] for b in bad})} passed, {len({b.split(':')[0] for b in bad})} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
