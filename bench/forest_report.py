#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown tables from bench/forest_bench.py's JSON lines: peers against canopy per
workload (ratios = fastest peer's median / canopy's median, > 1 means canopy is
faster), and Ren's layout x engine grid with the cache model's predicted cost."""
import json
import sys

LAYOUTS = ["auto", "csr", "hier", "df", "bf", "ll", "sll", "cc", "hybrid"]


def fmt(r):
    return f"{r['med']:.4f} ({r['min']:.4f}–{r['max']:.4f})"


def main():
    rows = [json.loads(l) for p in sys.argv[1:] for l in open(p) if l.strip()]
    labels = list(dict.fromkeys(r["label"] for r in rows))
    print("## Peers against canopy (seconds: median (min–max))\n")
    print("| workload | rows | threads | fastest peer | canopy best (in-process) | ratio | "
          "canopy auto (in-process) | ratio | canopy CLI end to end |")
    print("|---|---|---|---|---|---|---|---|---|")
    for lab in labels:
        rs = [r for r in rows if r["label"] == lab]
        peers = [r for r in rs if r["who"] != "canopy"]
        inproc = [r for r in rs if r["who"] == "canopy" and r["how"] == "in-process"]
        cli = [r for r in rs if r["who"] == "canopy" and r["how"] != "in-process"]
        if not peers or not inproc:
            continue
        p = min(peers, key=lambda r: r["med"])
        c = min(inproc, key=lambda r: r["med"])
        auto = next((r for r in inproc if r["layout"] == "auto"), c)
        print(f"| {lab} | {rs[0]['rows']} | {rs[0]['threads']} | {p['who']} {p['how']}: {fmt(p)} | "
              f"{c['layout']}/{c['engine']}{'' if c.get('compaction', 1) else ' no-compaction'}: "
              f"{fmt(c)} | **{p['med'] / c['med']:.2f}×** | {auto['ran'].split(',')[0]}, "
              f"{auto['ran'].split(',')[1].strip()}: {fmt(auto)} | {p['med'] / auto['med']:.2f}× | "
              f"{fmt(cli[0]) if cli else '-'} |")
    print()
    for lab in labels:
        rs = [r for r in rows if r["label"] == lab]
        print(f"### {lab}\n")
        for r in rs:
            if r["who"] != "canopy":
                extra = ""
                if "compile_seconds" in r:
                    extra = f" (compile {r['compile_seconds']:.1f} s)"
                if "train_seconds" in r:
                    extra = f" (training {r['train_seconds']:.1f} s)"
                print(f"- {r['who']} {r['how']}: {fmt(r)}{extra}")
        inproc = [r for r in rs if r["who"] == "canopy" and r["how"] == "in-process"]
        if not inproc:
            continue
        auto = next((r for r in inproc if r["layout"] == "auto"), None)
        cost = auto["model_cost"] if auto else [0] * len(LAYOUTS)
        if auto:
            print(f"- canopy auto: {auto['ran']}; beta = {auto['beta']:.3f}")
        engines = ["scalar", "simd", "vm", "vm_simd", "vm_simd/off"]
        print("\n| layout | model cost (rel.) | " + " | ".join(engines) + " | compaction gain |")
        print("|---" * (len(engines) + 3) + "|")
        base = min((c for c in cost if c > 0), default=0)
        for lay in LAYOUTS[1:]:
            cells = []
            t = {}
            for e in engines:
                eng, comp = (e.split("/")[0], 0) if "/" in e else (e, 1)
                m = [r for r in inproc if r["layout"] == lay and r["engine"] == eng and
                     r.get("compaction", 1) == comp]
                t[e] = m[0]["med"] if m else None
                cells.append(fmt(m[0]) if m else "")
            if not any(cells):
                continue
            c = LAYOUTS.index(lay)
            mc = f"{cost[c] / base:.2f}" if base and cost[c] > 0 else "–"
            gain = (f"{t['vm_simd/off'] / t['vm_simd']:.2f}×" if t["vm_simd"] and t["vm_simd/off"]
                    else "")
            print(f"| {lay} | {mc} | " + " | ".join(cells) + f" | {gain} |")
        print()


if __name__ == "__main__":
    main()
