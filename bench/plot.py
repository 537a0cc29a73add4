#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SVG charts of the benchmark results, one per raw JSON-lines file.

Usage: bench/plot.py [--raw bench/results/raw] [--out bench/results/plots] [FILE.jsonl ...]
Needs matplotlib (pip install -r bench/requirements.txt).

Every chart is drawn from bench/results/raw/*.jsonl, the lines the bench programs and
scripts wrote; the kind of chart follows from the fields of the lines:

| lines (writer)                                         | chart                                   |
|--------------------------------------------------------|-----------------------------------------|
| traversals: app, variant (canopy-bench, peers_*.py)    | per workload and app, traverse time of  |
|                                                        | each variant/schedule and peer          |
| forests on the CPU: who, how (forest_bench.py)         | per workload, time of each predictor    |
| forests on the GPU: spec, wall (canopy-forest-bench)   | per model, wall time of each engine     |
| B+-tree forests: bench = bptree (canopy-bench-bptree)  | lookups/s against the bias, per size    |
| gravity accuracy: median_rel (gravity_accuracy.py)     | force error against theta               |

Dots are medians with min-max whiskers, as the tables give them. Tables of
bench/results/*.md without raw lines (gpu-build, gpu-index, nbody, predictor, regex,
simt, consolidation, fuzz, gpu-check) are not drawn. The title of each chart names the
commit, machine and date the lines record (lines written before they recorded them
say so). SVGs are written reproducibly (fixed ids, no timestamp), so a rerun over the
same lines changes no file.
"""
import argparse
import json
import os
import re
import sys
from collections import OrderedDict

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import matplotlib
except ImportError:
    sys.exit("bench/plot.py needs matplotlib: pip install -r bench/requirements.txt")
matplotlib.use("svg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend is chosen)
from matplotlib import ticker  # noqa: E402

matplotlib.rcParams.update({"svg.hashsalt": "canopy", "svg.fonttype": "none", "font.size": 8})
CANOPY, PEER = "#2b6cb0", "#c05621"


def read_lines(path):
    out = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not a JSON line: {e}")
            if "error" not in rec:  # a configuration that failed has no numbers
                out.append(rec)
    return out


def provenance(lines):
    """'commit c, machine m, date d' from the lines, or why there is none."""
    parts = []
    for key in ("commit", "machine", "date"):
        vals = sorted({str(r[key]) for r in lines if key in r})
        if vals:
            parts.append(f"{key} {', '.join(vals[:3])}{' ...' if len(vals) > 3 else ''}")
    return "; ".join(parts) or "lines written before they recorded commit, machine and date"


def groups(lines, key):
    out = OrderedDict()
    for r in lines:
        out.setdefault(key(r), []).append(r)
    return out


def bar_panels(title, panels, xlabel, path):
    """panels: [(panel title, [(row label, med, min, max, is_peer)])] as dots with min-max
    whiskers on a log axis, one panel under another."""
    heights = [0.9 + 0.17 * len(rows) for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(7.5, sum(heights) + 0.6), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (name, rows) in zip(axes[:, 0], panels):
        y = list(range(len(rows)))[::-1]
        med = [r[1] for r in rows]
        lo = [max(r[1] - r[2], 0) for r in rows]
        hi = [max(r[3] - r[1], 0) for r in rows]
        # Dots, not bars: a bar's length on a log axis means nothing.
        for peer in (False, True):
            pick = [i for i, r in enumerate(rows) if r[4] == peer]
            ax.errorbar([med[i] for i in pick], [y[i] for i in pick],
                        xerr=[[lo[i] for i in pick], [hi[i] for i in pick]], fmt="o",
                        markersize=3.5, elinewidth=0.9, capsize=2,
                        color=PEER if peer else CANOPY)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_yticks(y)
        ax.set_yticklabels([r[0] for r in rows])
        log_axis(ax.xaxis)
        ax.set_title(name, loc="left", fontsize=8, fontweight="bold")
        ax.grid(which="both", linewidth=0.3, alpha=0.5)
        ax.set_xlabel(xlabel)
    fig.suptitle(title, fontsize=8, x=0.01, ha="left")
    save(fig, path)


def log_axis(axis):
    """A log scale labelled 0.2, 0.5, 1, 2, 5, 10, ... (readable over a short range too)."""
    axis.axes.set_xscale("log") if axis is axis.axes.xaxis else axis.axes.set_yscale("log")
    plain = ticker.FuncFormatter(lambda v, _: f"{v:g}")
    axis.set_major_locator(ticker.LogLocator(base=10))
    axis.set_minor_locator(ticker.LogLocator(base=10, subs=(2.0, 5.0)))
    axis.set_major_formatter(plain)
    axis.set_minor_formatter(plain)


def save(fig, path):
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    # bbox "tight" grows the canvas to hold long row labels.
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)


def traversal_chart(stem, lines, path):
    panels = []
    for (label, app, backend), rows in groups(
            lines, lambda r: (r["label"], r["app"], r.get("backend", ""))).items():
        bars = []
        for r in rows:
            peer = bool(r.get("peer"))
            name = r["variant"] if peer else f"{r['variant']} / {r['schedule']}"
            bars.append((name, r["traverse_med"], r["traverse_min"], r["traverse_max"], peer))
        panels.append((f"{label}: {app} ({backend}; traverse s, peers in orange)", bars))
    bar_panels(f"{stem}: {provenance(lines)}", panels, "seconds (log)", path)


def forest_cpu_chart(stem, lines, path):
    panels = []
    for label, rows in groups(lines, lambda r: r["label"]).items():
        bars = []
        for r in rows:
            peer = r["who"] != "canopy"
            if peer or r["how"] != "in-process":
                name = f"{r['who']}: {r['how']}"
            else:
                name = f"canopy {r.get('layout', '?')} / {r.get('engine', '?')}"
                if r.get("compaction") == 0:
                    name += ", no compaction"
            bars.append((name[:60], r["med"], r["min"], r["max"], peer))
        panels.append((f"{label} ({rows[0]['rows']} rows, {rows[0]['threads']} threads; s)",
                       bars))
    bar_panels(f"{stem}: {provenance(lines)}", panels, "seconds (log)", path)


def forest_gpu_chart(stem, lines, path):
    panels = []
    for label, rows in groups(lines, lambda r: r["label"]).items():
        bars = [(r["spec"], r["wall"][0], r["wall"][1], r["wall"][2], r["spec"].startswith("cpu"))
                for r in rows]
        panels.append((f"{label} ({rows[0]['rows']} rows, {rows[0]['trees']} trees; wall s, "
                       "CPU engines in orange)", bars))
    bar_panels(f"{stem}: {provenance(lines)}", panels, "seconds (log)", path)


def bptree_chart(stem, lines, path):
    sizes = groups(lines, lambda r: r["log2_keys"])
    fig, axes = plt.subplots(1, len(sizes), figsize=(3.6 * len(sizes), 3.6), squeeze=False,
                             sharey=True)
    configs = list(groups(lines, lambda r: r["config"]))
    cmap = plt.get_cmap("tab20")
    handles = {}
    for ax, (lg, rows) in zip(axes[0], sizes.items()):
        for config, pts in groups(rows, lambda r: r["config"]).items():
            pts = sorted(pts, key=lambda r: r["bias"])
            i = configs.index(config)
            handles[config], = ax.plot([r["bias"] for r in pts],
                                       [r["mlookups_per_s"] for r in pts], linewidth=0.8,
                                       marker="os^v"[i // 20 % 4], markersize=3,
                                       color=cmap(i % 20), label=config)
        ptr = sorted({r["bias"]: r["pointer_mlookups_per_s"] for r in rows}.items())
        handles["pointer B+ tree"], = ax.plot([b for b, _ in ptr], [v for _, v in ptr],
                                              color="black", linestyle="--", linewidth=1.2,
                                              label="pointer B+ tree")
        ax.set_title(f"2^{lg} keys, {rows[0]['threads']} thread(s)", fontsize=8)
        ax.set_xlabel("bias (share of left decisions)")
        ax.grid(linewidth=0.3, alpha=0.5)
    axes[0][0].set_ylabel("million lookups / s (median)")
    axes[0][-1].legend(handles.values(), handles.keys(), fontsize=6, loc="center left",
                       bbox_to_anchor=(1.0, 0.5))
    fig.suptitle(f"{stem}: {provenance(lines)}", fontsize=8, x=0.01, ha="left")
    save(fig, path)


def accuracy_chart(stem, lines, path):
    pts = []
    for r in lines:
        m = re.search(r"theta ([0-9.]+)", r["label"])
        if m:
            pts.append((float(m.group(1)), r["median_rel"], r["p99_rel"]))
    pts.sort()
    fig, ax = plt.subplots(figsize=(5, 3.2))
    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="median", color=CANOPY)
    ax.plot([p[0] for p in pts], [p[2] for p in pts], marker="s", label="99th percentile",
            color=PEER)
    ax.set_yscale("log")
    ax.set_xlabel("opening angle theta")
    ax.set_ylabel("relative force error")
    ax.grid(which="both", linewidth=0.3, alpha=0.5)
    ax.legend()
    fig.suptitle(f"{stem}: {provenance(lines)}", fontsize=7, x=0.01, ha="left")
    save(fig, path)


def chart_for(lines):
    first = lines[0]
    if "app" in first and "variant" in first:
        return traversal_chart
    if "who" in first:
        return forest_cpu_chart
    if "spec" in first and "wall" in first:
        return forest_gpu_chart
    if first.get("bench") == "bptree":
        return bptree_chart
    if "median_rel" in first:
        return accuracy_chart
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", default=os.path.join(HERE, "results", "raw"))
    ap.add_argument("--out", default=os.path.join(HERE, "results", "plots"))
    ap.add_argument("files", nargs="*", help="raw .jsonl files (default: all under --raw)")
    a = ap.parse_args()
    files = a.files or sorted(os.path.join(a.raw, f) for f in os.listdir(a.raw)
                              if f.endswith(".jsonl"))
    os.makedirs(a.out, exist_ok=True)
    for path in files:
        stem = os.path.basename(path)[:-len(".jsonl")]
        lines = read_lines(path)
        draw = chart_for(lines) if lines else None
        if draw is None:
            print(f"plot: {path}: no chart for these lines, skipped", file=sys.stderr)
            continue
        out = os.path.join(a.out, stem + ".svg")
        draw(stem, lines, out)
        print(f"plot: {out}")


if __name__ == "__main__":
    main()
