# SPDX-License-Identifier: MIT
"""The ctypes mirrors of canopy.h's structs must match the C layout field by field: a C
struct that grows without its mirror lets the library write past a ctypes buffer (a heap
corruption the test suite once showed only as a crash in a later test)."""
import ctypes
import os
import shutil
import subprocess

import pytest

from canopy import _lib

HEADER_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "include")
MIRRORS = {
    "Points": "canopy_points",
    "RunOptions": "canopy_run_options",
    "PredictOptions": "canopy_predict_options",
    "IndexOptions": "canopy_index_options",
    "IndexInfo": "canopy_index_info",
    "PaircountOptions": "canopy_paircount_options",
    "GravityOptions": "canopy_gravity_options",
    "Stats": "canopy_stats",
    "ForestInfo": "canopy_forest_info",
    "RegexMatchOptions": "canopy_regex_match_options",
    "RegexResult": "canopy_regex_result",
}


def c_layout(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None or not os.path.isfile(os.path.join(HEADER_DIR, "canopy.h")):
        pytest.skip("needs a C compiler and the source tree's include/canopy.h")
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "canopy.h"', "int main(void) {"]
    for py, c in MIRRORS.items():
        lines.append(f'    printf("{py} size %zu\\n", sizeof({c}));')
        for name, _ in getattr(_lib, py)._fields_:
            lines.append(f'    printf("{py} {name} %zu\\n", offsetof({c}, {name}));')
    lines += ["    return 0;", "}"]
    src, exe = tmp_path / "abi.c", tmp_path / "abi"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-I", HEADER_DIR, str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_ctypes_mirrors_match_the_c_structs(tmp_path):
    want = c_layout(tmp_path)
    for py in MIRRORS:
        cls = getattr(_lib, py)
        assert ctypes.sizeof(cls) == want[(py, "size")], f"{py}: size differs from C"
        for name, _ in cls._fields_:
            assert getattr(cls, name).offset == want[(py, name)], f"{py}.{name}: offset differs"
