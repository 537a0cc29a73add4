#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Prints one line per skipped test of a ctest --output-junit file, with the reason the
test printed last (ctest's own summary says only "Skipped"). A skipped test that gives
no reason is named as such, so it can be fixed. usage: ctest_skips.py JUNIT.xml"""
import sys
import xml.etree.ElementTree as ET

cases = ET.parse(sys.argv[1]).getroot().iter("testcase")
skipped = [c for c in cases if c.find("skipped") is not None]
for c in skipped:
    out = c.findtext("system-out") or ""
    lines = [l.strip() for l in out.splitlines() if any(ch.isalnum() for ch in l)]
    # the test's own line saying it skipped (a launcher such as mpiexec adds its own
    # lines after it), else the last line it printed
    said = [l for l in lines if "skip" in l.lower()]
    reason = said[-1] if said else lines[-1] if lines else "NO REASON PRINTED"
    print(f"  skipped {c.get('name')}: {reason}")
if skipped:
    print(f"  {len(skipped)} test(s) skipped")
