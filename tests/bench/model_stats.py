#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/bench/model_stats.py: TAP checks of bench/model-check's reading of
ob1's pml_ob1_direct_stats lines (model_stats), on the fixtures in
tests/bench/model-stats/:

  <name>.stderr  the stats lines of one launch, as ob1 prints them
  <name>.json    "chosen": the messages the model's own run sent on each
                 path and eagerly ("eager": its eager sends plus the
                 rendezvous that a leading receiver turned into eager
                 sends; "own": ob1's own eager sends); "launch": each
                 path's count over the whole launch

Needs only python3 (no MPI, no build).
"""
import glob
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ROOT, Tap, load_script  # noqa: E402

tap = Tap()


def main():
    mc = load_script("bench/model-check")
    fixtures = sorted(glob.glob(os.path.join(ROOT, "tests/bench/model-stats/*.stderr")))
    if not fixtures:
        tap(False, "fixtures in tests/bench/model-stats")
    for f in fixtures:
        name = os.path.basename(f)[:-len(".stderr")]
        with open(f) as fh:
            lines = fh.read().splitlines()
        with open(f[:-len(".stderr")] + ".json") as fh:
            want = json.load(fh)
        got = {k: v[0] for k, v in mc.model_stats(lines, chosen=True).items()}
        tap(got == want["chosen"], "%s: the model's messages per path and eager send" % name,
            "got %s, expected %s" % (got, want["chosen"]))
        got = {k: v[0] for k, v in mc.model_stats(lines).items() if k in mc.PATHS}
        tap(got == want["launch"], "%s: the launch's messages per path" % name,
            "got %s, expected %s" % (got, want["launch"]))
    return tap.plan()


if __name__ == "__main__":
    sys.exit(main())
