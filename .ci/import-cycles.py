#!/usr/bin/env python3
"""Fails when a module of a crate imports, directly or through others, a
module that imports it back.

Each `.rs` file under the given crate roots is a module. An edge A -> B is a
path `crate::…`, `super::…` or `self::…` (in a `use`, a `pub use` or in code)
in A that resolves to module B (the longest module path that exists). `mod x;`
declarations are not edges, and tests at the bottom of a file (`#[cfg(test)]`)
are left out.

A name the crate root re-exports (`pub use a::b::C;`) counts as the module
it comes from when another module names it `crate::C`.

Two graphs are checked: the modules themselves, and the top-level modules
(every module counted as the top-level module it lies in, the crate root left
out), so that the crate's top level reads as layers, each importing only
those below it.
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


def reexports(mods):
    """Names the crate root re-exports (`pub use a::b::C;` -> C: a::b::C), so
    that `crate::C` in a module counts as an import of `a::b`."""
    out = {}
    root = mods.get(())
    if root is None:
        return out
    for body in re.findall(r"\bpub\s+use\s+([^;]+);", strip(open(root, encoding="utf-8").read())):
        for p in expand_use(re.sub(r"\s+", "", body)):
            segs = p.split(" as ")[0].split("::")
            name = p.split(" as ")[-1].split("::")[-1]
            if segs[0] not in ("crate", "self", "super") and tuple(segs[:1]) in mods:
                out[name] = segs
    return out


def edges(mods):
    graph = {m: set() for m in mods}
    root_names = reexports(mods)
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
                if segs and (segs[0],) not in mods and segs[0] in root_names:
                    segs = root_names[segs[0]] + segs[1:]
            elif segs[0] == "self":
                # `self` is this module itself (`a/b.rs` and `a/b/mod.rs` alike).
                base, segs = mod, segs[1:]
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


def top_level(graph):
    """The graph of top-level modules: A -> B when a module inside A imports
    one inside B (the crate root, which only declares and re-exports, is left
    out)."""
    out = {}
    for mod, targets in graph.items():
        if not mod:
            continue
        out.setdefault(mod[:1], set())
        for t in targets:
            if t and t[:1] != mod[:1]:
                out[mod[:1]].add(t[:1])
                out.setdefault(t[:1], set())
    return out


def report(label, graph):
    """Prints the cycles of one graph; true when there is one."""
    found = cycles(graph)
    name = lambda m: "::".join(m) or "crate"
    print(f"{label}: {len(graph)} modules, {sum(map(len, graph.values()))} imports, {len(found)} cycles")
    for comp in found:
        print("  cycle: " + " <-> ".join(sorted(name(m) for m in comp)))
        for m in sorted(comp):
            print(f"    {name(m)} -> " + ", ".join(sorted(name(t) for t in graph[m] if t in comp)))
    return bool(found)


def main():
    failed = False
    for root in sys.argv[1:]:
        graph = edges(modules(root))
        failed |= report(root, graph)
        failed |= report(f"{root} (top level)", top_level(graph))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
