#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A/B of two canopy builds on the SIMD kernels of issue 18: the forest walker's sweeps
(`simd` engine: complete bf trees, linked nodes without and with NaN, LightGBM
zero-as-missing), the forest interpreter (`vm_simd`) and the regex Pike VM
(`--engine simd`), each on 8 AVX2 and 16 AVX-512 lanes (CANOPY_ISA), on one core, old
and new runs interleaved (their order alternating each round) so both see the same
machine load. Outputs must agree across the builds (forest: each spec's max difference
to the run's first spec; regex: the counts), else exit 1.

usage: bench/lanes_ab.py OLD_BUILD NEW_BUILD [--rounds R] [--rows N] [--cpu C] [--kjv F]
  OLD_BUILD/NEW_BUILD: CMake build folders with canopy-forest-bench and libcanopy.a.
Prints a markdown table: per case, the median (min-max) over the rounds of two times in
ms: each run's median wall time of the kernel (forest: predict_seconds, REPEAT
repetitions after a warm-up; regex: canopy_regex_match, REPEAT repetitions), and the
run's whole CPU time (loading included, the same work for both builds), which the time
other processes hold the core does not inflate; and old / new of the medians.
Needs numpy and scikit-learn (the random-forest model) and a C compiler (the regex
driver bench/regex/bench_canopy.c is linked against each build's libcanopy.a).
"""
import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

REPEAT = 5  # timed repetitions inside each run (after the forest bench's warm-up)
REGEX_SETS = [
    ("`.*ab`", [".*ab"]),
    ("3 `.*xy`", [".*ab", ".*cd", ".*ef"]),
    ("10 `.*xy`", [".*" + a + b for a, b in zip("acegikmoqs", "bdfhjlnprt")]),
    ("`[A-Z][a-z]+ [A-Z][a-z]+`", ["[A-Z][a-z]+ [A-Z][a-z]+"]),
    ("`^(And|But) .*(LORD|God)[,.;:]$`", ["^(And|But) .*(LORD|God)[,.;:]$"]),
]


def make_forest_inputs(work, rows):
    import numpy as np
    from sklearn.datasets import make_regression
    from sklearn.ensemble import RandomForestRegressor
    from sklearn_to_canopy import convert

    X, y = make_regression(n_samples=20000, n_features=50, n_informative=20, random_state=1)
    m = RandomForestRegressor(n_estimators=64, max_depth=10, random_state=1, n_jobs=1)
    m.fit(X, y)
    with open(os.path.join(work, "rf.json"), "w") as f:
        json.dump(convert(m), f)
    rng = np.random.default_rng(2)
    T = rng.standard_normal((rows, 50)).astype(np.float32)
    np.save(os.path.join(work, "rf.npy"), T)
    T[rng.random(T.shape) < 0.05] = np.nan
    np.save(os.path.join(work, "rf_nan.npy"), T)
    # LightGBM zero-as-missing: the test fixture's model on its rows, tiled
    Z = np.load(os.path.join(ROOT, "tests", "data", "forest", "lgb_zero.X.npy"))
    np.save(os.path.join(work, "zero.npy"), np.tile(Z, (rows * 4 // len(Z) + 1, 1)))
    shutil.copy(os.path.join(ROOT, "tests", "data", "forest", "lgb_zero.txt"),
                os.path.join(work, "zero.txt"))
    # (label, model, data, specs): one process per (case, ISA, build)
    return [
        ("rf 64 trees depth 10", "rf.json", "rf.npy",
         ["cpu:simd:bf", "cpu:simd:ll", "cpu:vm_simd:ll"]),
        ("rf, 5 % NaN", "rf.json", "rf_nan.npy", ["cpu:simd:ll"]),
        ("LightGBM zero-as-missing", "zero.txt", "zero.npy", ["cpu:simd:ll", "cpu:vm_simd:ll"]),
    ]


def run(cmd, isa, cpu):
    """The command's stdout and its CPU seconds (user + system, from wait4): on a shared
    machine the CPU time leaves out the time other processes held the core."""
    env = dict(os.environ, CANOPY_ISA=isa, CANOPY_THREADS="1", OMP_NUM_THREADS="1",
               OMP_WAIT_POLICY="passive", LC_ALL="C")
    with tempfile.TemporaryFile() as f:
        p = subprocess.Popen(["taskset", "-c", str(cpu)] + cmd, env=env, stdout=f)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode:
            raise SystemExit("failed (%d): %s" % (p.returncode, " ".join(cmd)))
        f.seek(0)
        return f.read().decode(), ru.ru_utime + ru.ru_stime


def forest_run(build, work, case, isa, cpu):
    _, model, data, specs = case
    out, cpu_s = run([os.path.join(build, "canopy-forest-bench"), "--model",
                      os.path.join(work, model), "--data", os.path.join(work, data), "--repeat",
                      str(REPEAT)] + specs, isa, cpu)
    res = {}
    for line in out.splitlines():
        r = json.loads(line)
        if "error" in r:
            raise SystemExit("forest bench: %s: %s" % (r["spec"], r["error"]))
        if isa not in r["ran"]:
            raise SystemExit("forest bench ran %r, not %s" % (r["ran"], isa))
        res[r["spec"]] = (r["predict"][0] * 1e3, r["maxdiff"])
    return res, cpu_s * 1e3


def regex_run(driver, kjv, pats, isa, cpu):
    out, cpu_s = run([driver, kjv, "simd", str(REPEAT)] + pats, isa, cpu)
    f = out.split()
    return int(f[0]), statistics.median(float(x) for x in f[1:]), cpu_s * 1e3


def cell(ts):
    return "%.2f (%.2f–%.2f)" % (statistics.median(ts), min(ts), max(ts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--kjv", default=os.path.join(ROOT, "..", "shared", "data", "kjv.txt.gz"))
    a = ap.parse_args()
    if not os.path.exists(a.kjv):
        a.kjv = "/work/shared/data/kjv.txt.gz"
    builds = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    work = tempfile.mkdtemp(prefix="canopy-lanes-ab.")
    try:
        cases = make_forest_inputs(work, a.rows)
        kjv = os.path.join(work, "kjv.txt")
        with gzip.open(a.kjv) as src, open(kjv, "wb") as dst:
            shutil.copyfileobj(src, dst)
        drivers = {}
        for k, b in builds.items():
            drivers[k] = os.path.join(work, "bench_canopy_" + k)
            subprocess.run(["cc", "-O2", "-I" + os.path.join(ROOT, "include"),
                            os.path.join(ROOT, "bench", "regex", "bench_canopy.c"),
                            os.path.join(b, "libcanopy.a"), "-fopenmp", "-ljson-c", "-lm",
                            "-o", drivers[k]], check=True)
        isas = ["avx2", "avx512"]
        times, answers = {}, {}
        for rnd in range(a.rounds):
            order = ["old", "new"] if rnd % 2 == 0 else ["new", "old"]
            for isa in isas:
                for case in cases:
                    for k in order:
                        res, cpu_ms = forest_run(builds[k], work, case, isa, a.cpu)
                        key = ("forest", case[0], "+".join(case[3]), isa, "process CPU")
                        times.setdefault(key + (k,), []).append(cpu_ms)
                        for spec, (ms, diff) in res.items():
                            key = ("forest", case[0], spec, isa, "predict wall")
                            times.setdefault(key + (k,), []).append(ms)
                            answers.setdefault(key, set()).add(round(diff, 9))
                for label, pats in REGEX_SETS:
                    for k in order:
                        count, ms, cpu_ms = regex_run(drivers[k], kjv, pats, isa, a.cpu)
                        key = ("regex", label, "--engine simd", isa)
                        times.setdefault(key + ("match wall", k), []).append(ms)
                        times.setdefault(key + ("process CPU", k), []).append(cpu_ms)
                        answers.setdefault(key, set()).add(count)
            print("round %d done" % (rnd + 1), file=sys.stderr)
        bad = [k for k, v in answers.items() if len(v) != 1]
        for k in bad:
            print("outputs differ: %s: %s" % (k, answers[k]), file=sys.stderr)
        print("| kernel | case | run | lanes | time | old ms | new ms | old / new |")
        print("|---|---|---|---|---|---|---|---|")
        for key in sorted({k[:5] for k in times}, key=lambda k: (k[0], k[3], k[1], k[2], k[4])):
            o, n = times[key + ("old",)], times[key + ("new",)]
            lanes = "8 (AVX2)" if key[3] == "avx2" else "16 (AVX-512)"
            print("| %s | %s | %s | %s | %s | %s | %s | %.3f× |" % (
                key[0], key[1].replace("|", "\\|"), key[2], lanes, key[4], cell(o), cell(n),
                statistics.median(o) / statistics.median(n)))
        return 1 if bad else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
