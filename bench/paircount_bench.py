# SPDX-License-Identifier: MIT
"""Pair counts DD(r): canopy (ctypes, the Python package) against Corrfunc's
Corrfunc.theory.DD and TreeCorr's NNCorrelation, in one process on the same float32
data (issue 37's table). Driven by bench/run_paircount.sh; writes a markdown table to
stdout and JSON lines to --jsonl.

Set-up (not needed to build or test canopy): Debian libgsl-dev, then
`pip install Corrfunc treecorr` (bench/requirements.txt). canopy itself comes from
PYTHONPATH=python/src and CANOPY_LIBRARY=BUILD/libcanopy.so, no install.

Cases: uniform points in the unit cube and `canopy gen clusters` points (wrapped into
the unit cube), open and periodic (box side 1), auto-correlation, 10 log bins from
0.005 to 0.1; threads from --threads; medians of --reps runs with min-max after one
warm-up run (wall seconds, and the process CPU seconds of canopy and Corrfunc, which a
loaded machine disturbs less) (TreeCorr, exact with bin_slop 0 and much slower: two runs, first thread
count only). Every peer's counts are compared with canopy's (the edge rule of
docs/c-api.md, "Pair counts": pairs within one float32 rounding of an edge may differ).
A bin sweep times canopy alone from 10 to 10^6 bins (the goal: <= 2x the time of 10),
through the library and as whole `canopy paircount` processes, wall and CPU seconds
(on a loaded machine the CPU time is the steadier), on each of --sweep-sizes; --sweep-only runs the sweep alone (no peers needed).
--gpu-only: canopy on the GPU against Corrfunc on all cores (issue 37's GPU row at 2M
points), its counts also checked against canopy's CPU walk, and where each GPU call's time
goes (canopy_stats through the library: device tree build, the trees' download, the
device frontier, the other copies, the kernel, the walk's host setup and release, and what lies
outside the pair walk), for each of --gpu-variants (kernel, leaf size, frontier tasks a
warp: the library's A/B switches, same counts)."""
import argparse
import ctypes
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import canopy


def timed(fn, reps, warm=True, cpu=None):
    """Wall seconds of each run (and, into the list cpu, the process CPU seconds)."""
    if warm:
        fn()
    ts = []
    out = None
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        ts.append(time.perf_counter() - t0)
        if cpu is not None:
            cpu.append(time.process_time() - c0)
    return out, ts


def timed_cpu(fn, reps):
    """timed, plus the process CPU seconds of each run."""
    fn()
    ts, cs = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        ts.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return ts, cs


def fmt(ts):
    return f"{statistics.median(ts):.3f} ({min(ts):.3f}-{max(ts):.3f})"


def load_points(kind, n, canopy_cli, seed):
    if kind == "uniform":
        rng = np.random.default_rng(seed)
        return rng.random((n, 3), dtype=np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "clusters.npy")
        subprocess.run([canopy_cli, "gen", "clusters", "--n", str(n), "--d", "3",
                        "--seed", str(seed), "-o", path], check=True, capture_output=True)
        x = np.load(path).astype(np.float32)
    # into [0, 1): the periodic cases need it; wrapping keeps the clustering
    x = np.mod(x, np.float32(1.0)).astype(np.float32)
    x[x >= np.float32(1.0)] = np.float32(0.0)
    return np.ascontiguousarray(x)


def corrfunc_dd(x, edges, threads, periodic):
    from Corrfunc.theory.DD import DD
    r = DD(autocorr=1, nthreads=threads, binfile=edges, X1=x[:, 0], Y1=x[:, 1], Z1=x[:, 2],
           periodic=periodic, boxsize=1.0, verbose=False)
    return np.asarray(r["npairs"], dtype=np.int64)


