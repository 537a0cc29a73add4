#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regex benchmark (Ren et al. §6.1.3): count the lines of the King James Bible that
# match any of N = 1..10 patterns `.*ab`, `.*cd`, ... (distinct letters per
# pattern), with canopy (each engine), GNU grep -E -c, RE2::Set and Hyperscan, in
# the same run on the same cores. Two views:
#   end to end: the command's wall time (process start, reading, matching):
#               `canopy grep -c` vs `grep -E -c`;
#   in process: matching a buffer already in memory: canopy_regex_match vs RE2::Set
#               (line by line) vs Hyperscan (one block-mode scan).
# Medians and min-max over REPS runs; every tool's count must agree, else exit 1.
# usage: bench/run_regex.sh [--install-peers] [KJV.txt] (default: unpacks
#        ../shared/data/kjv.txt.gz). Env: REPS (default 7), THREADS (default all),
#        BUILD (default build-bench-regex), CMAKE_ARGS (extra configure arguments),
#        LDFLAGS (extra link flags for the in-process driver), PEERS (a folder with
#        prebuilt bench_re2 / bench_hs, for machines without RE2 and Hyperscan: put
#        their shared libraries in LD_LIBRARY_PATH). Tables go to stdout.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = "--install-peers" ]; then
    "$root/bench/regex/install-peers.sh"
    shift
fi
reps=${REPS:-7}
build=${BUILD:-$root/build-bench-regex}
work=$(mktemp -d /tmp/canopy-bench-regex.XXXXXX)
trap 'rm -rf "$work"' EXIT
kjv=${1:-}
if [ -z "$kjv" ]; then
    zcat "$root/../shared/data/kjv.txt.gz" >"$work/kjv.txt"
    kjv=$work/kjv.txt
fi
threads=${THREADS:-$(nproc)}
# Passive OpenMP waits: on a busy machine spinning threads cost more than they save.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} LC_ALL=C

# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCANOPY_CUDA=OFF ${CMAKE_ARGS:-} >/dev/null
ninja -C "$build" canopy canopy_static >/dev/null
canopy=$build/canopy
# shellcheck disable=SC2086
cc -O2 -I"$root/include" "$root/bench/regex/bench_canopy.c" "$build/libcanopy.a" -fopenmp \
    ${LDFLAGS:-} -ljson-c -lm -o "$work/bench_canopy"
have_re2=0 have_hs=0
if [ -n "${PEERS:-}" ]; then
    [ -x "$PEERS/bench_re2" ] && "$PEERS/bench_re2" /dev/null 1 a >/dev/null 2>&1 && ln -s "$PEERS/bench_re2" "$work/" && have_re2=1
    [ -x "$PEERS/bench_hs" ] && "$PEERS/bench_hs" /dev/null 1 a >/dev/null 2>&1 && ln -s "$PEERS/bench_hs" "$work/" && have_hs=1
else
    if c++ -O2 -std=c++17 "$root/bench/regex/bench_re2.cc" -o "$work/bench_re2" -lre2 2>/dev/null; then
        have_re2=1
    fi
    if cc -O2 "$root/bench/regex/bench_hs.c" -o "$work/bench_hs" -lhs 2>/dev/null; then have_hs=1; fi
fi
echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; $(grep --version | head -1); RE2 driver: $have_re2, Hyperscan driver: $have_hs; $(date -u +%Y-%m-%dT%H:%MZ)"

python3 - "$kjv" "$reps" "$threads" "$canopy" "$work" "$have_re2" "$have_hs" <<'PY'
import os, statistics, subprocess, sys, time
kjv, reps, threads, canopy, work, have_re2, have_hs = sys.argv[1:]
reps, threads = int(reps), int(threads)
pairs = ["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st"]
bad = []

def wall(cmd, n):
    """Median/min/max wall ms of a command and its stdout (last run)."""
    ts, out = [], None
    subprocess.run(cmd, stdout=subprocess.DEVNULL)  # warm the page cache
    for _ in range(n):
        t = time.perf_counter()
        out = subprocess.run(cmd, stdout=subprocess.PIPE, check=False).stdout
        ts.append((time.perf_counter() - t) * 1e3)
    return ts, out.decode().strip()

