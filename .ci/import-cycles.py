#!/usr/bin/env python3
"""Fails when a module of a crate imports, directly or through others, a
module that imports it back.

Each `.rs` file under the given crate roots is a module. An edge A -> B is a
path `crate::…` or `super::…` (in a `use` or in code) in A that resolves to
module B (the longest module path that exists). `mod x;` declarations are
not edges, and tests at the bottom of a file (`#[cfg(test)]`) are left out.
Usage: import-cycles.py SRC_DIR [SRC_DIR …]   (each the directory of a lib.rs)
"""
import os
import re
import sys


def modules(root):
    """Module path (tuple) -> file, for one crate."""
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(d, f), root)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            if rel == [] and f == "main.rs":
                continue  # the binary is a crate of its own
            out[tuple(rel)] = os.path.join(d, f)
    return out


LEXEMES = re.compile(
    r"//[^\n]*"  # line comments (doc comments too)
    r"|/\*[\s\S]*?\*/"  # block comments
    r"|(?<!\w)b?r(#+)\"[\s\S]*?\"\1"  # raw strings with hashes
    r'|(?<!\w)b?r"[^"]*"'  # raw strings
    r"|(?<!\w)b?'(?:\\.|[^'\\])'"  # char and byte literals
    r'|(?<!\w)b?"(?:\\.|[^"\\])*"'  # strings
)


def strip(text):
    """The code of a file without its tests, comments and literals (one
    left-to-right pass, so `//` inside a string is not a comment)."""
    text = text.split("#[cfg(test)]")[0]
    return LEXEMES.sub(lambda m: '""' if m.group(0)[:1] in "rb\"'" else " ", text)


def expand_use(body):
    """`a::{b, c::{d}}` -> [a::b, a::c::d] (enough for resolution)."""
    m = re.match(r"([\w:]*?)::\{(.*)\}$", body, re.S)
    if not m:
        return [body]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    return [p for part in parts if part.strip() for p in expand_use(prefix + "::" + part.strip())]


def edges(mods):
    graph = {m: set() for m in mods}
    for mod, path in mods.items():
        text = strip(open(path, encoding="utf-8").read())
        paths = []
        for body in re.findall(r"\buse\s+([^;]+);", text):
            paths += expand_use(re.sub(r"\s+", "", body))
        paths += re.findall(r"\b((?:crate|super)(?:::\w+)+)", text)
        for p in paths:
            segs = p.split(" as ")[0].split("::")
            if segs[0] == "crate":
                base, segs = (), segs[1:]
            elif segs[0] == "super":
                # `super` is the parent module, for `a/b.rs` and `a/b/mod.rs` alike.
                base = mod
                while segs and segs[0] == "super":
                    base, segs = base[:-1], segs[1:]
            else:
                continue
            target = base + tuple(segs)
            while target not in mods and target:
                target = target[:-1]
            if target != mod and target in mods:
                graph[mod].add(target)
    return graph


def cycles(graph):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def main():
    failed = False
    for root in sys.argv[1:]:
        mods = modules(root)
        graph = edges(mods)
        found = cycles(graph)
        name = lambda m: "::".join(m) or "crate"
        print(f"{root}: {len(mods)} modules, {sum(map(len, graph.values()))} imports, {len(found)} cycles")
        for comp in found:
            failed = True
            print("  cycle: " + " <-> ".join(sorted(name(m) for m in comp)))
            for m in sorted(comp):
                print(f"    {name(m)} -> " + ", ".join(sorted(name(t) for t in graph[m] if t in comp)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
