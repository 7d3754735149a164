#!/usr/bin/env python3
"""Stricter than the suite's exit code: every scenario in RESULTS_DIR must
have no FAILURE and no WARNING check, scored or not, except the scenarios of
extensions this server does not advertise (listed in IGNORED_PREFIXES).

    check.py RESULTS_DIR
"""
import glob
import json
import os
import re
import sys

# The tasks extension (io.modelcontextprotocol/tasks) is not advertised by
# this server; the suite runs its scenarios anyway and they do not count.
IGNORED_PREFIXES = ("tasks-",)


def main():
    results = sys.argv[1]
    bad = []
    seen = 0
    for path in sorted(glob.glob(os.path.join(results, "server-*", "checks.json"))):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\dZ.-]+$", "", os.path.basename(os.path.dirname(path))[len("server-"):])
        if name.startswith(IGNORED_PREFIXES):
            continue
        seen += 1
        for check in json.load(open(path, encoding="utf-8")):
            if check.get("status") in ("FAILURE", "WARNING"):
                bad.append(f"{name}: {check['status']} {check.get('id')}: {check.get('errorMessage', '')}")
    if seen == 0:
        sys.exit(f"no scenario results under {results}")
    for line in bad:
        print(line)
    print(f"{seen - len({b.split(':')[0] for b in bad})} passed, {len({b.split(':')[0] for b in bad})} failed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
