#!/usr/bin/env python3
"""Tabulates and plots what `benches/scale.sh` measured.

    scale_plot.py RESULTS.tsv OUT_DIR

RESULTS.tsv has one row per measurement: curve, server, size, then the
`key=value` figures. For each curve this writes OUT_DIR/CURVE.svg (each
figure against the size, one line per server, both axes logarithmic) and
prints a Markdown table; then it checks that no figure grows faster than
linearly with the size: per step, the figure's growth factor over the
size's, and says which do.
"""
import math
import sys
from collections import defaultdict

# What each curve plots: (figure key, label, unit, per-item?) — a figure
# that should stay flat as the size grows is marked per-item (its growth
# is judged against 1, not against the size's).
FIGURES = {
    "catalog": [("list_ms", "tools/list, every page", "ms", False),
                ("call_us", "one tools/call", "µs", True),
                ("read_us", "one resources/read", "µs", True),
                ("rss_kib", "server RSS", "KiB", False),
                ("event_ms", "list_changed to the listeners, server CPU", "ms", True)],
    "listeners": [("per_stream_kib", "RSS per stream", "KiB", True),
                  ("open_s", "time to open them all", "s", False),
                  ("p99_ms", "p99 until every stream has the event", "ms", False),
                  ("per_delivery_us", "server CPU per delivery", "µs", True),
                  ("client_us", "mcp-load's CPU per delivery", "µs", True)],
    "subscriptions": [("per_delivery_us", "server CPU per delivery", "µs", True),
                      ("event_ms", "server CPU per event", "ms", True)],
    "inflight": [("per_call_kib", "RSS per in-flight call", "KiB", True),
                 ("fast_p50_us", "fast call beside them, p50", "µs", True),
                 ("fast_p99_us", "fast call beside them, p99", "µs", True)],
    "sessions": [("per_session_kib", "RSS per session", "KiB", True),
                 ("call_rps", "tools/call in one session", "req/s", True),
                 ("call_p99_us", "its p99", "µs", True)],
    "tasks": [("per_task_kib", "memory per task", "KiB", True),
              ("create_per_s", "creation", "tasks/s", True),
              ("get_p50_us", "tasks/get p50", "µs", True),
              ("get_p99_us", "tasks/get p99", "µs", True)],
    "instances": [("p99_ms", "p99 until every stream has the event", "ms", True),
                  ("redis_ms", "Redis CPU per event", "ms", True),
                  ("event_ms", "server CPU per event, all instances", "ms", True)],
}
FIGURES["listeners_h1"] = FIGURES["listeners"]
SIZE = {"catalog": "tools and resources", "listeners": "idle listen streams over HTTP/2",
        "listeners_h1": "idle listen streams over HTTP/1.1",
        "subscriptions": "URIs per listen stream", "inflight": "concurrent sleeping calls",
        "sessions": "legacy sessions", "tasks": "live tasks", "instances": "instances over one Redis"}
COLOURS = ["#1f5fa8", "#c0392b", "#27864a", "#8e44ad"]


def read(path):
    rows = defaultdict(lambda: defaultdict(dict))
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 3:
            continue
        curve, server, size = parts[0], parts[1], int(parts[2])
        for kv in parts[3:]:
            for pair in kv.split():
                if "=" in pair:
                    k, v = pair.split("=", 1)
                    try:
                        rows[curve][server].setdefault(size, {})[k] = float(v)
                    except ValueError:
                        pass
    return rows