def inproc(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, check=True).stdout.decode().split()
    return [float(x) for x in out[1:]], out[0]

def fmt(ts):
    return "%.2f (%.2f–%.2f)" % (statistics.median(ts), min(ts), max(ts))

rows = []
start_ts, _ = wall(["/bin/true"], reps)
print("- process start (`/bin/true`): %s ms" % fmt(start_ts))
for n in range(1, 11):
    pats = [".*" + p for p in pairs[:n]]
    alt = "|".join(pats)
    slow_reps = 3 if n in (1, 3, 10) else 0  # the Pike VMs are slow: fewer points
    r = {"n": n}
    ts, cnt = wall(["grep", "-E", "-c", alt, kjv], reps)
    r["grep"], counts = ts, {"grep": cnt}
    for eng in ["dfa", "pike", "simd"]:
        k = reps if eng == "dfa" else slow_reps
        if not k:
            continue
        args = [canopy, "grep", "-c", "--threads", str(threads), "--engine", eng]
        for p in pats:
            args += ["-e", p]
        ts, c = wall(args + [kjv], k)
        r["cli_" + eng], counts["cli_" + eng] = ts, c
        if eng == "dfa":
            args1 = [a if a != str(threads) else "1" for a in args]
            r["cli_dfa1"], counts["cli_dfa1"] = wall(args1 + [kjv], k)
        ts, c = inproc([os.path.join(work, "bench_canopy"), kjv, eng, str(k)] + pats)
        r["api_" + eng], counts["api_" + eng] = ts, c
    if have_re2 == "1":
        r["re2"], counts["re2"] = inproc([os.path.join(work, "bench_re2"), kjv, str(reps)] + pats)
    if have_hs == "1":
        r["hs"], counts["hs"] = inproc([os.path.join(work, "bench_hs"), kjv, str(reps)] + pats)
    if len(set(counts.values())) != 1:
        bad.append((n, counts))
    r["count"] = counts["grep"]
    rows.append(r)
    print("N=%d count %s: grep %.2f ms, canopy dfa %.2f ms (cli) %.2f ms (api)%s%s" % (
        n, r["count"], statistics.median(r["grep"]), statistics.median(r["cli_dfa"]),
        statistics.median(r["api_dfa"]),
        ", re2 %.2f ms" % statistics.median(r["re2"]) if "re2" in r else "",
        ", hyperscan %.2f ms" % statistics.median(r["hs"]) if "hs" in r else ""), file=sys.stderr)

def cell(r, k):
    return fmt(r[k]) if k in r else "–"

def ratio(r, a, b):
    return "%.2f×" % (statistics.median(r[a]) / statistics.median(r[b])) if a in r and b in r else "–"

out = []
out.append("### End to end (wall ms of the command: start, read, match)\n")
out.append("| N | lines | grep -E -c | canopy grep dfa | dfa, 1 thread | pike | simd | grep / canopy dfa |")
out.append("|---|---|---|---|---|---|---|---|")
for r in rows:
    out.append("| %d | %s | %s | %s | %s | %s | %s | %s |" % (r["n"], r["count"], cell(r, "grep"),
               cell(r, "cli_dfa"), cell(r, "cli_dfa1"), cell(r, "cli_pike"), cell(r, "cli_simd"),
               ratio(r, "grep", "cli_dfa")))
out.append("\n### In process (ms to match the buffer in memory)\n")
out.append("| N | canopy dfa | pike | simd | RE2::Set | Hyperscan | RE2 / canopy | Hyperscan / canopy | pike / simd |")
out.append("|---|---|---|---|---|---|---|---|---|")
for r in rows:
    out.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (r["n"], cell(r, "api_dfa"), cell(r, "api_pike"),
               cell(r, "api_simd"), cell(r, "re2"), cell(r, "hs"), ratio(r, "re2", "api_dfa"),
               ratio(r, "hs", "api_dfa"), ratio(r, "api_pike", "api_simd")))
print("\n".join(out))
if bad:
    print("COUNT MISMATCH:", bad, file=sys.stderr)
    sys.exit(1)
PY
