#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/bench/ratios.py: TAP checks of the benchmark harness's ratio logic
against vader (bench/benchlib.py), as bench/compare's report summary and
bench/summarize-runs use it, on the JSON fixtures in tests/bench/fixtures/:

  <name>/rounds.json    round medians in bench/compare's rounds.json format
  <name>/expected.json  "counts": [per-round <= 0.5 at the largest size,
                        per-round never above 1.05, ratio of medians <= 0.5,
                        ratio of medians never above 1.05]; optionally
                        "ratios": {"PATTERN SIZE": [of medians, per round]}

For each fixture: bench/compare's ddt_summary() and bench/summarize-runs
must both print the expected counts, and benchlib's ratios must equal the
hand-computed ones.  bench/compare's before/after summary (--baseline) is
checked on three hand-made cases.  Needs only python3 (no MPI, no build).
"""
import glob
import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from taplib import ROOT, Tap, load_script  # noqa: E402
import benchlib  # noqa: E402

tap = Tap()


def compare_counts(compare, rows):
    """The four counts of bench/compare's ddt summary over rounds.json rows."""
    data, meta = {}, {}
    for e in rows:
        key = (e["bench"], e["pattern"], e["size"], e["method"])
        meta[key] = e["bytes"]
        data[key] = {c: {int(r): v for r, v in d.items()}
                     for c, d in e["round_medians_us"].items()}
    text = "\n".join(compare.ddt_summary(data, meta, ["pvas"] + list(benchlib.VADER), 1.0))
    m = re.search(r"Patterns with ratio <= 0.5.*", text)
    return [int(x) for x in re.findall(r"\*\*(\d+) of", m.group(0))] if m else None


def summarize_counts(fixture):
    """The four counts of bench/summarize-runs over the fixture, in compare's order."""
    p = subprocess.run([os.path.join(ROOT, "bench", "summarize-runs"), fixture],
                       capture_output=True, text=True)
    m = re.search(r"\*\*(\d+) of \d+\*\* \(per-round (\d+)\); never above 1.05 "
                  r"\*\*(\d+) of \d+\*\* \(per-round (\d+)\)", p.stdout)
    if p.returncode != 0 or not m:
        return None, (p.stdout + p.stderr).strip()[-300:]
    med_half, round_half, med_never, round_never = (int(x) for x in m.groups())
    return [round_half, round_never, med_half, med_never], None


def baseline_check(compare):
    """Three cases against pvas-baseline: every round 10 % slower (moved),
    8 % faster in the median but one round slower (noise), 3 % slower in
    every round (within 5 %: noise)."""
    rounds = {"slower": ([11.0, 22.0, 33.0], [10.0, 20.0, 30.0]),
              "mixed": ([9.2, 9.0, 10.5], [10.0, 10.0, 10.0]),
              "small": ([10.3, 10.3, 10.3], [10.0, 10.0, 10.0])}
    data, meta = {}, {}
    for i, (name, (new, old)) in enumerate(sorted(rounds.items())):
        key = ("ddt", name, "s", "mpi_ddt")
        meta[key] = 1000 + i
        data[key] = {"pvas": dict(enumerate(new)), "pvas-baseline": dict(enumerate(old))}
    text = "\n".join(compare.baseline_summary(data, meta, ["pvas", "pvas-baseline"]))
    ok = "moved beyond noise: **1** (slower s slower)" in text and "| 0.92 [0.90-1.05] | - |" in text
    tap(ok, "bench/compare --baseline: 1 of 3 hand-made cases moved (10 % slower every round)",
        text[-300:])


def main():
    compare = load_script("bench/compare")
    baseline_check(compare)
    fixtures = sorted(glob.glob(os.path.join(ROOT, "tests", "bench", "fixtures", "*", "")))
    tap(len(fixtures) >= 2, "at least two fixtures in tests/bench/fixtures (%d)" % len(fixtures))
    for fx in fixtures:
        fx = fx.rstrip("/")
        name = os.path.basename(fx)
        with open(os.path.join(fx, "rounds.json")) as f:
            rows = json.load(f)
        with open(os.path.join(fx, "expected.json")) as f:
            want = json.load(f)
        got = compare_counts(compare, rows)
        tap(got == want["counts"], "%s: bench/compare's summary counts %s = expected %s"
            % (name, got, want["counts"]))
        got, err = summarize_counts(fx)
        tap(got == want["counts"], "%s: bench/summarize-runs counts %s = expected %s"
            % (name, got, want["counts"]), err)
        for case, (rm_want, rt_want) in sorted(want.get("ratios", {}).items()):
            pattern, size = case.split(" ", 1)
            e = [r for r in rows if r["pattern"] == pattern and r["size"] == size]
            d = ({c: {int(r): v for r, v in x.items()} for c, x in e[0]["round_medians_us"].items()}
                 if e else {})
            rm = benchlib.ratio_of_medians(d, "pvas") if e else None
            rt = benchlib.ratio(d, "pvas") if e else None
            ok = (rm is not None and rt is not None and abs(rm - rm_want) < 1e-9
                  and abs(rt[0] - rt_want) < 1e-9)
            tap(ok, "%s: %s: ratio of medians %s, per-round ratio %s = hand-computed %s, %s"
                % (name, case, rm and "%.3f" % rm, rt and "%.3f" % rt[0], rm_want, rt_want))
    return tap.plan()


if __name__ == "__main__":
    sys.exit(main())
