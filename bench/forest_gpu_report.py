#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Markdown tables from bench/run_forest_gpu.sh's forest-gpu.jsonl (stdout).

    forest_gpu_report.py forest-gpu.jsonl

Times are medians with min-max in ms. `kernel` is device-event time of the kernel alone;
`predict` is canopy_forest_predict without the layout build (GPU: upload of the rows,
kernel, download, finishing on the host; CPU: the traversal and finishing). Ratios are
against the csr baseline (kernel) and the best CPU configuration of the same model
(predict and kernel), measured in the same run on the same machine.
"""
import json
import sys


def fmt(t):
    return "%.2f (%.2f–%.2f)" % (t[0] * 1e3, t[1] * 1e3, t[2] * 1e3)


def main(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    labels = []
    for r in rows:
        if r["label"] not in labels:
            labels.append(r["label"])
    print("| model | rows | nodes | configuration | kernel ms | predict ms | kernel vs csr "
          "| predict vs best CPU | kernel vs best CPU | model bytes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    summary = []
    for lab in labels:
        rs = [r for r in rows if r["label"] == lab and "error" not in r]
        errs = [r for r in rows if r["label"] == lab and "error" in r]
        cpu = [r for r in rs if r["spec"].startswith("cpu:")]
        gpu = [r for r in rs if r["spec"].startswith("gpu:")]
        if not rs:
            continue
        best_cpu = min(cpu, key=lambda r: r["predict"][0]) if cpu else None
        csr = next((r for r in gpu if r["spec"] == "gpu:iter:csr:0:atomic"), None)
        for r in gpu + cpu:
            g = r["spec"].startswith("gpu:")
            kvc = "%.2f×" % (csr["kernel"][0] / r["kernel"][0]) if g and csr else ""
            pvb = ("%.1f×" % (best_cpu["predict"][0] / r["predict"][0])) if best_cpu else ""
            kvb = ("%.1f×" % (best_cpu["predict"][0] / r["kernel"][0])) if g and best_cpu else ""
            byts = r["device_bytes"] if g else r["layout_bytes"]
            print("| %s | %d | %d | %s | %s | %s | %s | %s | %s | %d |" % (
                lab, r["rows"], r["nodes"], r["spec"], fmt(r["kernel"]) if g else "",
                fmt(r["predict"]), kvc, pvb, kvb, byts))
        for r in errs:
            print("| %s | | | %s | error: %s | | | | | |" % (lab, r["spec"], r["error"]))
        if gpu and best_cpu:
            bk = min(gpu, key=lambda r: r["kernel"][0])
            bp = min(gpu, key=lambda r: r["predict"][0])
            summary.append((lab, bk["spec"], best_cpu["spec"], best_cpu["predict"][0] /
                            bk["kernel"][0], bp["spec"], best_cpu["predict"][0] / bp["predict"][0]))
    print()
    print("| model | fastest GPU kernel | best CPU (16 cores) | best CPU predict / GPU kernel "
          "| fastest GPU predict | best CPU predict / GPU predict |")
    print("|---|---|---|---|---|---|")
    for s in summary:
        print("| %s | %s | %s | %.1f× | %s | %.1f× |" % s)


if __name__ == "__main__":
    main(sys.argv[1])