def treecorr_nn(x, edges, threads, periodic):
    import treecorr
    cat = treecorr.Catalog(x=x[:, 0].astype(np.float64), y=x[:, 1].astype(np.float64),
                           z=x[:, 2].astype(np.float64))
    kw = dict(min_sep=float(edges[0]), max_sep=float(edges[-1]), nbins=len(edges) - 1,
              bin_type="Log", bin_slop=0.0, num_threads=threads)
    if periodic:
        kw.update(xperiod=1.0, yperiod=1.0, zperiod=1.0)
    nn = treecorr.NNCorrelation(**kw)
    nn.process(cat, metric="Periodic" if periodic else "Euclidean", num_threads=threads)
    return np.rint(2.0 * nn.npairs).astype(np.int64)  # TreeCorr counts each pair once


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--canopy-cli", required=True)
    ap.add_argument("--sizes", default="200000")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--gpu", action="store_true", help="also canopy on the GPU (backend gpu)")
    ap.add_argument("--gpu-only", action="store_true",
                    help="the GPU rows alone, no bin sweep: Corrfunc on all cores once, no"
                         " warm-up (2M points take seconds), canopy's CPU walk once for its counts")
    ap.add_argument("--gpu-variants", default="default",
                    help="with --gpu-only: comma-separated KERNEL:LEAF:TASKS (kernel staged4,"
                         " regs, columns or default; leaf size, 0 the library's;"
                         " node pairs a warp in the frontier, 0 the library's), or default")
    ap.add_argument("--treecorr", action="store_true")
    ap.add_argument("--jsonl", default=None)
    ap.add_argument("--sweep-sizes", default=None,
                    help="bin sweep sizes (default: the first of --sizes)")
    ap.add_argument("--sweep-only", action="store_true")
    a = ap.parse_args()
    a.gpu = a.gpu or a.gpu_only
    sizes = [int(s) for s in a.sizes.split(",")]
    threads = [int(t) for t in a.threads.split(",")]
    rmin, rmax, nbins = 0.005, 0.1, 10
    edges = np.geomspace(rmin, rmax, nbins + 1)
    rows = []
    jl = open(a.jsonl, "a") if a.jsonl else None

    def record(**kw):
        rows.append(kw)
        if jl:
            jl.write(json.dumps(kw) + "\n")
            jl.flush()

    if not a.sweep_only:
        compare(a, sizes, threads, rmin, rmax, nbins, edges, record)
    sweep_sizes = [int(s) for s in a.sweep_sizes.split(",")] if a.sweep_sizes else sizes[:1]
    if a.gpu_only:
        sweep_sizes = []
    for n in sweep_sizes:
        sweep(a, n, rmin, rmax, record)
    if jl:
        jl.close()
    return 0


def compare(a, sizes, threads, rmin, rmax, nbins, edges, record):
    if a.gpu_only:
        print("| points | data | box | GPU variant | GPU whole call s | Corrfunc "
              f"{os.cpu_count()} threads s | Corrfunc / GPU | "
              + " | ".join(name for name, _ in PHASES) + " | outside the walk | counts |")
        print("|---" * (9 + len(PHASES)) + "|")
    else:
        print("| points | data | box | threads | canopy s | Corrfunc s | Corrfunc / canopy |"
              " CPU s canopy / Corrfunc | TreeCorr s | counts |")
        print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        for kind in ("uniform", "clusters"):
            x = load_points(kind, n, a.canopy_cli, 42)
            for periodic in (False, True):
                box = 1.0 if periodic else None
                for t in [] if a.gpu_only else threads:
                    canopy.set_threads(t)
                    ccpu, fcpu = [], []  # CPU seconds: the steadier on a loaded machine
                    cc, tc = timed(lambda: canopy.paircount(x, rmin, rmax, nbins, log=True,
                                                            boxsize=box, backend="cpu")[0], a.reps,
                                   cpu=ccpu)
                    cf, tf = timed(lambda: corrfunc_dd(x, edges, t, periodic), a.reps, cpu=fcpu)
                    cpu_s = (f"{statistics.median(ccpu):.3f} / {statistics.median(fcpu):.3f}"
                             f" ({statistics.median(fcpu) / statistics.median(ccpu):.2f}x)")
                    diff = int(np.abs(cc - cf).sum())
                    tr_s, tt = "", None
                    if a.treecorr and n <= 200000 and t == threads[0]:
                        try:  # slow (bin_slop 0): two runs, no warm-up
                            ct, tt = timed(lambda: treecorr_nn(x, edges, t, periodic), 2,
                                           warm=False)
                            tr_s = fmt(tt)
                            diff_t = int(np.abs(cc - ct).sum())
                        except Exception as e:  # noqa: BLE001 (a peer that fails is reported)
                            tr_s, diff_t = f"failed: {e}", None
                    else:
                        diff_t = None
                    ratio = statistics.median(tf) / statistics.median(tc)
                    agree = "equal" if diff == 0 else f"differ by {diff} pairs in total"
                    if diff_t is not None:
                        agree += "; TreeCorr " + ("equal" if diff_t == 0 else f"differs by {diff_t}")
                    print(f"| {n} | {kind} | {'periodic' if periodic else 'open'} | {t} |"
                          f" {fmt(tc)} | {fmt(tf)} | {ratio:.2f}x | {cpu_s} | {tr_s} | {agree} |",
                          flush=True)
                    record(bench="paircount", points=n, data=kind, periodic=periodic,
                           threads=t, canopy=tc, corrfunc=tf, canopy_cpu=ccpu, corrfunc_cpu=fcpu,
                           treecorr=tt, diff=diff)
                if a.gpu_only:
                    gpu_rows(a, n, kind, x, box, rmin, rmax, nbins, edges, record)
                elif a.gpu:
                    canopy.set_threads(os.cpu_count())
                    cg, tg = timed(lambda: canopy.paircount(x, rmin, rmax, nbins, log=True,
                                                            boxsize=box, backend="gpu")[0], a.reps)
                    corrfunc_dd(x, edges, os.cpu_count(), periodic)
                    cf, tf = timed(lambda: corrfunc_dd(x, edges, os.cpu_count(), periodic),
                                   a.reps)
                    diff = int(np.abs(cg - cf).sum())
                    agree = "equal" if diff == 0 else f"differ by {diff}"
                    print(f"| {n} | {kind} | {'periodic' if periodic else 'open'} | GPU vs"
                          f" {os.cpu_count()} | {fmt(tg)} | {fmt(tf)} |"
                          f" {statistics.median(tf) / statistics.median(tg):.2f}x | | |"
                          f" {agree} |", flush=True)
                    record(bench="paircount_gpu", points=n, data=kind, periodic=periodic,
                           canopy=tg, corrfunc=tf, corrfunc_threads=os.cpu_count(), diff=diff)



