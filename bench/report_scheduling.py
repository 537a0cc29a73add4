#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tables for bench/results/scheduling.md from bench/run_scheduling.sh JSON lines.

Per (backend, workload, application): every fixed (variant, schedule) and auto/auto
with schedule, traverse and total (schedule + traverse) medians, nodes per query and
per warp/packet; then the summary: Liu Table 3.2's shape (nodes per warp unsorted /
tree / hybrid; fsm_l+hybrid against dr_l unsorted; hybrid against tree) and auto
against the best fixed pair (goal: within 10 %, never 1.5x slower)."""
import json
import sys
from collections import defaultdict


def ms(x):
    return f"{x * 1e3:.2f}" if x < 1 else f"{x * 1e3:.0f}"


def main(paths):
    groups = defaultdict(list)
    for p in paths:
        for line in open(p):
            line = line.strip()
            if not line:
                continue
            r = json.loads(line)
            if "error" in r:
                print(f"<!-- error: {r} -->")
                continue
            groups[(r["backend"], r["label"], r["app"])].append(r)
    summary, liu = [], []
    for (be, label, app), rows in sorted(groups.items()):
        print(f"\n### {be} — {label} — {app}\n")
        print("| requested | ran | schedule ms | traverse ms | total ms med (min–max) | nodes/query | nodes/warp | work exp. |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            npg = f"{r['nodes_per_group']:.1f}" if r["nodes_per_group"] else "-"
            we = f"{r['work_expansion']:.2f}" if r["work_expansion"] else "-"
            print(f"| {r['requested']} | {r['variant']}/{r['schedule']}"
                  f"{' d=' + str(r['profile_depth']) if r['profile_depth'] else ''} | "
                  f"{ms(r['schedule_med'])} | {ms(r['traverse_med'])} | "
                  f"{ms(r['total_med'])} ({ms(r['total_min'])}–{ms(r['total_max'])}) | "
                  f"{r['nodes_per_query']:.1f} | {npg} | {we} |")
        fixed = [r for r in rows if not r["requested"].startswith("auto")]
        auto = [r for r in rows if r["requested"] == "auto/auto"]
        if fixed and auto:
            best = min(fixed, key=lambda r: r["total_med"])
            a = auto[0]
            ratio = a["total_med"] / best["total_med"]
            verdict = "yes" if ratio <= 1.10 else ("no (within 1.5x)" if ratio <= 1.5 else "NO (> 1.5x)")
            summary.append(f"| {be} | {label} | {app} | {best['variant']}/{best['schedule']} "
                           f"{ms(best['total_med'])} | {a['variant']}/{a['schedule']} "
                           f"{ms(a['total_med'])} | {ratio:.2f} | {verdict} |")
        lock = "fsm_l" if be == "gpu" else "simd_l"
        by = {(r["variant"], r["schedule"]): r for r in fixed}
        if all((lock, s) in by for s in ("none", "tree", "hybrid")):
            n, t, h = (by[(lock, s)] for s in ("none", "tree", "hybrid"))
            base = by.get(("dr_l", "none"))
            vs_base = f"{base['total_med'] / h['total_med']:.2f}x" if base else "-"
            liu.append(f"| {be} | {label} | {app} | {n['nodes_per_group']:.0f} | "
                       f"{t['nodes_per_group']:.0f} | {h['nodes_per_group']:.0f} | "
                       f"{ms(h['total_med'])} | {vs_base} | "
                       f"{t['total_med'] / h['total_med']:.2f}x |")
    print("\n## Liu Table 3.2 shape (lockstep kernel: fsm_l on the GPU, simd_l on the CPU)\n")
    print("| backend | workload | app | nodes/warp unsorted | tree | hybrid | lockstep+hybrid total ms | vs dr_l unsorted | vs lockstep+tree |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(liu))
    print("\n## auto against the best fixed (variant, schedule), totals incl. scheduling\n")
    print("| backend | workload | app | best fixed | auto chose | auto / best | within 10 %? |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(summary))


if __name__ == "__main__":
    main(sys.argv[1:])
