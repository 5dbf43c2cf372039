"""Runs one benchmark client as a child process and measures what it cost the host.

CPU: user + system seconds of every process of the tool. Children that the tool waits for are
counted by the kernel into the rusage that os.wait4 returns for the root process; processes that
are never waited for (daemonised helpers, orphans) are caught by sampling /proc of the whole
process tree every SAMPLE_S and keeping each pid's last CPU reading; the larger of the two totals
is reported. Peak RSS: the largest sum of VmRSS over the live process tree at any sample.
Timeline: (wall-clock time, CPU seconds of the tree so far) at every sample, so the CPU spent
between two instants (the first and the last request the server saw) can be read off a run.
"""

import os
import signal
import subprocess
import threading
import time

SAMPLE_S = 0.1  # how often the process tree is read (seconds)
CLK_TCK = os.sysconf("SC_CLK_TCK")


def _children_of() -> dict:
    """Maps each pid to the list of its children's pids (one pass over /proc)."""
    kids: dict = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _tree(root: int) -> list:
    kids = _children_of()
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def _cpu_and_rss(pid: int):
    """(user + system seconds of this process alone, VmRSS bytes), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
        fields = stat[stat.rindex(")") + 2:].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime
        rss = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        return cpu, rss
    except (OSError, ValueError, IndexError):
        return None


class Usage:
    """What one run of a tool cost: cpu_s (user + system, all its processes), peak_rss_bytes
    (largest sum over its live processes), wall_s, returncode, processes (pids seen),
    timeline [(time.time(), CPU seconds of every process seen so far)] per sample."""

    def __init__(self):
        self.timeline = []
        self.cpu_s = 0.0
        self.peak_rss_bytes = 0
        self.wall_s = 0.0
        self.returncode = None
        self.processes = 0

    def as_dict(self) -> dict:
        return {"cpu_s": round(self.cpu_s, 4), "peak_rss_bytes": self.peak_rss_bytes,
                "wall_s": round(self.wall_s, 3), "returncode": self.returncode,
                "processes": self.processes}


def run_measured(argv, log_path, env=None, cwd=None, timeout_s=600.0) -> Usage:
    """Runs argv (stdout and stderr to log_path) in its own process group, sampling its tree."""
    usage = Usage()
    last_cpu: dict = {}  # pid -> last CPU seconds read while it lived
    start = time.monotonic()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                start_new_session=True)
    done = threading.Event()

    def sample():
        while not done.is_set():
            rss_sum = 0
            for pid in _tree(proc.pid):
                got = _cpu_and_rss(pid)
                if got is None:
                    continue
                last_cpu[pid] = got[0]
                rss_sum += got[1]
            usage.peak_rss_bytes = max(usage.peak_rss_bytes, rss_sum)
            usage.timeline.append((time.time(), sum(last_cpu.values())))
            done.wait(SAMPLE_S)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    deadline = start + timeout_s
    status = None
    rusage = None
    while status is None:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            status, rusage = st, ru
            break
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            _, status, rusage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    usage.wall_s = time.monotonic() - start
    done.set()
    sampler.join()
    # Helpers the tool left behind in its group: stop them (loopback only; they are ours).
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    proc.returncode = os.waitstatus_to_exitcode(status)
    usage.returncode = proc.returncode
    waited = rusage.ru_utime + rusage.ru_stime  # the root and every child it waited for
    sampled = sum(last_cpu.values())
    usage.cpu_s = max(waited, sampled)
    usage.processes = len(last_cpu)
    usage.peak_rss_bytes = max(usage.peak_rss_bytes, rusage.ru_maxrss * 1024)
    return usage


def cpu_between(timeline, t0: float, t1: float):
    """CPU seconds the tree spent between wall-clock instants t0 and t1 (linear between the two
    samples around each instant), or None when the timeline does not cover both."""

    def at(t):
        for (ta, ca), (tb, cb) in zip(timeline, timeline[1:]):
            if ta <= t <= tb:
                return ca if tb == ta else ca + (cb - ca) * (t - ta) / (tb - ta)
        return None

    a, b = at(t0), at(t1)
    return None if a is None or b is None else max(b - a, 0.0)
