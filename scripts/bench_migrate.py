"""scripts/bench-migrate's measurements (see that script for the rows and
columns): vmlet vs QEMU microvm, snapshot restore, live migration and
memory shared by VMs restored from one snapshot.

    python3 scripts/bench_migrate.py VMLET QEMU BIOS TMPDIR
Settings from the environment: MEM TOUCH HOT DOWNTIME ROUNDS N_SHARED ROWS.
"""
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

vmlet, qemu, bios, tmp = sys.argv[1:5]
ENV = os.environ
MEM, TOUCH, HOT = int(ENV.get("MEM", 512)), int(ENV.get("TOUCH", 256)), int(ENV.get("HOT", 16))
DOWNTIME, ROUNDS = int(ENV.get("DOWNTIME", 300)), int(ENV.get("ROUNDS", 3))
N_SHARED = int(ENV.get("N_SHARED", 10))
ROWS = ENV.get("ROWS", "restore migrate shared").split()
ELF = f"{tmp}/probe.elf"
med = statistics.median
DIRTY = re.compile(rb"^dirty=(\d+)")


def load():
    return open("/proc/loadavg").read().split()[0]


class Console:
    """Reads a VMM's stdout in a thread: the times of the guest's first and
    last `dirty=N` lines, their rounds, and any BAD or error line."""

    def __init__(self, p):
        self.first = self.last = None  # (monotonic time, round)
        self.count, self.bad, self.ready = 0, None, False
        self.thread = threading.Thread(target=self._read, args=(p.stdout,), daemon=True)
        self.thread.start()

    def _read(self, f):
        for line in f:
            t = time.monotonic()
            m = DIRTY.match(line)
            if m:
                self.last = (t, int(m.group(1)))
                self.first = self.first or self.last
                self.count += 1
            elif line.startswith(b"dirtyReady="):
                self.ready = True
            elif line.startswith((b"dirty=BAD", b"dirty=error")):
                self.bad = self.bad or line.decode(errors="replace").strip()

    def wait(self, what, pred, timeout=60):
        end = time.monotonic() + timeout
        while not pred():
            if self.bad:
                sys.exit(f"bench-migrate: {what}: the guest says {self.bad}")
            if time.monotonic() > end:
                sys.exit(f"bench-migrate: {what}: no progress from the guest in {timeout} s")
            time.sleep(0.002)


class QMP:
    """A QMP client on a unix socket; events are kept in self.events."""

    def __init__(self, path, proc, timeout=30):
        end = time.monotonic() + timeout
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if proc.poll() is not None or time.monotonic() > end:
                    sys.exit(f"bench-migrate: no QMP at {path} (exit {proc.poll()})")
                time.sleep(0.002)
        self.f, self.events = self.s.makefile("rb"), []
        self._msg()  # the greeting
        self.cmd("qmp_capabilities")

    def _msg(self):
        line = self.f.readline()
        if not line:
            sys.exit("bench-migrate: QMP closed")
        return json.loads(line)

    def cmd(self, name, **args):
        self.s.sendall(json.dumps({"execute": name, "arguments": args}).encode() + b"\n")
        while True:
            m = self._msg()
            if "event" in m:
                self.events.append(m)
            elif "error" in m:
                sys.exit(f"bench-migrate: QMP {name}: {m['error']}")
            elif "return" in m:
                return m["return"]

    def event(self, name, pred=lambda m: True, timeout=120):
        """The first event `name` matching pred: its time (CLOCK_REALTIME)."""
        self.s.settimeout(timeout)
        while True:
            for m in self.events:
                if m["event"] == name and pred(m):
                    self.events.remove(m)
                    return m["timestamp"]["seconds"] + m["timestamp"]["microseconds"] / 1e6
            self.events.append(self._msg())

    def close(self):
        self.f.close()
        self.s.close()


PROCS = []  # every VMM started: cleanup() ends those still there


