#!/usr/bin/env python3
"""The scored totals of a conformance run, as the requirement set counts them.

    score.py RESULTS_DIR REVISION

RESULTS_DIR is what `.ci/conformance/run URL REVISION -o RESULTS_DIR` wrote;
the requirement set (`requirements/REVISION.yaml` of the suite) is read from
the cache ($CONFORMANCE_HOME, default .conformance). The suite's own "Total"
line mixes scored and not-scored scenarios; this prints them apart, with the
scenarios that failed, and exits 1 when a scored scenario has a FAILURE.
"""
import glob
import json
import os
import re
import sys


def requirements(revision):
    home = os.environ.get("CONFORMANCE_HOME", ".conformance")
    files = sorted(glob.glob(os.path.join(home, "suite-*", "node_modules", "@modelcontextprotocol",
                                          "conformance", "requirements", f"{revision}.yaml")))
    if not files:
        sys.exit(f"score.py: no requirements for {revision} under {home}; run .ci/conformance/run first")
    scored, section = [], None
    for raw in open(files[-1], encoding="utf-8"):
        line = raw.split("#", 1)[0].rstrip()
        if line and not line.startswith(" "):
            section = line.rstrip(":")
        elif section == "server" and line.strip().startswith("- "):
            scored.append(line.strip()[2:].strip())
    return scored


def results(folder):
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "server-*", "checks.json"))):
        name = re.sub(r"-\d{4}-\d\d-\d\dT[\dZ.-]+$", "", os.path.basename(os.path.dirname(path))[len("server-"):])
        out[name] = [c.get("status") for c in json.load(open(path, encoding="utf-8"))]
    return out


def main():
    folder, revision = sys.argv[1], sys.argv[2]
    scored = set(requirements(revision))
    got = results(folder)
    for label, names in (("SCORED", sorted(n for n in got if n in scored)),
                         ("NOT SCORED", sorted(n for n in got if n not in scored))):
        checks = [s for n in names for s in got[n]]
        failing = [n for n in names if "FAILURE" in got[n]]
        passed = len(names) - len(failing)
        print(f"{label} {revision}: {passed}/{len(names)} scenarios pass; checks {checks.count('SUCCESS')} passed, "
              f"{checks.count('FAILURE')} failed, {checks.count('WARNING')} warnings")
        for n in failing:
            print(f"  FAIL  {n}")
    missing = sorted(scored - set(got))
    for n in missing:
        print(f"  MISSING  {n}")
    sys.exit(1 if missing or any("FAILURE" in got[n] for n in got if n in scored) else 0)


if __name__ == "__main__":
    main()
