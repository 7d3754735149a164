#!/usr/bin/env python3
"""Judges and plots a soak run's samples (written by `mcp-load soak`).

Pass criteria, per instance:
  - RSS stays within 10% of its plateau after the warm-up (the plateau is the
    median of the samples after the warm-up; the warm-up is the first quarter
    of the run, at least 60 s);
  - open files come back to the baseline (the last "after" sample is at or
    below the "baseline" one);
  - no request failed (the counters of the last sample).
Writes an SVG plot of RSS, open files and threads over time, with the Redis
restarts marked. Standard library only.

  python3 benches/soak/report.py target/soak/samples.csv \
      --restarts target/soak/redis-restarts.txt --svg target/soak/soak.svg
"""

import argparse
import statistics
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]


def load(path):
    meta, rows = {}, []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if line.startswith("#"):
                for part in line[1:].split():
                    k, _, v = part.partition("=")
                    meta[k] = v
                continue
            if line.startswith("t_s,"):
                continue
            t, phase, inst, rss, fds, threads, ok, failed, notes, listens = line.split(",")
            rows.append(
                dict(t=float(t), phase=phase, inst=int(inst), rss=int(rss), fds=int(fds), threads=int(threads),
                     ok=int(ok), failed=int(failed), notes=int(notes), listens=int(listens)))
    return meta, rows


def judge(meta, rows, tolerance):
    duration = float(meta.get("duration_s", max(r["t"] for r in rows)))
    # A quarter of the run; at least a minute when the run is long enough.
    warmup = max(min(60.0, duration / 2), duration / 4)
    verdicts, lines = [], []
    for inst in sorted({r["inst"] for r in rows}):
        mine = [r for r in rows if r["inst"] == inst]
        base = [r for r in mine if r["phase"] == "baseline"]
        load = [r for r in mine if r["phase"] == "load"]
        after = [r for r in mine if r["phase"] == "after"]
        steady = [r for r in load if r["t"] >= warmup]
        if not (base and after and steady):
            lines.append(f"instance {inst}: not enough samples (baseline {len(base)}, steady {len(steady)}, after {len(after)})")
            verdicts.append(False)
            continue
        plateau = statistics.median(r["rss"] for r in steady)
        lo, hi = min(r["rss"] for r in steady), max(r["rss"] for r in steady)
        dev = max(hi - plateau, plateau - lo) / plateau
        first, last = steady[0]["rss"], steady[-1]["rss"]
        rss_ok = dev <= tolerance
        fds_ok = after[-1]["fds"] <= base[0]["fds"]
        lines.append(
            f"instance {inst}: RSS baseline {base[0]['rss'] / 1024:.1f} MiB, plateau {plateau / 1024:.1f} MiB "
            f"(after {warmup:.0f} s warm-up), range {lo / 1024:.1f}-{hi / 1024:.1f} MiB = {dev * 100:.1f}% of the plateau "
            f"[{'ok' if rss_ok else 'FAIL'}: <= {tolerance * 100:.0f}%]; first→last steady sample "
            f"{first / 1024:.1f}→{last / 1024:.1f} MiB")
        lines.append(
            f"instance {inst}: open files baseline {base[0]['fds']}, peak {max(r['fds'] for r in load)}, "
            f"after {after[-1]['fds']} [{'ok' if fds_ok else 'FAIL'}]; threads baseline {base[0]['threads']}, "
            f"peak {max(r['threads'] for r in load)}, after {after[-1]['threads']}")
        verdicts += [rss_ok, fds_ok]
    last = rows[-1]
    failed_ok = last["failed"] == 0
    lines.append(
        f"requests ok {last['ok']}, failed {last['failed']} [{'ok' if failed_ok else 'FAIL'}]; "
        f"notifications received {last['notes']}; listen streams opened {last['listens']}")
    verdicts.append(failed_ok)
    return all(verdicts), lines, warmup


def svg(meta, rows, restarts, warmup, path):
    width, panel_h, left, right, top, gap = 900, 170, 70, 40, 58, 45
    panels = [("rss", "RSS (MiB)", lambda v: v / 1024), ("fds", "open files", float), ("threads", "threads", float)]
    height = top + len(panels) * (panel_h + gap) + 10
    t_max = max(r["t"] for r in rows) or 1.0
    x = lambda t: left + (width - left - right) * t / t_max
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="20" font-size="14">actix-mcp soak: two instances, Redis backend, '
           f'{float(meta.get("duration_s", t_max)) / 60:.0f} min (dashed: Redis restarts; grey: warm-up)</text>']
    for i, (key, label, f) in enumerate(panels):
        y0 = top + i * (panel_h + gap)
        vals = [f(r[key]) for r in rows]
        v_lo, v_hi = 0.0, max(vals) * 1.15 or 1.0
        y = lambda v: y0 + panel_h - panel_h * (v - v_lo) / (v_hi - v_lo)
        out.append(f'<rect x="{left}" y="{y0}" width="{x(min(warmup, t_max)) - left:.1f}" height="{panel_h}" fill="#eee"/>')
        out.append(f'<rect x="{left}" y="{y0}" width="{width - left - right}" height="{panel_h}" fill="none" stroke="#888"/>')
        for k in range(5):
            v = v_lo + (v_hi - v_lo) * k / 4
            out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.0f}</text>')
            out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="12" y="{y0 + panel_h / 2}" transform="rotate(-90 12 {y0 + panel_h / 2})" '
                   f'text-anchor="middle">{label}</text>')
        for r in restarts:
            out.append(f'<line x1="{x(r):.1f}" x2="{x(r):.1f}" y1="{y0}" y2="{y0 + panel_h}" stroke="#555" '
                       f'stroke-dasharray="4 3"/>')
        for inst in sorted({r["inst"] for r in rows}):
            pts = " ".join(f"{x(r['t']):.1f},{y(f(r[key])):.1f}" for r in rows if r["inst"] == inst)
            colour = COLOURS[inst % len(COLOURS)]
            out.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
            if i == 0:
                out.append(f'<text x="{left + 110 * inst}" y="40" fill="{colour}">'
                           f'&#9632; instance {"ab"[inst] if inst < 2 else inst}</text>')
        if i == len(panels) - 1:
            for k in range(6):
                t = t_max * k / 5
                out.append(f'<text x="{x(t):.1f}" y="{y0 + panel_h + 16}" text-anchor="middle">{t / 60:.1f} min</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("samples")
    ap.add_argument("--restarts", help="file of Redis restart times (epoch ms, one per line)")
    ap.add_argument("--svg", help="where to write the plot")
    ap.add_argument("--tolerance", type=float, default=0.10)
    args = ap.parse_args()
    meta, rows = load(args.samples)
    if not rows:
        print("no samples", file=sys.stderr)
        return 1
    restarts = []
    if args.restarts:
        start = int(meta.get("start_epoch_ms", 0))
        with open(args.restarts) as f:
            restarts = [(int(l) - start) / 1000 for l in f if l.strip()]
    ok, lines, warmup = judge(meta, rows, args.tolerance)
    print(f"Redis restarts at: {', '.join(f'{r:.0f} s' for r in restarts) or 'none'}")
    for line in lines:
        print(line)
    if args.svg:
        svg(meta, rows, restarts, warmup, args.svg)
        print(f"plot: {args.svg}")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
