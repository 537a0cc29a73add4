#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns canopy-bench and peer JSON lines into a markdown table: per workload and
application, each run's median (min-max) build and traverse time, nodes per query,
and ratios of canopy's best time against each peer measured in the same run."""
import json
import sys
from collections import defaultdict


def fmt(sec):
    return f"{sec * 1e3:.1f}" if sec < 10 else f"{sec * 1e3:.0f}"


def main():
    rows = [json.loads(l) for f in sys.argv[1:] for l in open(f) if l.startswith("{")]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["label"], r["app"])].append(r)
    out = []
    for (label, app), rs in groups.items():
        out.append(f"\n### {label} — {app}\n")
        out.append("| run | backend | schedule | build ms med (min–max) | schedule ms "
                   "| traverse ms med (min–max) | nodes/query | work exp. |")
        out.append("|---|---|---|---|---|---|---|---|")
        ok = [r for r in rs if "error" not in r]
        for r in rs:
            if "error" in r:
                out.append(f"| {r['variant']} | {r['backend']} | {r['schedule']} | error: "
                           f"{r['error']} | | | | |")
                continue
            sched = fmt(r["schedule_med"]) if "schedule_med" in r else "-"
            out.append(
                f"| {r['variant']} | {r['backend']} | {r['schedule']} | {fmt(r['build_med'])} "
                f"({fmt(r['build_min'])}–{fmt(r['build_max'])}) | {sched} | "
                f"{fmt(r['traverse_med'])} ({fmt(r['traverse_min'])}–{fmt(r['traverse_max'])}) | "
                f"{r.get('nodes_per_query', float('nan')):.1f} | "
                f"{r.get('work_expansion', 0) or '-'} |")
        ours = [r for r in ok if not r.get("peer")]
        peers = [r for r in ok if r.get("peer")]
        if ours and peers:
            # Ratios count the schedule (a real cost of sorted runs) but not the build.
            best = min(ours, key=lambda r: r["traverse_med"] + r.get("schedule_med", 0.0))
            bt = best["traverse_med"] + best.get("schedule_med", 0.0)
            out.append("")
            for p in peers:
                out.append(f"- canopy best query ({best['variant']}/{best['backend']}/{best['schedule']}, "
                           f"{fmt(bt)} ms) vs {p['variant']} ({fmt(p['traverse_med'])} ms): "
                           f"**{p['traverse_med'] / bt:.2f}x** faster; build "
                           f"{fmt(best['build_med'])} vs {fmt(p['build_med'])} ms")
    print("\n".join(out))


if __name__ == "__main__":
    main()
