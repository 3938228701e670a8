"""bench/benchlib.py: helpers shared by the benchmark harnesses (bench/compare,
bench/tune-direct): which MPI the binaries were built for (mpi.env), mpirun
command lines, probing a configuration, running one benchmark and reading
its CSV rows, memcpy bandwidth, small formatting helpers, and issue #5's
ratios against vader (also used by bench/summarize-runs).

A configuration is a list of mpirun arguments, e.g.
["--mca", "btl", "self,pvas"].  Messages go to stdout prefixed with the
harness name (set_prog).
"""
import csv
import io
import fnmatch
import os
import platform
import re
import statistics
import subprocess
import sys
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_prog = "bench"


def set_prog(name):
    """Name printed in front of every log line and error."""
    global _prog
    _prog = name


def log(msg):
    print("%s: %s" % (_prog, msg), flush=True)


def die(msg, code=1):
    print("%s: %s" % (_prog, msg), file=sys.stderr, flush=True)
    sys.exit(code)


def read_env(build):
    """KEY=VALUE lines of <build>/mpi.env (written by bench/build.mk)."""
    env = {}
    path = os.path.join(build, "mpi.env")
    try:
        with open(path) as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    env[k] = v
    except OSError as e:
        die("read %s: %s (build first: make bench-build)" % (path, e.strerror))
    for k in ("MPIRUN", "OMPI_INFO"):
        if k not in env:
            die("%s: no %s= line" % (path, k))
    return env


def prefix_of(env):
    """The Open MPI prefix of mpi.env's mpirun ("PATH" when it is a bare name)."""
    return os.path.dirname(os.path.dirname(env["MPIRUN"])) or "PATH"


