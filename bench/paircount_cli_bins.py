#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Whole `canopy paircount` processes, 10 against 10^6 bins (issue 35 row 8), as a user
re-running a command sees them: one thread, log bins 0.005-0.1, `-o` onto an existing file
(or, with --target new, onto a name removed first). Binaries given as LABEL=PATH are
alternated run by run (the order reversed every round, after a warm-up round), so a
before/after pair sees the same machine load; user + system CPU seconds (os.wait4) and
wall seconds, medians (min-max). The count files of the binaries are compared byte for
byte. One JSON line a row on standard output, a table on standard error.

  bench/paircount_cli_bins.py --bins before=OLD/canopy after=build/canopy \\
      --data u20k.npy u200k.npy --reps 11 [--target new]
"""
import argparse
import filecmp
import json
import os
import statistics
import sys
import time


def run(argv):
    """(user + system CPU s, wall s) of one process, its output discarded."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(argv[0], argv)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        sys.exit(f"failed: {' '.join(argv)}")
    return usage.ru_utime + usage.ru_stime, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bins", nargs="+", required=True, help="LABEL=PATH of canopy binaries")
    ap.add_argument("--data", nargs="+", required=True, help="points (.npy)")
    ap.add_argument("--nbins", nargs="+", default=["10", "1000000"])
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--target", choices=["existing", "new"], default="existing")
    ap.add_argument("--dir", default="paircount-cli-out", help="folder of the count files")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    bins = [b.split("=", 1) for b in a.bins]

    def command(path, data, nb, out):
        return [path, "paircount", "--data1", data, "--rmin", "0.005", "--rmax", "0.1", "--log",
                "--nbins", nb, "--threads", "1", "-o", out]

    times = {}
    for rep in range(a.reps + 1):  # round 0 warms the caches up
        for data in a.data:
            for nb in a.nbins:
                for label, path in bins if rep % 2 else bins[::-1]:
                    out = f"{a.dir}/{label}_{os.path.basename(data)}_{nb}.npy"
                    if a.target == "new" and os.path.exists(out):
                        os.unlink(out)
                    elif a.target == "existing" and not os.path.exists(out):
                        run(command(path, data, nb, out))
                    t = run(command(path, data, nb, out))
                    if rep:
                        times.setdefault((label, data, nb), []).append(t)
    for data in a.data:
        for nb in a.nbins:
            outs = [f"{a.dir}/{label}_{os.path.basename(data)}_{nb}.npy" for label, _ in bins]
            same = all(filecmp.cmp(outs[0], o, shallow=False) for o in outs[1:])
            for label, _ in bins:
                cpu = sorted(t[0] for t in times[(label, data, nb)])
                wall = sorted(t[1] for t in times[(label, data, nb)])
                row = {"label": label, "data": os.path.basename(data), "nbins": int(nb),
                       "target": a.target, "runs": len(cpu), "cpu": statistics.median(cpu),
                       "cpu_min": cpu[0], "cpu_max": cpu[-1], "wall": statistics.median(wall),
                       "wall_min": wall[0], "wall_max": wall[-1], "same_counts": same,
                       "utc": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
                       "load": os.getloadavg()[0]}
                print(json.dumps(row), flush=True)
                print(f"{label:8s} {row['data']:12s} {nb:>8s} {a.target:8s} "
                      f"cpu {row['cpu']:.4f} ({cpu[0]:.4f}-{cpu[-1]:.4f})  "
                      f"wall {row['wall']:.4f} ({wall[0]:.4f}-{wall[-1]:.4f})  same={same}",
                      file=sys.stderr)


if __name__ == "__main__":
    main()
