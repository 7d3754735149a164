#!/usr/bin/env python3
"""Fails when a source file or a function has grown past its limit.

Each `.rs` file under the given directories may have at most MAX_FILE lines
(all of it, tests included), and each function outside the tests at the
bottom of a file (`#[cfg(test)]`) at most MAX_FN lines, from its `fn` line to
its closing brace. A function is found by its `fn` keyword; its body is
matched brace by brace with comments, strings and characters masked out.
Usage: sizes.py DIR [DIR …]
"""
import os
import re
import sys

MAX_FILE = 450
MAX_FN = 60

LEXEMES = re.compile(
    r"//[^\n]*"
    r"|/\*[\s\S]*?\*/"
    r"|(?<!\w)b?r(#+)\"[\s\S]*?\"\1"
    r'|(?<!\w)b?r"[^"]*"'
    r"|(?<!\w)b?'(?:\\.|[^'\\])'"
    r'|(?<!\w)b?"(?:\\.|[^"\\])*"'
)
FN = re.compile(r"\bfn\s+(\w+)")


def masked(text):
    """The text with comments and literals blanked, newlines kept."""
    return LEXEMES.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def functions(code):
    """(name, first line, last line) of each function with a body."""
    out = []
    for m in FN.finditer(code):
        # The body starts at the first `{` before any `;` (a declaration
        # without a body, in a trait, ends at `;`).
        i = m.end()
        depth = 0
        while i < len(code):
            c = code[i]
            if c in "(<[":
                depth += 1
            elif c in ")>]":
                depth -= 1
            elif c == ";" and depth <= 0:
                break
            elif c == "{" and depth <= 0:
                break
            i += 1
        if i >= len(code) or code[i] != "{":
            continue
        level, j = 0, i
        while j < len(code):
            if code[j] == "{":
                level += 1
            elif code[j] == "}":
                level -= 1
                if level == 0:
                    break
            j += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, j) + 1
        out.append((m.group(1), first, last))
    return out


def main():
    failed = []
    files = fns = 0
    for root in sys.argv[1:]:
        for d, _, names in os.walk(root):
            for f in sorted(names):
                if not f.endswith(".rs"):
                    continue
                path = os.path.join(d, f)
                text = open(path, encoding="utf-8").read()
                files += 1
                lines = text.count("\n")
                if lines > MAX_FILE:
                    failed.append(f"{path}: {lines} lines (at most {MAX_FILE})")
                code = masked(text).split("#[cfg(test)]")[0]
                for name, first, last in functions(code):
                    fns += 1
                    if last - first + 1 > MAX_FN:
                        failed.append(f"{path}:{first}: fn {name} has {last - first + 1} lines (at most {MAX_FN})")
    print(f"{files} files, {fns} functions; {len(failed)} over their limit")
    for line in failed:
        print("  " + line)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