# The GPU call's phases (canopy_stats and its note, src/paircount/paircount.c gpu_phases):
# name, then how to read it from the stats.
PHASES = (("build", lambda st, nt: st.build_seconds),
          ("download", lambda st, nt: st.download_seconds),
          ("frontier", lambda st, nt: st.schedule_seconds),
          ("other copies", lambda st, nt: st.transfer_seconds - st.download_seconds),
          ("kernel", lambda st, nt: st.traverse_seconds),
          ("host setup", lambda st, nt: nt["host setup"]),
          ("release", lambda st, nt: nt["release"]))


def gpu_call(x, box, rmin, rmax, nbins, leaf):
    """One canopy_paircount on the GPU from host float32 points, through the library
    with a stats struct (the package's paircount passes none): (int64 counts, stats,
    the note's host setup and release seconds)."""
    lib = canopy._lib
    po = canopy._paircount_options(rmin, rmax, nbins, True, box)
    opt = lib.run_options_default()
    opt.backend = lib.BACKEND_GPU
    opt.leaf_size = leaf
    st = lib.Stats()
    counts = np.zeros(nbins, dtype=np.float64)
    canopy._check(lib.paircount(canopy._points(x), None, lib.Points(None, 0, x.shape[1], 0), None,
                                ctypes.byref(po), ctypes.byref(opt),
                                counts.ctypes.data_as(lib.PF64), ctypes.addressof(st)))
    note = st.note.decode(errors="replace")
    m = re.search(r"host setup ([0-9.]+) s, release ([0-9.]+) s", note)
    nt = {"host setup": float(m.group(1)) if m else float("nan"),
          "release": float(m.group(2)) if m else float("nan"), "note": note}
    return counts.astype(np.int64), st, nt


GPU_SWITCHES = ("CANOPY_PAIRCOUNT_GPU_KERNEL", "CANOPY_PAIRCOUNT_GPU_TASKS")


def gpu_variants(spec):
    """--gpu-variants as (label, kernel or None, leaf, tasks or None)."""
    out = []
    for v in spec.split(","):
        if v == "default":
            out.append(("default", None, 0, None))
            continue
        kernel, leaf, tasks = v.split(":")
        out.append((v, None if kernel == "default" else kernel, int(leaf),
                    None if int(tasks) == 0 else tasks))
    return out


