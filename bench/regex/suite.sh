#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Regex suite (issue 20): `canopy grep -c` against GNU `grep -E -c` on one core, on five
# corpora (English prose, a dictionary-like word list, C source, log lines, DNA) and
# per corpus pattern sets from one literal to ten patterns, plus two sets whose lazy DFA
# thrashes (3 MB of prose and of DNA: the SIMD Pike VM finishes). Runs are interleaved
# (grep, canopy, grep, canopy, ...) so both see the same machine load; every count
# must equal grep's, else exit 1. Corpora that cannot be shipped are generated from a
# fixed seed: the word list from the King James Bible's vocabulary with prefixes and
# suffixes, the log lines and the DNA at random, the source from this repository.
# With Hyperscan installed (libhyperscan-dev), bench/regex/bench_hs.c is a third peer
# in the same interleaved runs: a whole process that maps the file, compiles the
# patterns and scans once (counts must agree too).
# usage: bench/regex/suite.sh [CANOPY_BINARY [BASELINE_BINARY]] (default: build/canopy;
#        a baseline, e.g. a build of an older commit, runs interleaved too). Env: REPS
#        (default 7), CPU (the core to pin to, default 0), KJV (default
#        ../shared/data/kjv.txt.gz beside the checkout, or /work/shared/data/kjv.txt.gz).
# Prints a markdown table (and on stderr each corpus's age at its first row): median
# (min-max) wall ms of the whole command, the ratios
# grep / canopy and Hyperscan / canopy of the medians, the same ratios of the median
# CPU time (user + system) of each process (less sensitive to other jobs on a shared
# machine than wall time), the baseline's, canopy's literal prefilter and the bytes
# its DFA ran on (from --stats).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
canopy=${1:-$root/build/canopy}
base=${2:-}
reps=${REPS:-7}
cpu=${CPU:-0}
kjv=${KJV:-}
for k in "$root/../shared/data/kjv.txt.gz" /work/shared/data/kjv.txt.gz; do
    [ -z "$kjv" ] && [ -f "$k" ] && kjv=$k