def tree(pid):
    """pid and its descendants (vmlet run as root works in a child)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for t in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{t}/children").read().split()]
        except OSError:
            pass
    return out


def cleanup():
    """SIGKILL what is left of every VMM this run started, its children
    too, and reap it: a run that stops half-way leaves no guest spinning."""
    for p in PROCS:
        if p.p.returncode is not None:
            continue
        for pid in reversed(tree(p.p.pid)):
            if pid > 1:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        p.p.wait()


class Proc:
    """A VMM process with its console reader; t0 (monotonic) and r0
    (realtime) taken just before the exec."""

    def __init__(self, cmd, name):
        self.name = name
        self.err = open(f"{tmp}/{name}.err", "w+b")
        self.r0, self.t0 = time.time(), time.monotonic()
        self.p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err,
                                  stdin=subprocess.DEVNULL)
        PROCS.append(self)
        self.con = Console(self.p)
        self.cpu = None

    def reap(self, sig=None, timeout=30):
        """Signal it (unless it is gone), wait: exit code; self.cpu set."""
        if sig is not None and self.p.returncode is None and self.p.pid > 0:
            os.kill(self.p.pid, sig)
        end = time.monotonic() + timeout
        while True:
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > end and self.p.pid > 0:
                os.kill(self.p.pid, signal.SIGKILL)
            time.sleep(0.005)
        self.p.returncode = os.waitstatus_to_exitcode(status)
        self.cpu = ru.ru_utime + ru.ru_stime
        self.con.thread.join(5)
        self.p.stdout.close()
        return self.p.returncode

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")


def vmlet_cmd(hot, *extra):
    return [vmlet, "run", "--kernel", ELF, "--console", "stdio", "--memory", f"{MEM}Mi",
            "--smp", "1,1,1", "--cmdline", f"vmlet.dirty={TOUCH},{hot} vmlet.end=hold",
            "--grace-period", "0", "--log-format", "text", "--timings", *extra]


def qemu_cmd(hot, qmp, *extra):
    return [qemu, "-enable-kvm", "-m", str(MEM), "-smp", "1", "-nodefaults",
            "-no-user-config", "-display", "none", "-serial", "stdio", "-no-reboot", "-M",
            "microvm,x-option-roms=off,rtc=off,pit=off,pic=off,isa-serial=on,"
            "acpi=on,smm=off,ioapic2=off,auto-kernel-cmdline=off",
            "-bios", bios, "-kernel", ELF, "-append", f"vmlet.dirty={TOUCH},{hot} vmlet.end=hold",
            "-qmp", f"unix:{qmp},server=on,wait=off", *extra]


def running(con, hot, what):
    """Wait until the guest has touched its memory (and made some passes)."""
    if hot:
        con.wait(what, lambda: con.count >= 20)
    else:
        con.wait(what, lambda: con.ready)


TIMING = re.compile(r"timings: (\w+)\s+(\d+) us")


def timings(text):
    return {k: int(v) / 1e3 for k, v in TIMING.findall(text)}


def fail(p, what):
    sys.exit(f"bench-migrate: {what} ({p.name}): exit {p.p.returncode}\n{p.stderr()[-1500:]}")


# -- saving once: a vmlet snapshot and a QEMU state file per guest kind


def vmlet_save(snap, hot):
    sock = f"{tmp}/save.sock"
    p = Proc(vmlet_cmd(hot, "--api-socket", sock), "vmlet-save")
    running(p.con, hot, "vmlet before its snapshot")
    r = subprocess.run([vmlet, "ctl", sock, "snapshot", snap, "--stop"], capture_output=True,
                       text=True)
    if r.returncode or p.reap(timeout=60):
        sys.exit(f"bench-migrate: vmlet snapshot: {r.stdout}{r.stderr}{p.stderr()[-800:]}")
    return p.con.last[1] if p.con.last else 0


def qemu_migrate_wait(q, what):
    while True:
        st = q.cmd("query-migrate")
        if st.get("status") == "completed":
            return st
        if st.get("status") in ("failed", "cancelled"):
            sys.exit(f"bench-migrate: {what}: {st}")
        time.sleep(0.005)


def qemu_save(path, hot):
    qs = f"{tmp}/qsave.qmp"
    p = Proc(qemu_cmd(hot, qs), "qemu-save")
    q = QMP(qs, p.p)
    running(p.con, hot, "QEMU before its save")
    q.cmd("stop")
    q.cmd("migrate", uri=f"exec:cat > {path}")
    qemu_migrate_wait(q, "QEMU save")
    q.cmd("quit")
    q.close()
    p.reap()
    return p.con.last[1] if p.con.last else 0


# -- row 1: restore


def vmlet_restore(snap, round0):
    p = Proc(vmlet_cmd(HOT, "--restore", snap), "vmlet-restore")
    p.con.wait("vmlet restore", lambda: p.con.first is not None)
    usable = p.con.first[0] - p.t0
    if p.con.first[1] <= round0:
        sys.exit(f"bench-migrate: vmlet restore: round {p.con.first[1]} after {round0}")
    p.reap(signal.SIGTERM)  # a stop: exit status 5 (docs/operations.md)
    t = timings(p.stderr())
    if "first_run" not in t:
        fail(p, "vmlet restore")
    return {"loaded": t.get("loaded"), "first": t.get("first_run"), "usable": usable * 1e3,
            "cpu": p.cpu * 1e3}


def qemu_incoming(path, hot, name):
    """A QEMU restoring from path, as libvirt does (-incoming defer, then
    migrate-incoming): (Proc, QMP); qemu_resume() ends it."""
    qs = f"{tmp}/{name}.qmp"
    p = Proc(qemu_cmd(hot, qs, "-incoming", "defer"), name)
    q = QMP(qs, p.p)
    q.cmd("migrate-set-capabilities", capabilities=[{"capability": "events", "state": True}])
    q.cmd("migrate-incoming", uri=f"exec:cat {path}")
    return p, q


def qemu_resume(q):
    """Once the load completed, `cont`: realtime of the load's end and of
    the RESUME event."""
    loaded = q.event("MIGRATION", lambda m: m["data"]["status"] in ("completed", "failed"))
    q.cmd("cont")
    return loaded, q.event("RESUME")


def qemu_restore(path, round0):
    p, q = qemu_incoming(path, HOT, "qemu-restore")
    loaded, resumed = qemu_resume(q)
    p.con.wait("QEMU restore", lambda: p.con.first is not None)
    usable = p.con.first[0] - p.t0
    if p.con.first[1] <= round0:
        sys.exit(f"bench-migrate: QEMU restore: round {p.con.first[1]} after {round0}")
    q.cmd("quit")
    q.close()
    p.reap()
    return {"loaded": (loaded - p.r0) * 1e3, "first": (resumed - p.r0) * 1e3,
            "usable": usable * 1e3, "cpu": p.cpu * 1e3}


# -- row 2: live migration


def after_move(src, dst, what):
    """Gap (ms) from the source's last line to the destination's first;
    the round must go on."""
    dst.con.wait(what, lambda: dst.con.count >= 5)
    s, d = src.con.last, dst.con.first
    if d[1] <= s[1] - 1:
        sys.exit(f"bench-migrate: {what}: the destination's round {d[1]} after {s[1]}")
    return (d[0] - s[0]) * 1e3


def listening(dst, path):
    """Wait for the destination's incoming socket."""
    end = time.monotonic() + 30
    while not os.path.exists(path):
        if dst.p.poll() is not None or time.monotonic() > end:
            fail(dst, "the destination did not listen")
        time.sleep(0.002)


