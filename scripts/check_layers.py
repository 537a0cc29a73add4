#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Layering check (issue 31): fails on an include that runs up a layer, a function over
150 lines, an unknown folder of src/ and a global of libcanopy.a without the canopy_ prefix.

The layer table is read from docs/architecture.md; today's violations are listed in
docs/architecture-debt.txt. A violation not in that list fails, and so does a listed one
that no longer occurs, so the list only shrinks.

usage: check_layers.py [--root DIR] [--lib libcanopy.a] [--print]
  --print  write every current violation in the debt file's format and exit 0
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

MAX_LINES = 150
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".inc")
DOC = "docs/architecture.md"
DEBT = "docs/architecture-debt.txt"
# Identifiers that take parentheses in a function head without being its name.
NOT_NAMES = {"__attribute__", "__launch_bounds__", "__declspec", "alignas", "_Alignas",
             "if", "for", "while", "switch", "return", "sizeof", "defined"}


def read_layers(root):
    """Rows `| n | `a/`, `b/` | ... |` of the doc's layer table -> {folder: n}, and the
    public headers' rows `| n | `canopy/x.h` ... |` -> {header: n}."""
    folders, headers = {}, {}
    path = os.path.join(root, DOC)
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
            if not m:
                continue
            layer = int(m.group(1))
            for name in re.findall(r"`([^`]+)`", m.group(2)):
                if name.endswith("/"):
                    folders[name.rstrip("/")] = layer
                else:
                    headers[name] = layer
    if not folders:
        sys.exit(f"check_layers: no layer table found in {path}")
    return folders, headers


def blank(text):
    """Comments, string and character literals and preprocessor lines replaced by spaces,
    newlines kept, so braces inside them neither open nor close anything."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A directive runs to the first newline not escaped by a backslash.
            j = i
            while j < n and not (text[j] == "\n" and text[j - 1] != "\\"):
                j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
            continue
        if c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + c)
            i = j
            at_line_start = False
            continue
        out.append(c)
        if c == "\n":
            at_line_start = True
        elif not c.isspace():
            at_line_start = False
        i += 1
    return "".join(out)


def function_name(head):
    """The name in a function head (text between the previous top-level `;`/`}` and the
    `{`), or None when the block is not a function body (struct, initialiser, extern "C")."""
    if "=" in re.sub(r"\([^()]*\)", "", head) or not head.rstrip().endswith(")"):
        return None
    name = None
    for m in re.finditer(r"([A-Za-z_]\w*)\s*\(", head):
        if m.group(1) not in NOT_NAMES:
            name = m.group(1)
    return name


def long_functions(path, rel):
    """(name, lines) of each function body in the file longer than MAX_LINES."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = blank(f.read())
    found = []
    depth, head_start, body_start, name = 0, 0, 0, None
    # Blocks that hold definitions rather than statements (extern "C", namespace).
    transparent = 0
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                head = text[head_start:i]
                if re.search(r"\b(extern|namespace)\b[^(){};]*$", head) and "(" not in head:
                    transparent += 1
                    head_start = i + 1
                    continue
                name = function_name(head)
                body_start = head_start + len(head) - len(head.lstrip())
            depth += 1
        elif c == "}":
            if depth == 0:
                if transparent:
                    transparent -= 1
                head_start = i + 1
                continue
            depth -= 1
            if depth == 0:
                if name:
                    lines = text.count("\n", body_start, i) + 1
                    if lines > MAX_LINES:
                        found.append((name, lines))
                head_start = i + 1
        elif c == ";" and depth == 0:
            head_start = i + 1
    if depth != 0:
        found.append(("<unbalanced braces>", 0))
    return found


def source_files(root, top):
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(SOURCE_EXT):
                full = os.path.join(dirpath, fn)
                yield full, os.path.relpath(full, root)


