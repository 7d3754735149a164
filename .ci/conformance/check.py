#!/usr/bin/env python3
"""Stricter than the suite's exit code: every scenario in RESULTS_DIR must
have no FAILURE and no WARNING check, scored or not (the extensions'
scenarios, which the suite does not score, included); every scenario named
after --expect must have run with no check SKIPPED (a scenario the suite
skipped, for instance because the server did not declare the extension it
tests, is a failure), and every scenario named after --ran must have run.
Scenarios named after --ignore are left out (a caller says why).

    check.py RESULTS_DIR [--expect SCENARIO...] [--ran SCENARIO...] [--ignore SCENARIO...]

Server results are `server-<scenario>-<time>/checks.json`, client results
`<scenario>-<time>/checks.json` (an `auth/…` scenario one folder down).
"""
import glob
import json
import os
import re
import sys


def names_after(flag):
    """The arguments after FLAG, up to the next flag."""
    if flag not in sys.argv:
        return set()
    out = set()
    for arg in sys.argv[sys.argv.index(flag) + 1:]:
        if arg.startswith("--"):
            break
        out.add(arg)
    return out


def scenario_of(results, path):
    """The scenario a checks.json belongs to: its folder under RESULTS_DIR
    without the time stamp (and the `server-` prefix)."""
    rel = os.path.relpath(os.path.dirname(path), results)
    name = re.sub(r"-\d{4}-\d\d-\d\dT[\dZ.-]+$", "", rel)
    return name[len("server-"):] if name.startswith("server-") else name


def main():
    results = sys.argv[1]
    expected = names_after("--expect")
    must_run = expected | names_after("--ran")
    ignored = names_after("--ignore")
    bad = []
    seen = 0
    ran = set()
    for path in sorted(glob.glob(os.path.join(results, "**", "checks.json"), recursive=True)):
        name = scenario_of(results, path)
        if name in ignored:
            continue
        seen += 1
        ran.add(name)
        for check in json.load(open(path, encoding="utf-8")):
            status = check.get("status")
            if status in ("FAILURE", "WARNING") or (status == "SKIPPED" and name in expected):
                bad.append(f"{name}: {status} {check.get('id')}: {check.get('errorMessage', '')}")
    if seen == 0:
        sys.exit(f"no scenario results under {results}")
    for name in sorted(must_run - ran):
        bad.append(f"{name}: did not run")
    for line in bad:
        print(line)
    failed = {b.split(":")[0] for b in bad}
    print(f"{len(ran - failed)} passed, {len(failed)} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
