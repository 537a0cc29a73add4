#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Issue 30's CPU rows: what a call costs around its kernels, against cKDTree and pykdtree.

1. Build + query in one process (kNN, k = 8), one thread and all threads: canopy through
   its Python package (ctypes; Index(backend="cpu") then query), scipy's cKDTree
   (workers=1 / -1) and pykdtree (OMP_NUM_THREADS), on cities (135k + 13.5k 2-D points
   from `canopy gen cities`), clust2, 3-D uniform (200k + 200k) and rand7. Each
   (tool, threads, workload) runs in its own worker process (pykdtree reads its thread
   count once): one untimed warm-up, then --repeat timed runs.
2. The whole CLI process, `canopy knn --backend cpu` on all threads (start, read, build,
   query, write), against cKDTree(workers=-1) build + query in process.
3. Small calls on a busy machine: `canopy predict` on 120 rows and `canopy knn` on 1,000
   points, whole process, while one `yes` loop per CPU keeps every core busy; each run
   writes a new output file (the goal's rows), then, without a goal, over the previous
   one (what the file system's flush on a replacing rename adds); each row also gives
   the process's CPU time, what is left of its wall time without the wait for a core.
The CLI rows remove their output before each run (untimed): see wall().

--clock cpu times the in-process rows by the process's CPU time instead of the wall
clock: on a loaded machine (other jobs on its cores) the one-thread rows then measure
the work rather than the waiting (all-thread rows sum their threads' time).

Medians with min-max and ratios (peer / canopy: above 1, canopy is faster) go into a
Markdown table with the goal of each row (--out), and one JSON line per measurement
(--jsonl). --scale shrinks every workload (quick checks; the goals are at scale 1).

Usage: bench/edges_cpu.py --build BUILD --out edges-cpu.md [--jsonl F] [--repeat 5]
       [--clock wall|cpu] [--scale 1] [--workloads cities,clust2,uni3,rand7] [--data DIR]
Needs PYTHONPATH with python/src and CANOPY_LIBRARY=BUILD/libcanopy.so (bench/run_edges.sh
sets both), numpy, scipy and pykdtree (bench/requirements.txt)."""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

K = 8
# name -> (canopy gen arguments, reference points, queries) at scale 1
WORKLOADS = {
    "cities": (["cities", "--d", "2"], 135000, 13500),
    "clust2": (["clusters", "--d", "2", "--clusters", "64", "--spread", "0.01"], 200000, 200000),
    "uni3": (["uniform", "--d", "3"], 200000, 200000),
    "rand7": (["uniform", "--d", "7"], 200000, 200000),
}
CPU_NOTE = ("; in-process rows in process CPU time (--clock cpu), whole-process rows in "
            "wall time")
NAMES = {"cities": "cities", "clust2": "clust2", "uni3": "uniform 3-D", "rand7": "rand7"}


def label(name, ref_path, q_path):
    """The workload as run: name, points + queries, dimension."""
    r, q = np.load(ref_path, mmap_mode="r"), np.load(q_path, mmap_mode="r")
    return "%s %s + %s, %d-D" % (NAMES[name], f"{r.shape[0]:,}", f"{q.shape[0]:,}", r.shape[1])


def summary(xs):
    return statistics.median(xs), min(xs), max(xs)


def fmt(s):
    return "%.1f (%.1f–%.1f)" % tuple(x * 1e3 for x in s)


# ------------------------------------------------------------------ worker --
def worker(tool, threads, ref_path, q_path, repeat):
    """Runs in a fresh process whose OpenMP thread count is already set."""
    ref, qry = np.load(ref_path), np.load(q_path)
    cpu = os.environ.get("CANOPY_EDGES_CLOCK") == "cpu"
    clock = time.process_time if cpu else time.perf_counter
    if tool == "canopy":
        import canopy
        canopy.set_threads(threads)

        def run():
            ix = canopy.Index(ref, backend="cpu")
            t = clock()
            ix.query(qry, k=K)
            return t
    elif tool == "pykdtree":
        from pykdtree.kdtree import KDTree

        def run():
            tree = KDTree(ref, leafsize=16)
            t = clock()
            tree.query(qry, k=K)
            return t
    else:
        from scipy.spatial import cKDTree

        def run():
            tree = cKDTree(ref)
            t = clock()
            tree.query(qry, k=K, workers=1 if threads == 1 else -1)
            return t
    run()  # warm-up: pages, imports, thread pools
    build, total = [], []
    for _ in range(repeat):
        t0 = clock()
        t1 = run()
        t2 = clock()
        build.append(t1 - t0)
        total.append(t2 - t0)
    print(json.dumps({"build": build, "total": total}))


def in_process(tool, threads, ref_path, q_path, repeat, clock):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), CANOPY_THREADS=str(threads),
               CANOPY_EDGES_CLOCK=clock)
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", tool,
                          str(threads), ref_path, q_path, str(repeat)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# --------------------------------------------------------------- processes --
def wall(cmd, repeat, env=None, fresh=None, cpu=None):
    """Whole-process wall seconds of cmd: one untimed run, then `repeat` timed ones.
    fresh: cmd's output file, removed (untimed) before each run, so that every run
    writes a new file: renamed over an existing one, ext4 (auto_da_alloc) starts the
    new file's writeback inside the rename (median 11 ms on a 2-core VM for 64 kB).
    cpu: a list that receives each timed run's CPU seconds (user + system): on a busy
    machine the wall time is mostly the wait for a core, the CPU time the process's own."""
    ts = []
    for i in range(repeat + 1):
        if fresh and os.path.exists(fresh):
            os.remove(fresh)
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        if i:
            ts.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if cpu is not None:
                cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return ts


def gen(cli, data, name, scale):
    args, n, nq = WORKLOADS[name]
    n, nq = max(int(n * scale), 64), max(int(nq * scale), 64)
    r, q = os.path.join(data, "%s-%d.npy" % (name, n)), os.path.join(data, "%s-%d.q.npy" % (name, n))
    if not (os.path.exists(r) and os.path.exists(q)):
        subprocess.run([cli, "gen"] + args + ["--n", str(n), "--nq", str(nq), "--seed", "30",
                                              "-o", r, "--query-out", q],
                       check=True, stdout=subprocess.DEVNULL)
    return r, q


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        tool, threads, r, q, repeat = sys.argv[2:7]
        return worker(tool, int(threads), r, q, int(repeat))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", required=True, help="build directory (canopy, libcanopy.so)")
    ap.add_argument("--out", required=True, help="Markdown table to write")
    ap.add_argument("--jsonl", help="also append one JSON line per measurement here")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="in-process rows: wall time, or the process's CPU time")
    ap.add_argument("--workloads", default="cities,clust2,uni3,rand7")
    ap.add_argument("--data", default=os.environ.get("CANOPY_BENCH_DATA",
                                                     "/tmp/canopy-bench-data"))
    a = ap.parse_args()
    if a.repeat < 1 or a.scale <= 0:
        sys.exit("--repeat must be >= 1 and --scale > 0")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_meta
    cli = os.path.join(a.build, "canopy")
    os.makedirs(a.data, exist_ok=True)
    ncpu = os.cpu_count() or 1
    jl = open(a.jsonl, "a") if a.jsonl else None

    def record(**kw):
        if jl:
            print(bench_meta.json_line(kw), file=jl, flush=True)

    rows = []  # (row, canopy summary, peer, peer summary, goal ratio)
    paths = {w: gen(cli, a.data, w, a.scale) for w in a.workloads.split(",")}
    for w, (r, q) in paths.items():
        for threads in sorted({1, ncpu}):
            res = {t: in_process(t, threads, r, q, a.repeat, a.clock)
                   for t in ("canopy", "pykdtree", "cKDTree")}
            for t, v in res.items():
                record(bench="edges_cpu", workload=w, tool=t, threads=threads, k=K,
                       clock=a.clock, build=summary(v["build"]), total=summary(v["total"]))
            where = "%s, %d thread%s, build + query in process" % (
                label(w, r, q), threads, "" if threads == 1 else "s")
            c = summary(res["canopy"]["total"])
            rows.append((where, c, "pykdtree", summary(res["pykdtree"]["total"]), 1.5))
            rows.append((where, c, "cKDTree", summary(res["cKDTree"]["total"]), 2.0))
            rows.append((where + " (build alone)", summary(res["canopy"]["build"]), "pykdtree",
                         summary(res["pykdtree"]["build"]), None))
            if threads == ncpu:
                out = os.path.join(a.data, "edges-idx.npy")
                env = dict(os.environ, CANOPY_THREADS=str(ncpu))
                ts = wall([cli, "knn", "--ref", r, "--query", q, "-k", str(K), "-o", out,
                           "--backend", "cpu", "--quiet"], a.repeat, env, fresh=out)
                record(bench="edges_cpu", workload=w, tool="canopy knn CLI", threads=ncpu, k=K,
                       total=summary(ts))
                rows.append(("%s, `canopy knn --backend cpu`, %d threads, whole process" %
                             (label(w, r, q), ncpu), summary(ts), "cKDTree(workers=-1) in process",
                             summary(res["cKDTree"]["total"]), 2.0))

    # small calls with every core busy
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    forest = os.path.join(root, "tests", "data", "forest")
    small_r, small_q = gen(cli, a.data, "uni3", 1000 / WORKLOADS["uni3"][1])
    small = {"`canopy predict`, 120 rows, 8 trees": [
                 cli, "predict", "--model", os.path.join(forest, "xgb_binary.json"), "--data",
                 os.path.join(forest, "xgb_binary.X.npy"), "-o",
                 os.path.join(a.data, "edges-p.npy"), "--quiet"],
             "`canopy knn`, 1,000 + 1,000 3-D points, k = 8": [
                 cli, "knn", "--ref", small_r, "--query", small_q, "-k", str(K), "-o",
                 os.path.join(a.data, "edges-small.npy"), "--quiet"]}
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(ncpu)]
    try:
        time.sleep(0.2)
        for name, cmd in small.items():
            out = cmd[cmd.index("-o") + 1]
            for fresh in (out, None):
                cpu = []
                ts = wall(cmd, max(a.repeat, 21), fresh=fresh, cpu=cpu)
                record(bench="edges_cpu", workload=name, tool="canopy CLI", busy_cpus=ncpu,
                       output="new" if fresh else "replaced", total=summary(ts),
                       cpu=summary(cpu))
                rows.append(("%s, whole process, %d busy CPUs%s (its CPU time %s ms)" %
                             (name, ncpu, "" if fresh else ", replacing its previous output",
                              fmt(summary(cpu))), summary(ts), None, None,
                             0.005 if fresh else None))
    finally:
        for p in busy:
            p.kill()
            p.wait()

    m = bench_meta.meta()
    lines = ["CPU rows of issue 30, %s, commit %s, %s; medians (min–max) of %d runs in ms "
             "(small calls: %d); ratio = peer / canopy; scale %g%s." %
             (m["machine"], m["commit"], m["date"], a.repeat, max(a.repeat, 21), a.scale,
              CPU_NOTE if a.clock == "cpu" else ""),
             "",
             "| what | canopy ms | peer | peer ms | ratio | goal | met |",
             "|---|---|---|---|---|---|---|"]
    for where, c, peer, p, goal in rows:
        if peer is None:
            lines.append("| %s | %s | — | — | — | %s | %s |" %
                         (where, fmt(c), "—" if goal is None else "≤ %.0f ms" % (goal * 1e3),
                          "—" if goal is None else "yes" if c[0] <= goal else "**no**"))
            continue
        ratio = p[0] / c[0]
        met = "—" if goal is None else ("yes" if ratio >= goal else "**no**")
        lines.append("| %s | %s | %s | %s | %.2f× | %s | %s |" %
                     (where, fmt(c), peer, fmt(p), ratio,
                      "—" if goal is None else "≥ %.1f×" % goal, met))
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