def layer_of_include(root, rel, target, folders, headers):
    """(layer, name) of the file an `#include "target"` in rel names, or (None, reason)."""
    here = os.path.dirname(rel)
    if "/" not in target and os.path.exists(os.path.join(root, here, target)):
        return layer_of_file(os.path.join(here, target), folders, headers)
    first = target.split("/")[0]
    if first in folders:
        return folders[first], first
    if target in headers:
        return headers[target], target
    return None, f"include \"{target}\" names no layer"


def layer_of_file(rel, folders, headers):
    parts = rel.split("/")
    if parts[0] == "include":
        key = "/".join(parts[1:])
        return (headers[key], key) if key in headers else (None, key)
    if parts[0] == "src":
        key = parts[1]
    else:
        key = parts[0]
    return (folders[key], key) if key in folders else (None, key)


def scan_tree(root, folders, headers):
    found = []
    for d in sorted(os.listdir(os.path.join(root, "src"))):
        if os.path.isdir(os.path.join(root, "src", d)) and d not in folders:
            found.append(f"unknown-folder src/{d}")
    for top in ("src", "tools", "include"):
        if not os.path.isdir(os.path.join(root, top)):
            continue
        for full, rel in source_files(root, top):
            own, own_name = layer_of_file(rel, folders, headers)
            if own is None:
                if top == "include":
                    found.append(f"unknown-header {rel}")
                continue
            with open(full, encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    layer, name = layer_of_include(root, rel, m.group(1), folders, headers)
                    if layer is None:
                        found.append(f"unknown-include {rel} -> {m.group(1)}")
                    elif layer > own:
                        found.append(f"up-include {rel} -> {m.group(1)}"
                                     f"  ({own_name} {own} -> {name} {layer})")
            if top != "include":
                for name, lines in long_functions(full, rel):
                    found.append(f"long-function {rel}:{name}  ({lines} lines)")
    return found


def scan_symbols(lib):
    """Defined globals of the archive without the prefix; None when it cannot be read."""
    nm = shutil.which("nm")
    if not nm or not lib or not os.path.exists(lib):
        why = "nm not found" if not nm else f"no library at {lib!r}"
        print(f"check_layers: symbol check skipped ({why})")
        return None
    out = subprocess.run([nm, "-g", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        name = parts[2]
        # An OpenMP `critical (x)` section is a common symbol named after x.
        own = name[len(".gomp_critical_user_"):] if name.startswith(".gomp_critical_user_") else name
        # Names starting with `__` belong to the compiler and its runtime.
        if not own.startswith(("canopy_", "__")):
            names.add(name)
    return [f"unprefixed-symbol {s}" for s in sorted(names)]


def key(entry):
    """The part of a violation that names it; counts after two spaces are information."""
    return entry.split("  ")[0].strip()


def read_debt(root):
    debt = {}
    with open(os.path.join(root, DEBT), encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                debt[key(line)] = line
    return debt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--lib", help="libcanopy.a, for the symbol check")
    ap.add_argument("--print", action="store_true", dest="print_all")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    folders, headers = read_layers(root)
    found = scan_tree(root, folders, headers)
    symbols = scan_symbols(args.lib)
    if symbols is not None:
        found += symbols
    if args.print_all:
        for f in found:
            print(f"{f}  # issue 31")
        return 0
    debt = read_debt(root)
    now = {key(f): f for f in found}
    new = [now[k] for k in now if k not in debt]
    gone = [k for k in debt
            if k not in now and (symbols is not None or not k.startswith("unprefixed-symbol"))]
    for f in new:
        print(f"check_layers: NEW {f}")
    for k in gone:
        print(f"check_layers: FIXED {k} (no longer occurs: remove its line from {DEBT})")
    print(f"check_layers: {len(found)} violations, {len(debt)} listed in {DEBT}, "
          f"{len(new)} new, {len(gone)} fixed but still listed")
    return 1 if new or gone else 0


if __name__ == "__main__":
    sys.exit(main())