done
[ -n "$kjv" ] || { echo "no kjv.txt.gz: set KJV" >&2; exit 2; }
work=$(mktemp -d /tmp/canopy-regex-suite.XXXXXX)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C OMP_NUM_THREADS=1 CANOPY_THREADS=1 OMP_WAIT_POLICY=passive
hs=""
if cc -O2 "$root/bench/regex/bench_hs.c" -o "$work/bench_hs" -lhs 2>/dev/null; then hs=$work/bench_hs; fi
python3 - "$work" "$kjv" "$root" <<'PY'
import gzip, glob, random, re, sys
work, kjv, root = sys.argv[1:]
r = random.Random(20)
text = gzip.open(kjv).read()
open(work + "/prose", "wb").write(text * 4)  # 17.6 MB
open(work + "/prose3m", "wb").write(text[:text.index(b"\n", 3_000_000) + 1])  # DFA blow-up rows
words = sorted(set(re.findall(rb"[A-Za-z]+", text)))
pre = [b"", b"un", b"re", b"pre", b"over", b"non", b"anti", b"sub"]
suf = [b"", b"s", b"ed", b"ing", b"ly", b"ness", b"er", b"est", b"ism", b"ist", b"able", b"ex"]
dic = sorted({p + w + s for w in words for p in pre for s in suf})
open(work + "/dict", "wb").write(b"\n".join(dic) + b"\n")
src = b"".join(open(f, "rb").read() for f in sorted(glob.glob(root + "/src/**/*.[ch]", recursive=True)))
open(work + "/source", "wb").write(src * max(1, 16_000_000 // max(1, len(src))))
lv = [b"INFO", b"WARN", b"ERROR", b"DEBUG"]
svc = [b"sshd", b"nginx", b"kernel", b"cron", b"postgres", b"systemd"]
msg = [b"connection from %d.%d.%d.%d port %d", b"GET /api/v1/items/%d HTTP/1.1 %d",
       b"session opened for user u%d by (uid=%d)", b"disk /dev/sd%c usage %d%%",
       b"timeout after %d ms waiting for lock %d", b"checkpoint complete: wrote %d buffers"]
out = []
for i in range(220_000):
    m = r.choice(msg)
    n = m.count(b"%")
    args = tuple(r.choice(b"abcd") if f == b"%c" else r.randrange(100000)
                 for f in re.findall(rb"%[dc]", m))
    out.append(b"2026-11-%02d %02d:%02d:%02d host%d %s[%d]: %s %s" % (
        r.randrange(1, 29), r.randrange(24), r.randrange(60), r.randrange(60), r.randrange(40),
        r.choice(svc), r.randrange(1, 65536), r.choice(lv), m.replace(b"%%", b"%%%%") % args if False else (m % args)))
open(work + "/logs", "wb").write(b"\n".join(out) + b"\n")
dna = bytes(r.choice(b"ACGT") for _ in range(16_000_000))
dna = b"\n".join(dna[i:i + 60] for i in range(0, len(dna), 60)) + b"\n"
open(work + "/dna", "wb").write(dna)
open(work + "/dna3m", "wb").write(dna[:dna.index(b"\n", 3_000_000) + 1])  # a second DFA blow-up
PY
python3 - "$work" "$canopy" "$reps" "$cpu" "$hs" "$base" <<'PY'
import os, resource, statistics, subprocess, sys, time
work, canopy, reps, cpu, hs, base = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
W3 = ["Jerusalem", "Pharaoh", "Babylon"]
W10 = W3 + ["Egypt", "Moses", "David", "Israel", "temple", "prophet", "wilderness"]
W30 = W10 + ["Abraham", "Isaac", "Jacob", "Joseph", "Aaron", "Samuel", "Solomon", "Judah",
             "Benjamin", "Ephraim", "Jordan", "Zion", "Assyria", "Philistines", "covenant",
             "sabbath", "offering", "sanctuary", "priest", "kingdom"]
XY = [".*" + a for a in ["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st"]]
text_sets = [
    ("literal `the`", ["the"]),
    ("`.*ex`", [".*ex"]),
    ("`[0-9]{3,}`", ["[0-9]{3,}"]),
    ("`(Latin|Greek|French|German)`", ["(Latin|Greek|French|German)"]),
    ("`[A-Z][a-z]+ [A-Z][a-z]+`", ["[A-Z][a-z]+ [A-Z][a-z]+"]),
    ("3 words", W3),
    ("10 words", W10),
    ("30 words", W30),
    ("3 `.*xy`", XY[:3]),
    ("10 `.*xy`", XY),
]
corpora = {
    "prose": text_sets,
    "dict": text_sets,
    "source": text_sets + [("3 C words", ["malloc", "memcpy", "static inline"]),
                           ("`int[0-9]+_t [a-z_]+\\(`", ["int[0-9]+_t [a-z_]+\\("])],
    "logs": text_sets + [("`ERROR.*timeout`", ["ERROR.*timeout"]),
                         ("IPv4", ["[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}"]),
                         ("3 services", ["sshd", "nginx", "postgres"])],
    # DFA blow-up (Ren's case for the SIMD NFA): a set whose DFA thrashes its cache, so the
    # SIMD Pike VM finishes the blocks; on the first 3 MB of prose (grep takes seconds)
    "prose3m": [("3 DFA blow-up", ["e.{13}x", "a[a-z ]{10}b", "o[a-z,; ]{11}u"])],
    "dna": [("literal `GATTACA`", ["GATTACA"]), ("`(AAT|CCG|GTA)T{4}`", ["(AAT|CCG|GTA)T{4}"]),
            ("`A[CG]{6,}T`", ["A[CG]{6,}T"]), ("3 motifs", ["ACGTACGT", "TTTTCCCC", "GGGAAATT"]),
            ("10 motifs", ["ACGTACGT", "TTTTCCCC", "GGGAAATT", "CATCATCA", "GCGCGCGC",
                           "AATTAATT", "CCAATTGG", "TGCATGCA", "AGCTAGCT", "GTCAGTCA"])],
    # a second set the DFA gives up on (Ren's case for the SIMD NFA), on 3 MB of DNA
    "dna3m": [("3 DFA blow-up", ["A.{12}C", "G[AC]{10}T", "T.{11}G"])],
}
# Pinned by inheriting this process's affinity: with `taskset -c` in front, each
# process's CPU time also held taskset's own start and exec (0.5-1.3 ms, as much as
# canopy's whole start), the same on both sides, which pulled every ratio towards 1.
os.sched_setaffinity(0, {int(cpu)})
def children_cpu_ms():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (ru.ru_utime + ru.ru_stime) * 1e3
def run(cmd):
    """Wall ms, CPU ms (user + system of the process), stdout, stderr."""
    c, t = children_cpu_ms(), time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wall = (time.perf_counter() - t) * 1e3
    return wall, children_cpu_ms() - c, p.stdout.decode().strip(), p.stderr.decode()
def fmt(ts):
    return "%.1f (%.1f–%.1f)" % (statistics.median(ts), min(ts), max(ts))
bad = 0
# tools in each round: grep, canopy, [Hyperscan], [the baseline canopy]
print("| corpus | patterns | lines | grep -E -c | canopy grep -c | Hyperscan | grep / canopy | "
      "Hyperscan / canopy | CPU: grep / canopy | CPU: Hyperscan / canopy |%s prefilter | DFA bytes |"
      % (" baseline | grep / baseline | CPU: grep / baseline |" if base else ""))
print("|---" * (12 + (3 if base else 0)) + "|")
for corpus, sets in corpora.items():
    f = os.path.join(work, corpus)
    # a file's page cache gets slower to map as it ages (its large folios split)
    print("%s: written %.0f s before its first row" % (corpus, time.time() - os.path.getmtime(f)),
          file=sys.stderr)
    for name, pats in sets:
        args = [x for p in pats for x in ("-e", p)]
        g = [["grep", "-E", "-c"] + args + [f], [canopy, "grep", "-c"] + args + [f]]
        ih = ib = None
        if hs:
            ih = len(g)
            g.append([hs, f, "0"] + pats)
        if base:
            ib = len(g)
            g.append([base, "grep", "-c"] + args + [f])
        for c in g:
            run(c)  # warm the page cache
        ts = [[] for _ in g]
        cs = [[] for _ in g]
        outs = [None] * len(g)
        for _ in range(reps):
            for i, c in enumerate(g):
                t, cpu_ms, outs[i], _ = run(c)
                ts[i].append(t)
                cs[i].append(cpu_ms)
        _, _, _, err = run([canopy, "grep", "-c", "--stats"] + args + [f])
        pf = err.split("literal prefilter ")[1].split(",")[0] if "literal prefilter" in err else "?"
        db = err.split("dfa bytes ")[1].split(",")[0] if "dfa bytes" in err else "?"
        outs = [o.split()[0] if o else "" for o in outs]
        if len(set(outs)) != 1:
            bad += 1
            print("COUNT MISMATCH %s %s: %s" % (corpus, name, outs), file=sys.stderr)
        med = [statistics.median(t) for t in ts]
        cmed = [max(statistics.median(c), 1e-3) for c in cs]
        cells = [corpus, name.replace("|", "\\|"), outs[0], fmt(ts[0]), fmt(ts[1]), fmt(ts[ih]) if hs else "–",
                 "%.2f×" % (med[0] / med[1]), "%.2f×" % (med[ih] / med[1]) if hs else "–",
                 "%.2f×" % (cmed[0] / cmed[1]), "%.2f×" % (cmed[ih] / cmed[1]) if hs else "–"]
        if base:
            cells += [fmt(ts[ib]), "%.2f×" % (med[0] / med[ib]), "%.2f×" % (cmed[0] / cmed[ib])]
        print("| " + " | ".join(cells + [pf, db]) + " |", flush=True)
sys.exit(1 if bad else 0)
PY
