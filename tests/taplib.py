# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/taplib.py: what the Python TAP suites under tests/ share: numbered
TAP lines, and the project's scripts (files without .py) as modules."""
import importlib.machinery
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))


class Tap:
    """tap(ok, name, diag) prints one numbered TAP line (diag as comments
    when it fails); plan() prints the plan and returns the exit status."""

    def __init__(self):
        self.n = self.fails = 0

    def __call__(self, ok, name, diag=None):
        self.n += 1
        print("%s %d %s" % ("ok" if ok else "not ok", self.n, name))
        if not ok:
            self.fails += 1
            if diag:
                print("# " + diag.replace("\n", "\n# "))

    def plan(self):
        print("1..%d" % self.n)
        return 1 if self.fails else 0


def load_script(relpath):
    """The script at ROOT/relpath (e.g. bench/compare) as a module."""
    path = os.path.join(ROOT, relpath)
    modname = relpath.replace("/", "_").replace("-", "_")
    loader = importlib.machinery.SourceFileLoader(modname, path)
    spec = importlib.util.spec_from_loader(modname, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
