"""Console milestones of a VMM process, for the boot benchmarks
(scripts/bench-bios, scripts/bench-firmware).

    stages = [("loader", b"Welcome to GRUB!"), ("user", b"userspace reached")]
    seen = run_once(cmd, stages, limit=120)        # {"loader": 1.23, ...}
    table = measure({"vmlet": vcmd, "qemu": qcmd}, stages, runs=3, limit=120)

Times are seconds from the process start (time.monotonic) to the first
console byte sequence of each stage on the process's stdout; a run ends at
the last stage or after `limit` seconds, and the process is then killed.
"""
import os
import signal
import statistics
import subprocess
import time


def run_once(cmd, stages, limit):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL, bufsize=0)
    os.set_blocking(p.stdout.fileno(), False)
    buf, seen, last = b"", {}, stages[-1][0]
    while time.monotonic() - t0 < limit and last not in seen and p.poll() is None:
        try:
            chunk = p.stdout.read(65536)
        except BlockingIOError:
            chunk = None
        if chunk:
            buf += chunk
            for name, mark in stages:
                if name not in seen and mark in buf:
                    seen[name] = time.monotonic() - t0
        else:
            time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    return seen


def measure(cmds, stages, runs, limit):
    """Interleaved runs of each command in cmds (name -> argv); per name and
    stage the median over the runs, None unless every run got there."""
    rows = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            rows[name].append(run_once(cmd, stages, limit))
    out = {}
    for name, rs in rows.items():
        out[name] = {}
        for stage, _ in stages:
            vals = [r[stage] for r in rs if stage in r]
            out[name][stage] = statistics.median(vals) if len(vals) == runs else None
    return out


def fmt(x):
    return f"{x:.2f}" if x is not None else "-"