def vmlet_migrate():
    s_sock, d_sock, m_sock = f"{tmp}/src.sock", f"{tmp}/dst.sock", f"{tmp}/mig.sock"
    src = Proc(vmlet_cmd(HOT, "--api-socket", s_sock), "vmlet-src")
    running(src.con, HOT, "vmlet source")
    dst = Proc(vmlet_cmd(HOT, "--api-socket", d_sock, "--incoming", f"unix:{m_sock}"), "vmlet-dst")
    listening(dst, m_sock)
    r = subprocess.run([vmlet, "ctl", s_sock, "migrate", f"unix:{m_sock}", "--max-downtime",
                        str(DOWNTIME)], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"bench-migrate: vmlet migrate: {r.stdout}{r.stderr}")
    if src.reap(timeout=60):
        fail(src, "vmlet source")
    gap = after_move(src, dst, "vmlet migration")
    dst.reap(signal.SIGTERM)
    m = json.loads(r.stdout)["migration"]
    return {"total": m["total_ms"], "downtime": m["downtime_ms"], "gap": gap,
            "mb": m["bytes"] / 1e6, "passes": m["iterations"], "cpu": src.cpu * 1e3}


def qemu_migrate():
    qs, qd, m_sock = f"{tmp}/qsrc.qmp", f"{tmp}/qdst.qmp", f"{tmp}/qmig.sock"
    src = Proc(qemu_cmd(HOT, qs), "qemu-src")
    s = QMP(qs, src.p)
    running(src.con, HOT, "QEMU source")
    dst = Proc(qemu_cmd(HOT, qd, "-incoming", f"unix:{m_sock}"), "qemu-dst")
    d = QMP(qd, dst.p)
    listening(dst, m_sock)
    s.cmd("migrate-set-parameters", **{"downtime-limit": DOWNTIME, "max-bandwidth": 16 << 30})
    s.cmd("migrate", uri=f"unix:{m_sock}")
    st = qemu_migrate_wait(s, "QEMU migration")
    s.cmd("quit")
    s.close()
    src.reap()
    gap = after_move(src, dst, "QEMU migration")
    d.cmd("quit")
    d.close()
    dst.reap()
    ram = st.get("ram", {})
    return {"total": st["total-time"], "downtime": st["downtime"], "gap": gap,
            "mb": ram.get("transferred", 0) / 1e6, "passes": ram.get("dirty-sync-count", 0),
            "cpu": src.cpu * 1e3}