def run_env():
    e = dict(os.environ)
    e["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
    e["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return e


def mpirun_cmd(env, np_, mca, prog, args):
    return [env["MPIRUN"], "--oversubscribe", "-np", str(np_)] + list(mca) + [prog] + list(args)


def ompi_btls(env):
    """Names of the btl components ompi_info lists."""
    info = subprocess.run([env["OMPI_INFO"]], capture_output=True, text=True)
    return set(re.findall(r"MCA btl: (\w+)", info.stdout))


def ompi_params(env, framework, component):
    """{name: value} of `ompi_info --param FRAMEWORK COMPONENT --level 9 --parsable`."""
    p = subprocess.run([env["OMPI_INFO"], "--param", framework, component, "--level", "9",
                        "--parsable"], capture_output=True, text=True)
    out = {}
    for m in re.finditer(r"^mca:%s:%s:param:(\w+):value:(.*)$" % (framework, component),
                         p.stdout, re.M):
        out[m.group(1)] = m.group(2)
    return out


def param_files(env, path):
    """(--mca arguments that make Open MPI read the parameter file path
    before its default ones, the file's settings for the report)."""
    try:
        with open(path) as f:
            settings = [ln.strip() for ln in f if ln.strip() and not ln.startswith("#")]
    except OSError as e:
        die("read %s: %s (errno %d)" % (path, e.strerror, e.errno))
    files = ompi_params(env, "mca", "base").get("mca_base_param_files")
    if not files:
        die("%s shows no mca_base_param_files" % env["OMPI_INFO"])
    return (["--mca", "mca_base_param_files", os.path.abspath(path) + "," + files],
            "; ".join(settings))


def probe(env, build, mca, need_btl, btls, reject=None):
    """Return None if configuration mca works (btl need_btl listed, a tiny
    pingpong run succeeds), else the reason.  reject = (regex, text): the
    configuration does not work when the run's stderr matches regex."""
    if need_btl not in btls:
        return "btl %s not available in %s (ompi_info lists no btl %s)" % (
            need_btl, prefix_of(env), need_btl)
    cmd = mpirun_cmd(env, 2, mca, os.path.join(build, "pingpong"),
                     ["--max", "65536", "--step", "4", "--iters", "5"])
    try:
        p = subprocess.run(cmd, env=run_env(), capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "tiny pingpong run timed out after 120 s: %s" % " ".join(cmd)
    if p.returncode != 0:
        tail = " | ".join(l.strip() for l in p.stderr.splitlines() if l.strip())[-400:]
        return "tiny pingpong run failed (exit %d): %s" % (p.returncode, tail)
    if reject and re.search(reject[0], p.stderr, re.I):
        return reject[1] + p.stderr.strip().splitlines()[0][:300]
    return None


def memcpy_bw(build):
    """{threads: median GB/s} of bench/memcpy-bw --threads 2."""
    p = subprocess.run([os.path.join(build, "memcpy-bw"), "--threads", "2"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        die("memcpy-bw failed (exit %d): %s" % (p.returncode, p.stderr.strip()))
    res = {}
    for row in csv.DictReader(io.StringIO(p.stdout)):
        res[int(row["threads"])] = float(row["median_gbps"])
    return res


def run_one(env, build, np_, mca, prog, args, prefix, timeout=None, stderr_lines=None):
    """Run one benchmark of build/ under mpirun with configuration mca; stream
    its stderr as progress lines; return (rows, error).  rows: the CSV rows
    it wrote (--out); error: None, or why the run failed (exit status or
    timeout, with the end of stderr).  stderr_lines: a list that receives
    every stderr line."""
    outfile = os.path.join(build, "bench-%d.csv" % os.getpid())
    cmd = mpirun_cmd(env, np_, mca, os.path.join(build, prog), args + ["--out", outfile])
    try:
        os.unlink(outfile)
    except OSError:
        pass
    errlines = [] if stderr_lines is None else stderr_lines
    p = subprocess.Popen(cmd, env=run_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    expired = []
    timer = None
    if timeout:
        def stop():
            expired.append(1)
            p.terminate()  # mpirun takes its ranks down
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        timer = threading.Timer(timeout, stop)
        timer.start()
    for line in p.stderr:
        line = line.rstrip()
        errlines.append(line)
        m = re.match(r"ddt: (\S+) +(\S+) +bytes", line)
        if m:
            log("%s %s %s" % (prefix, m.group(1), m.group(2)))
        elif "CHECK FAILED" in line:
            log("%s %s" % (prefix, line))
    rc = p.wait()
    if timer:
        timer.cancel()
    rows = []
    try:
        with open(outfile) as f:
            rows = list(csv.DictReader(f))
        os.unlink(outfile)
    except OSError:
        pass
    tail = " | ".join(l for l in errlines if l.strip())[-500:]
    if expired:
        return rows, "timed out after %d s: %s" % (timeout, tail)
    if rc != 0:
        return rows, "exit %d: %s" % (rc, tail)
    return rows, None


def fmt_us(v):
    return "%.1f" % v if v >= 10 else "%.2f" % v


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _kib(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 and n % (1 << 20) == 0 else "%d KiB" % (n >> 10)


def cpu_caches():
    """'L1d 48 KiB, L1i 32 KiB, L2 1 MiB, L3 ...' from lscpu (sizes as lscpu
    prints them), else from getconf (glibc reads CPUID; VMs often hide the
    caches from sysfs, and lscpu then lists none)."""
    try:
        p = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=30,
                           env=dict(os.environ, LC_ALL="C"))
        found = re.findall(r"^(L1d|L1i|L2|L3) cache:\s*(.+)$", p.stdout, re.M)
    except (OSError, subprocess.SubprocessError):
        found = []
    if found:
        return ", ".join("%s %s" % (k, v.strip()) for k, v in found) + " (lscpu)"
    try:
        p = subprocess.run(["getconf", "-a"], capture_output=True, text=True, timeout=30)
        conf = dict(l.split(None, 1) for l in p.stdout.splitlines() if len(l.split(None, 1)) == 2)
    except (OSError, subprocess.SubprocessError):
        conf = {}
    out = []
    for label, name in (("L1d", "LEVEL1_DCACHE_SIZE"), ("L1i", "LEVEL1_ICACHE_SIZE"),
                        ("L2", "LEVEL2_CACHE_SIZE"), ("L3", "LEVEL3_CACHE_SIZE")):
        n = int(conf[name]) if conf.get(name, "").strip().isdigit() else 0
        if n > 0:
            out.append("%s %s" % (label, _kib(n)))
    return (", ".join(out) + " (getconf, from CPUID: lscpu lists none)") if out else \
        "caches unknown (neither lscpu nor getconf lists them)"


def machine():
    """One line naming the machine: CPU model, caches, CPU count, kernel, host."""
    return "%s; %s; %d CPUs; Linux %s; host %s" % (cpu_model(), cpu_caches(), os.cpu_count(),
                                                   platform.release(), platform.node())


def ddt_list(env, build, np_=2):
    """[(pattern, size label, bytes)] of `ddt --list` on np_ ranks, in the
    order of the spec's tables (FFT is listed as FFT<np_>)."""
    cmd = mpirun_cmd(env, np_, [], os.path.join(build, "ddt"), ["--list"])
    p = subprocess.run(cmd, env=run_env(), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        die("ddt --list failed (exit %d): %s" % (p.returncode, p.stderr.strip()[-400:]))
    out = []
    for line in p.stdout.splitlines()[1:]:
        f = line.split(",")
        if len(f) == 4:
            out.append((f[0], f[1], int(f[3])))
    return out


def pattern_rows(table, name):
    """Rows of ddt --list for a --patterns name (FFT is listed as FFT<P>)."""
    rows = [r for r in table if r[0] == name or (name == "FFT" and r[0].startswith("FFT"))]
    if not rows:
        die("--patterns: unknown pattern '%s' (see build/bench/ddt --list)" % name, 2)
    return rows


def ddt_cases(table, patterns, sizes):
    """[(pattern, size index)] of ddt --list rows: patterns = comma list of
    names or shell globs (FFT also matches FFT<P>), sizes = comma list of
    all, smallest, largest (by payload) and indices into a pattern's table."""
    names = []
    for r in table:
        base = "FFT" if r[0].startswith("FFT") else r[0]
        if base not in names:
            names.append(base)
    want = [w.strip() for w in (patterns or "*").split(",") if w.strip()]
    picked = [n for n in names if any(fnmatch.fnmatchcase(n, w) for w in want)]
    for w in want:
        if not any(fnmatch.fnmatchcase(n, w) for n in names):
            die("--patterns: '%s' matches no pattern (known: %s)" % (w, " ".join(names)), 2)
    out = []
    for n in picked:
        rows = pattern_rows(table, n)
        idx = set()
        for sz in sizes.split(","):
            sz = sz.strip()
            if sz == "all":
                idx.update(range(len(rows)))
            elif sz in ("smallest", "largest"):
                by = sorted(range(len(rows)), key=lambda i: rows[i][2])
                idx.add(by[0] if sz == "smallest" else by[-1])
            elif sz.isdigit() and int(sz) < len(rows):
                idx.add(int(sz))
            elif not sz.isdigit():
                die("--sizes: '%s' is not all, smallest, largest or an index" % sz, 2)
        out += [(n, i) for i in sorted(idx, key=lambda i: rows[i][2])]
    return out


# --- ratios against vader (issue #5) ----------------------------------------
# d is one case's round medians: {configuration: {round: median us}}.
VADER = ("vader-cma", "vader-none")


def med(d, c):
    """Median over rounds of configuration c's round medians."""
    return statistics.median(d[c].values())


def round_ratios(d, c, against=VADER):
    """c's round medians divided by the faster of the configurations against
    (by default the vader ones) of the same round (rounds where both were
    measured)."""
    out = []
    for r, v in d[c].items():
        vad = [d[x][r] for x in against if x in d and r in d[x]]
        if vad and min(vad) > 0:
            out.append(v / min(vad))
    return out


def ratio(d, c, against=VADER):
    """(median, min, max) of c's per-round ratios, or None."""
    rr = round_ratios(d, c, against)
    return (statistics.median(rr), min(rr), max(rr)) if rr else None


def ratio_of_medians(d, c):
    """c's median over the median of the vader configuration with the lower
    median for this case (issue #5's definition), or None."""
    vad = [med(d, x) for x in VADER if x in d and d[x]]
    if not vad or min(vad) <= 0 or not d.get(c):
        return None
    return med(d, c) / min(vad)
