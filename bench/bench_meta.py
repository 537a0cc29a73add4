# SPDX-License-Identifier: MIT
"""The fields every raw JSON line of the benchmarks starts with: commit, machine and
date, the same as bench_util.c's bench_meta_json() writes for the C programs.

commit: $CANOPY_COMMIT, else the source tree's git HEAD, else "unknown"; machine:
$CANOPY_MACHINE, else "<CPU model>, <logical CPUs> CPUs[, <GPU name>]"; date: UTC,
ISO 8601, at the first call. Computed once per process."""
import datetime
import functools
import json
import os
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))


def _first_line(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.splitlines()[0].strip() if out.strip() else ""


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


@functools.lru_cache(maxsize=None)
def meta():
    commit = (os.environ.get("CANOPY_COMMIT")
              or _first_line(["git", "-C", _HERE, "rev-parse", "--short", "HEAD"]) or "unknown")
    machine = os.environ.get("CANOPY_MACHINE")
    if not machine:
        machine = f"{_cpu_model()}, {os.cpu_count()} CPUs"
        gpu = _first_line(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
        if gpu:
            machine += f", {gpu}"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"commit": commit, "machine": machine, "date": date}


def json_line(record):
    """record as one JSON line (no newline), the meta fields first."""
    return json.dumps({**meta(), **record})
