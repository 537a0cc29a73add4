#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Proves scripts/check_layers.py can fail: fake source trees with an upward include, a long
function, an unknown folder, a stale debt entry and an unprefixed symbol, each of which must
be reported, and a clean tree (braces in strings, comments and macros) that must pass."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "check_layers.py")
DOC = """| layer | folders | what |
|---|---|---|
| 0 | `core/` | base |
| 4 | `apps/` | applications |
| 7 | `tools/` | CLI |

| layer | public headers |
|---|---|
| 0 | `canopy.h` |
"""
failures = 0


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def function(name, lines):
    """A function whose body (head to closing brace) is `lines` lines long, with braces in
    a string, a character, a comment and a macro that must not count."""
    body = ['    const char *s = "{{{ \\" {";', "    char c = '{';", "    /* } } */",
            "#define OPEN {", "    // }"]
    body += ["    (void)s;"] * (lines - 5 - len(body)) + ["    (void)c;"]
    return f"static int\n{name}(void)\n{{\n" + "\n".join(body) + "\n}\n"


def fake_tree(debt=""):
    root = tempfile.mkdtemp(prefix="canopy_layers_")
    write(root, "docs/architecture.md", DOC)
    write(root, "docs/architecture-debt.txt", "# fake\n" + debt)
    write(root, "include/canopy.h", "int canopy_x(void);\n")
    write(root, "src/core/a.c", '#include "canopy.h"\n#include "a.h"\n' + function("ok_core", 150))
    write(root, "src/core/a.h", "int a(void);\n")
    write(root, "src/apps/b.h", '#include "core/a.h"\n')
    write(root, "src/apps/b.c", '#include "apps/b.h"\nextern "C" {\n' + function("ok_apps", 140)
          + "}\nstatic const int t[] = {\n" + "1,\n" * 200 + "};\n")
    write(root, "tools/x/main.c", '#include "apps/b.h"\n')
    return root


def run(root, *extra):
    r = subprocess.run([sys.executable, SCRIPT, "--root", root, *extra], capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


def expect(what, root, rc_want, needles, *extra):
    global failures
    rc, out = run(root, *extra)
    missing = [n for n in needles if n not in out]
    if rc != rc_want or missing:
        failures += 1
        print(f"FAIL {what}: rc {rc} (want {rc_want}), missing {missing}\n{out}")
    else:
        print(f"ok   {what}")
    shutil.rmtree(root)


expect("clean tree passes", fake_tree(), 0, ["0 violations"])

root = fake_tree()
write(root, "src/core/up.c", '#include "apps/b.h"\n')
expect("upward include fails", root, 1, ["NEW up-include src/core/up.c -> apps/b.h"])

root = fake_tree()
write(root, "src/apps/long.c", function("too_long", 151))
expect("long function fails", root, 1, ["NEW long-function src/apps/long.c:too_long  (151"])

root = fake_tree()
write(root, "tools/x/long.cu", "template <int N> __global__ void __launch_bounds__(256)\n"
      + function("kernel", 160).split("\n", 1)[1])
expect("long CUDA kernel fails", root, 1, ["NEW long-function tools/x/long.cu:kernel"])

root = fake_tree()
write(root, "src/newthing/c.c", "int c;\n")
expect("unknown folder fails", root, 1, ["NEW unknown-folder src/newthing"])

root = fake_tree()
write(root, "src/apps/d.c", '#include "nowhere/d.h"\n')
expect("include of no layer fails", root, 1, ["NEW unknown-include src/apps/d.c -> nowhere/d.h"])

root = fake_tree("up-include src/core/up.c -> apps/b.h  # issue 31\n")
write(root, "src/core/up.c", '#include "apps/b.h"\n')
expect("listed violation passes", root, 0, ["1 violations, 1 listed"])

root = fake_tree("long-function src/apps/gone.c:f  # issue 31\n")
expect("stale debt entry fails", root, 1, ["FIXED long-function src/apps/gone.c:f"])

cc, ar = shutil.which("cc"), shutil.which("ar")
if cc and ar and shutil.which("nm"):
    root = fake_tree()
    src, obj, lib = (os.path.join(root, n) for n in ("s.c", "s.o", "libfake.a"))
    write(root, "s.c", "int bad_name(void) { return 0; }\nint canopy_good(void) { return 1; }\n"
          "static int hidden(void) { return 2; }\nint canopy_h(void) { return hidden(); }\n")
    subprocess.run([cc, "-c", src, "-o", obj], check=True)
    subprocess.run([ar, "rcs", lib, obj], check=True)
    rc, out = run(root, "--lib", lib)
    if rc != 1 or "NEW unprefixed-symbol bad_name" not in out or "canopy_good" in out \
            or "hidden" in out:
        failures += 1
        print(f"FAIL unprefixed symbol: rc {rc}\n{out}")
    else:
        print("ok   unprefixed symbol fails")
    shutil.rmtree(root)
else:
    print("-- no cc/ar/nm: unprefixed-symbol case not run")

sys.exit(1 if failures else 0)