def gpu_rows(a, n, kind, x, box, rmin, rmax, nbins, edges, record):
    """--gpu-only: Corrfunc on all cores once, canopy's CPU walk once for its counts,
    then each GPU variant: whole calls (median of --reps after a warm-up) and their
    phases (medians)."""
    periodic = box is not None
    canopy.set_threads(os.cpu_count())
    cc = canopy.paircount(x, rmin, rmax, nbins, log=True, boxsize=box, backend="cpu")[0]
    cf, tf = timed(lambda: corrfunc_dd(x, edges, os.cpu_count(), periodic), 1, warm=False)
    for label, kernel, leaf, tasks in gpu_variants(a.gpu_variants):
        for var, val in zip(GPU_SWITCHES, (kernel, tasks)):
            if val is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = val
        calls = []
        cg, tg = timed(lambda: calls.append(gpu_call(x, box, rmin, rmax, nbins, leaf)) or
                       calls[-1][0], a.reps)
        runs = calls[1:]  # the warm-up's phases are left out, as its time is
        ph = {name: [f(st, nt) for _, st, nt in runs] for name, f in PHASES}
        inside = [sum(ph[name][i] for name, _ in PHASES) for i in range(len(runs))]
        ph["outside the walk"] = [t - s for t, s in zip(tg, inside)]
        diff = int(np.abs(cg - cf).sum())
        agree = ("equal" if diff == 0 else f"differ by {diff}") + "; canopy CPU walk " + (
            "equal" if np.array_equal(cc, cg) else f"DIFFERS by {int(np.abs(cc - cg).sum())}")
        med = {k: statistics.median(v) for k, v in ph.items()}
        print(f"| {n} | {kind} | {'periodic' if periodic else 'open'} | {label} | {fmt(tg)} |"
              f" {statistics.median(tf):.3f} | {statistics.median(tf) / statistics.median(tg):.2f}x"
              f" | " + " | ".join(f"{med[k]:.4f}" for k in med) + f" | {agree} |", flush=True)
        record(bench="paircount_gpu", points=n, data=kind, periodic=periodic, variant=label,
               canopy=tg, corrfunc=tf, corrfunc_threads=os.cpu_count(), diff=diff,
               phases=ph, note=runs[-1][2]["note"])
    for var in GPU_SWITCHES:
        os.environ.pop(var, None)


def timed_cli(argv, reps):
    """Whole `canopy` processes: wall and CPU seconds (the children's user + system)."""
    subprocess.run(argv, check=True, capture_output=True)
    ts, cs = [], []
    for _ in range(reps):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        ts.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cs.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return ts, cs


def sweep(a, n, rmin, rmax, record):
    """The bin sweep: canopy alone, uniform, open, one thread; the library (Python
    package) and the CLI (`canopy paircount`, the whole process: load, count, write)."""
    x = load_points("uniform", n, a.canopy_cli, 42)
    canopy.set_threads(1)
    print()
    print(f"Bin sweep, {n} uniform points, open box, log bins 0.005-0.1, one thread:")
    print()
    print("| bins | library wall s | library CPU s | / 10 bins | CLI wall s | CLI CPU s "
          "| / 10 bins |")
    print("|---|---|---|---|---|---|---|")
    cbase = kbase = None
    with tempfile.TemporaryDirectory() as tmp:
        data, out = os.path.join(tmp, "x.npy"), os.path.join(tmp, "counts.npy")
        np.save(data, x)
        for nb in (10, 100, 1000, 10000, 100000, 1000000):
            ts, cs = timed_cpu(
                lambda: canopy.paircount(x, rmin, rmax, nb, log=True, backend="cpu"), a.reps)
            kts, kcs = timed_cli([a.canopy_cli, "paircount", "--data1", data, "--rmin", str(rmin),
                                  "--rmax", str(rmax), "--log", "--nbins", str(nb),
                                  "--threads", "1", "-o", out], a.reps)
            c, k = statistics.median(cs), statistics.median(kcs)
            cbase, kbase = cbase or c, kbase or k
            print(f"| {nb} | {fmt(ts)} | {fmt(cs)} | {c / cbase:.2f}x | {fmt(kts)} | {fmt(kcs)} "
                  f"| {k / kbase:.2f}x |", flush=True)
            record(bench="paircount_bins", points=n, bins=nb, canopy=ts, canopy_cpu=cs,
                   cli=kts, cli_cpu=kcs)


if __name__ == "__main__":
    sys.exit(main())