def fmt(v):
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:,.0f}"
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def svg(curve, servers, path):
    figures = [f for f in FIGURES[curve] if any(f[0] in p for s in servers.values() for p in s.values())]
    w, h, pad, gap = 360, 230, 52, 24
    total_w = len(figures) * (w + gap) + gap
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{h + 70}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="100%" height="100%" fill="white"/>',
           f'<text x="{gap}" y="16" font-size="13" font-weight="bold">{curve}: against {SIZE[curve]} (log–log)</text>']
    for i, (key, label, unit, _) in enumerate(figures):
        x0, y0 = gap + i * (w + gap), 30
        pts = {s: sorted((n, p[key]) for n, p in sizes.items() if key in p and p[key] > 0)
               for s, sizes in servers.items()}
        xs = [n for v in pts.values() for n, _ in v]
        ys = [y for v in pts.values() for _, y in v]
        if not xs:
            continue
        lx0, lx1 = math.log10(min(xs)), math.log10(max(xs))
        ly0, ly1 = math.log10(min(ys)), math.log10(max(ys))
        if lx1 - lx0 < 1e-9:
            lx0, lx1 = lx0 - 0.5, lx1 + 0.5
        if ly1 - ly0 < 0.3:
            mid = (ly0 + ly1) / 2
            ly0, ly1 = mid - 0.3, mid + 0.3
        px = lambda n: x0 + pad + (math.log10(n) - lx0) / (lx1 - lx0) * (w - pad - 10)
        py = lambda v: y0 + h - 30 - (math.log10(v) - ly0) / (ly1 - ly0) * (h - 50)
        out.append(f'<rect x="{x0 + pad}" y="{y0 + 10}" width="{w - pad - 10}" height="{h - 40}" '
                   f'fill="none" stroke="#999"/>')
        out.append(f'<text x="{x0 + pad}" y="{y0 + 5}" font-weight="bold">{label} ({unit})</text>')
        for n in sorted(set(xs)):
            out.append(f'<text x="{px(n):.1f}" y="{y0 + h - 14}" text-anchor="middle">{n:,}</text>')
        for v in (min(ys), max(ys)):
            out.append(f'<text x="{x0 + pad - 4}" y="{py(v) + 4:.1f}" text-anchor="end">{fmt(v)}</text>')
        for j, (server, p) in enumerate(pts.items()):
            if not p:
                continue
            c = COLOURS[j % len(COLOURS)]
            line = " ".join(f"{px(n):.1f},{py(v):.1f}" for n, v in p)
            out.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
            out += [f'<circle cx="{px(n):.1f}" cy="{py(v):.1f}" r="3" fill="{c}"/>' for n, v in p]
    for j, server in enumerate(servers):
        c = COLOURS[j % len(COLOURS)]
        out.append(f'<rect x="{gap + j * 160}" y="{h + 48}" width="12" height="12" fill="{c}"/>'
                   f'<text x="{gap + j * 160 + 18}" y="{h + 58}">{server}</text>')
    out.append("</svg>")
    open(path, "w").write("\n".join(out) + "\n")


def growth(curve, servers):
    """Steps where a figure grows faster than it may: more than 1.25x the
    size's factor in a step (totals), or more than 1.5x over the range
    (per-item figures)."""
    problems = []
    for key, label, _, per_item in FIGURES[curve]:
        for server, sizes in servers.items():
            p = sorted((n, v[key]) for n, v in sizes.items() if key in v and v[key] > 0)
            if len(p) < 2:
                continue
            if per_item:
                # Per-item figures may fall. A rise is judged against the
                # smallest of the sizes but the first (fixed costs dominate
                # the first), and only when the two largest sizes both show
                # it, so that one noisy tail latency is not a trend.
                base = min(v for _, v in p[1:-1]) if len(p) > 2 else p[0][1]
                top = min(v for _, v in p[-2:])
                if top > 1.5 * base and top - base > 1.0:
                    problems.append(f"{curve}/{server}: {label} {fmt(base)} -> {fmt(top)} up to {p[-1][0]:,}")
            else:
                for (n0, v0), (n1, v1) in zip(p, p[1:]):
                    if v1 / v0 > 1.25 * (n1 / n0) and v1 - v0 > 1.0:
                        problems.append(f"{curve}/{server}: {label} x{v1 / v0:.1f} for x{n1 / n0:.1f} size, {n0:,} -> {n1:,}")
    return problems


def main():
    rows = read(sys.argv[1])
    out = sys.argv[2]
    problems = []
    for curve in FIGURES:
        if curve not in rows:
            continue
        servers = rows[curve]
        svg(curve, servers, f"{out}/{curve}.svg")
        keys = [f for f in FIGURES[curve] if any(f[0] in p for s in servers.values() for p in s.values())]
        print(f"\n### {curve} ({SIZE[curve]}) — {out}/{curve}.svg\n")
        print("| server | size | " + " | ".join(f"{l} ({u})" for _, l, u, _ in keys) + " |")
        print("|---|---:|" + "---:|" * len(keys))
        for server, sizes in servers.items():
            for n in sorted(sizes):
                print(f"| {server} | {n:,} | " + " | ".join(fmt(sizes[n].get(k)) for k, *_ in keys) + " |")
        if len(servers) > 1 and "actix-mcp" in servers:
            for other in servers:
                if other == "actix-mcp":
                    continue
                common = sorted(set(servers["actix-mcp"]) & set(servers[other]))
                for k, label, unit, _ in keys:
                    ratios = [servers["actix-mcp"][n][k] / servers[other][n][k] for n in common
                              if servers["actix-mcp"][n].get(k) and servers[other][n].get(k)]
                    if ratios:
                        print(f"\nactix-mcp / {other}, {label}: " + ", ".join(f"{r:.2f}" for r in ratios)
                              + f" (at {', '.join(f'{n:,}' for n in common)})", end="")
            print()
        problems += growth(curve, servers)
    print("\n### Growth check\n")
    if problems:
        print("Faster than linear (a total growing more than 1.25x the size's factor in a step, "
              "or a per-item figure rising more than 1.5x):")
        for p in problems:
            print(f"- {p}")
    else:
        print("Every curve is linear or better: no total grows more than 1.25x the size's factor in a step, "
              "and no per-item figure rises more than 1.5x across the range.")


if __name__ == "__main__":
    main()