# -- row 3: memory of N VMs restored from one snapshot


def pss_kib(pid):
    kib = 0
    for line in open(f"/proc/{pid}/smaps_rollup"):
        if line.startswith("Pss:"):
            kib += int(line.split()[1])
    return kib


def vcpu_thread(pid):
    try:
        return any(open(f"/proc/{pid}/task/{t}/comm").read().strip() == "vcpu0"
                   for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return False


def vmlet_shared(snap):
    ps = [Proc(vmlet_cmd(0, "--restore", snap), f"vmlet-shared{i}") for i in range(N_SHARED)]
    # they print nothing: wait for each one's vCPU thread, which runs the
    # guest right after it started (--timings first_run, checked below)
    end = time.monotonic() + 60
    for p in ps:
        while not vcpu_thread(p.p.pid):
            if p.p.poll() is not None or time.monotonic() > end:
                fail(p, "vmlet restore for sharing")
            time.sleep(0.01)
    time.sleep(0.3)
    pss = sum(pss_kib(p.p.pid) for p in ps) / 1024
    for p in ps:
        os.kill(p.p.pid, signal.SIGTERM)
    cpu = 0
    for p in ps:
        if p.reap() is None or "first_run" not in timings(p.stderr()):
            fail(p, "vmlet restore for sharing")
        cpu += p.cpu
    ready = max(p.t0 + timings(p.stderr())["first_run"] / 1e3 for p in ps) - ps[0].t0
    return {"pss": pss, "cpu": cpu / N_SHARED * 1e3, "all": ready * 1e3}


def qemu_shared(path):
    vms = [qemu_incoming(path, 0, f"qemu-shared{i}") for i in range(N_SHARED)]
    ready = max(qemu_resume(q)[1] for _, q in vms) - vms[0][0].r0
    time.sleep(0.3)
    pss = sum(pss_kib(p.p.pid) for p, _ in vms) / 1024
    cpu = 0
    for p, q in vms:
        q.cmd("quit")
        q.close()
        if p.reap():
            fail(p, "QEMU restore for sharing")
        cpu += p.cpu
    return {"pss": pss, "cpu": cpu / N_SHARED * 1e3, "all": ready * 1e3}


# -- the table


def rounds(cases):
    """{name: [result per round]}, the cases' order rotated each round."""
    names, res = list(cases), {n: [] for n in cases}
    for r in range(ROUNDS):
        for n in names[r % len(names):] + names[:r % len(names)]:
            res[n].append(cases[n]())
    return res


def table(title, res, cols, lower_better=True):
    print(f"\n{title} (load {load()})")
    print(f"{'case':<8}" + "".join(f"{c:>11}" for c, _ in cols))
    for who in ("vmlet", "qemu"):
        row = []
        for c, _ in cols:
            v = [r[c] for r in res[who] if r.get(c) is not None]
            row.append(f"{med(v):>11.1f}" if v else f"{'-':>11}")
        print(f"{who:<8}" + "".join(row))
    row = []
    for c, higher_is_worse in cols:
        if higher_is_worse is None:  # a count, not better or worse
            row.append(f"{'':>11}")
            continue
        v = [r[c] for r in res["vmlet"] if r.get(c) is not None]
        q = [r[c] for r in res["qemu"] if r.get(c) is not None]
        if not v or not q or not med(v) or not med(q):
            row.append(f"{'-':>11}")
            continue
        ratio = med(q) / med(v) if higher_is_worse else med(v) / med(q)
        row.append(f"{ratio:>10.2f}x")
    print(f"{'ratio':<8}" + "".join(row))
    if ROUNDS > 1:
        for who in ("vmlet", "qemu"):
            print(f"  {who} per round: " + "; ".join(
                f"{c} " + "/".join("-" if r.get(c) is None else f"{r[c]:.0f}" for r in res[who])
                for c, _ in cols))


def main():
    print(f"bench-migrate: the probe guest, 1 vCPU, {MEM} MiB, {TOUCH} MiB touched, {HOT} MiB "
          f"rewritten per pass; {ROUNDS} round(s), medians; ratio: QEMU's over vmlet's (above 1 "
          f"vmlet is ahead); load {load()}")
    if "restore" in ROWS:
        snap, qfile = f"{tmp}/snap", f"{tmp}/qemu.state"
        v0, q0 = vmlet_save(snap, HOT), qemu_save(qfile, HOT)
        print(f"saved: vmlet {snap}/memory {os.stat(f'{snap}/memory').st_blocks * 512 >> 20} MiB "
              f"allocated + state {os.path.getsize(f'{snap}/state') >> 10} KiB; QEMU "
              f"{os.path.getsize(qfile) >> 20} MiB")
        res = rounds({"vmlet": lambda: vmlet_restore(snap, v0), "qemu": lambda: qemu_restore(qfile, q0)})
        table("restore, ms from exec", res, [("loaded", True), ("first", True), ("usable", True),
                                              ("cpu", True)])
        print("vmlet's own time to the guest's first instruction, per round (ms): " +
              ", ".join(f"{r['first']:.1f}" for r in res["vmlet"]) + " (goal: under 10)")
        subprocess.run(["rm", "-rf", "--", snap, qfile], check=True)
    if "migrate" in ROWS:
        res = rounds({"vmlet": vmlet_migrate, "qemu": qemu_migrate})
        table(f"live migration, downtime target {DOWNTIME} ms", res,
              [("total", True), ("downtime", True), ("gap", True), ("mb", True), ("passes", None),
               ("cpu", True)])
    if "shared" in ROWS:
        snap, qfile = f"{tmp}/snap0", f"{tmp}/qemu0.state"
        vmlet_save(snap, 0)
        qemu_save(qfile, 0)
        res = rounds({"vmlet": lambda: vmlet_shared(snap), "qemu": lambda: qemu_shared(qfile)})
        table(f"{N_SHARED} VMs restored from one snapshot: PSS MiB summed, CPU ms per VM, "
              f"ms to the last one running", res, [("pss", True), ("cpu", True), ("all", True)])
        print(f"(vmlet's snapshot memory file: {os.stat(f'{snap}/memory').st_blocks * 512 >> 20} "
              f"MiB, in the page cache once for all)")


try:
    main()
finally:
    cleanup()
