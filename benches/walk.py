#!/usr/bin/env python3
"""What one request costs in code, from two callgrind runs of the same
scenario at two sizes (SMALL and LARGE requests): the files of this
workspace whose code runs for each request, the calls between two of its
files per request, and the JSON conversions (serde_json parses and
serializations) per request. Whatever does not grow with the requests
(start-up, shutdown) cancels out.

    python3 benches/walk.py SMALL_OUT LARGE_OUT SMALL LARGE [--root DIR]

Run by benches/walk.sh, which makes the two outputs (a debug build: the
workspace's own code keeps its line tables and is not inlined away).
"""
import argparse
import collections
import os
import re
import sys

# serde_json's entry points that parse or serialize a whole value.
CONVERSIONS = re.compile(
    r"^serde_json::(de::from_(slice|str|reader|trait)|value::(from_value|to_value)|"
    r"ser::(to_vec|to_string|to_writer|to_vec_pretty|to_string_pretty))\b"
)


# A function of this workspace's crates, by its name: code of other crates
# inlined into a file of ours (its line table names our file) and the
# allocator's shim (`__rustc::__rust_alloc`, placed where the global
# allocator is declared) are not counted as ours.
OURS = re.compile(r"^<*(actix_mcp|mcp_protocol)::")


def ours(fn):
    return bool(fn and OURS.match(fn))


def parse(path, root, as_compiled=False):
    """Self cost per workspace file, calls per (caller file, callee file),
    and conversion calls, as counters. `as_compiled` (an optimized build):
    code inlined into a function counts in that function's file, so the
    hops are the calls the compiled code makes."""
    names = {"fl": {}, "fn": {}}
    cost = collections.Counter()
    fcost = collections.Counter()
    edges = collections.Counter()
    conversions = collections.Counter()
    fl = fi = cfl = cfn = fn = None
    pending_call = None

    def name(kind, text):
        m = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not m:
            return text
        table = names["fn" if kind == "fn" else "fl"]
        if m.group(2) is not None:
            table[m.group(1)] = m.group(2)
        return table.get(m.group(1), "?")

    def own(f):
        if not f or f.startswith("/rustc/") or ".cargo/" in f or f == "???":
            return None
        if f.startswith(root + "/"):
            f = f[len(root) + 1 :]
        return f if re.match(r"^(actors/)?src/", f) else None

    with open(path, errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                continue
            key, _, rest = line.partition("=")
            if key in ("fl",):
                fl = fi = name("fl", rest)
            elif key in ("fi", "fe"):
                fi = name("fl", rest)
            elif key == "fn":
                fn = name("fn", rest)
                fi = fl
            elif key in ("cfl", "cfi"):
                cfl = name("fl", rest)
            elif key == "cfn":
                cfn = name("fn", rest)
            elif key == "calls":
                n = int(rest.split()[0])
                pending_call = (n, cfl, cfn)
            elif line[0].isdigit() or line[0] in "+-*":
                parts = line.split()
                ir = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
                at = fl if as_compiled else fi
                if pending_call:
                    n, callee_file, callee_fn = pending_call
                    here = own(at) if ours(fn) else None
                    there = own(callee_file) if ours(callee_fn) else None
                    if here and there and here != there:
                        edges[(here, there)] += n
                    if here and callee_fn and CONVERSIONS.match(callee_fn):
                        conversions[(here, callee_fn.split("<")[0])] += n
                    pending_call = None
                    cfl = cfn = None
                elif own(at) and ours(fn):
                    cost[own(at)] += ir
                    fcost[(own(at), fn)] += ir
    return cost, edges, conversions, fcost


def per_request(small, large, n):
    return {k: (large[k] - small.get(k, 0)) / n for k in large if large[k] > small.get(k, 0)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("small_out")
    ap.add_argument("large_out")
    ap.add_argument("small", type=int)
    ap.add_argument("large", type=int)
    ap.add_argument("--root", default=os.getcwd())
    ap.add_argument("--label", default="request")
    ap.add_argument("--functions", action="store_true", help="list each file's functions under it")
    ap.add_argument("--as-compiled", action="store_true", help="an optimized build: inlined code counts where it was inlined")
    a = ap.parse_args()
    n = a.large - a.small
    s_cost, s_edges, s_conv, s_fn = parse(a.small_out, a.root, a.as_compiled)
    l_cost, l_edges, l_conv, l_fn = parse(a.large_out, a.root, a.as_compiled)
    files = {f: c for f, c in per_request(s_cost, l_cost, n).items() if c >= 1}
    edges = {e: c for e, c in per_request(s_edges, l_edges, n).items() if c >= 0.5}
    conv = {e: c for e, c in per_request(s_conv, l_conv, n).items() if c >= 0.5}
    print(f"# {a.label}: per request, over {n} requests")
    print(f"files ({len(files)}), instructions of their own code:")
    fns = collections.defaultdict(list)
    if a.functions:
        for (f, fn), c in per_request(s_fn, l_fn, n).items():
            if c >= 1:
                fns[f].append((c, fn))
    for f, c in sorted(files.items(), key=lambda kv: -kv[1]):
        print(f"  {c:10.0f}  {f}")
        for fc, fn in sorted(fns[f], reverse=True):
            print(f"  {'':10}      {fc:7.0f}  {fn}")
    total_calls = sum(edges.values())
    print(f"calls between two files: {total_calls:.0f} per request, over {len(edges)} pairs")
    server_edges = {e: c for e, c in edges.items() if all(f.startswith("actors/src/") and not f.startswith("actors/src/catalogs/") for f in e)}
    print(f"  of them within the server's crate: {sum(server_edges.values()):.0f}, over {len(server_edges)} pairs")
    for (a_, b), c in sorted(edges.items(), key=lambda kv: -kv[1]):
        print(f"  {c:6.1f}  {a_} -> {b}")
    total_conv = sum(conv.values())
    print(f"JSON conversions: {total_conv:.0f} per request")
    for (f, fn), c in sorted(conv.items(), key=lambda kv: -kv[1]):
        print(f"  {c:6.1f}  {fn} in {f}")
    tool = [f for f in files if f.startswith("actors/src/catalogs/")]
    protocol = [f for f in files if f.startswith("src/")]
    server = len(files) - len(tool) - len(protocol)
    print(f"walk {a.label}: {len(files)} files ({server} of the server's crate, {len(protocol)} of the protocol crate, "
          f"{len(tool)} of the tool itself), {total_calls:.0f} cross-file calls, {total_conv:.0f} JSON conversions")


if __name__ == "__main__":
    sys.exit(main())
