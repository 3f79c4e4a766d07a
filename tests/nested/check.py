#!/usr/bin/env python3
"""The host's side of tests/nested: split L1's console log into one part per
scenario (scn/NAME/report: the "@R" lines without the prefix; console: the
rest of the guest's output; vmm.log: vmlet's or QEMU's stderr) and check
each scenario's report against what vmlet resolved for its manifest
(scn/NAME/config.json) and, for a scenario with COMPARE=OTHER, against the
report of OTHER (the same shape under the other VMM).

    check.py OUTDIR NAME...

Prints "ok: NAME: ..." and "FAIL: NAME: ..." lines; exits 1 if any failed.
"""
import json
import os
import re
import sys

VENDORS = {"intel": "GenuineIntel", "amd": "AuthenticAMD"}
# Topology fields a twin run (same shape, other VMM) must show the same.
COMPARED_SYS = ("physical_package_id", "core_id", "die_id", "thread_siblings_list",
                "core_siblings_list", "core_cpus_list", "package_cpus_list", "die_cpus_list")
COMPARED_CPUINFO = ("vendor", "apicid", "initial_apicid", "physical_id", "siblings",
                    "core_id", "cpu_cores")

failures = 0


def ok(name, msg):
    print("ok: %s: %s" % (name, msg))


def fail(name, msg):
    global failures
    failures += 1
    print("FAIL: %s: %s" % (name, msg))


def cpulist(s):
    """'0-2,5' -> {0, 1, 2, 5}"""
    out = set()
    for part in s.strip().split(","):
        if not part:
            continue
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def split_console(path, names):
    """{name: {"report": [...], "console": [...], "vmm": [...], "rc": int|None,
    "secs": float|None}} and L1's own marker lines"""
    scn = {n: {"report": [], "console": [], "vmm": [], "rc": None, "secs": None, "begun": False}
           for n in names}
    l1 = []
    cur = last = None
    t_begin = 0.0
    with open(path, errors="replace") as f:
        for raw in f:
            m = re.match(r"^\s*(\d+\.\d+) (.*)$", raw.rstrip("\n"))
            if not m:
                continue
            t, text = float(m.group(1)), m.group(2)
            b = re.search(r"@@BEGIN (\S+)", text)
            e = re.search(r"@@END (\S+) rc=(\d+)", text)
            if b and b.group(1) in scn:
                cur, t_begin = b.group(1), t
                scn[cur]["begun"] = True
                continue
            if e and e.group(1) in scn:
                s = scn[e.group(1)]
                s["rc"], s["secs"] = int(e.group(2)), t - t_begin
                last, cur = e.group(1), None
                continue
            if "@@" in text:
                l1.append(text[text.index("@@"):])
                continue
            if text.startswith("@V ") and (cur or last):
                scn[cur or last]["vmm"].append(text[3:])
                continue
            if cur is None:
                continue
            i = text.find("@R ")
            if i >= 0:
                scn[cur]["report"].append(text[i + 3:])
            else:
                scn[cur]["console"].append(text)
    return scn, l1


def parse_report(lines):
    r = {"sys": {}, "cpuinfo": {}, "keys": {}}
    for line in lines:
        key, _, rest = line.partition(" ")
        # (a kernel message printed into a report line garbles it: such a
        # line is left out, and the check it feeds then fails)
        if key == "sys":
            m = re.match(r"cpu(\d+) ([a-z_]+) (\S+)$", rest)
            if m:
                r["sys"].setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3)
        elif key == "cpuinfo":
            idx, _, kvs = rest.partition(" ")
            if idx.isdigit():
                r["cpuinfo"][int(idx)] = dict(kv.split("=", 1) for kv in kvs.split() if "=" in kv)
        else:
            r["keys"].setdefault(key, []).append(rest)
    return r


def key1(r, k):
    v = r["keys"].get(k)
    return v[0] if v else None


def bits(n):
    return (n - 1).bit_length()


def check_topology(name, rep, cfg, vendor):
    c = cfg["cpu"]
    S, C, T = c["sockets"], c["cores"], c["threads"]
    n = S * C * T
    tb, cb = bits(T), bits(C)
    errs = []
    online = key1(rep, "online")
    if online is None or cpulist(online) != set(range(n)):
        errs.append("online CPUs %r, want 0-%d" % (online, n - 1))
    ci, sy = rep["cpuinfo"], rep["sys"]
    if len(ci) != n or len(sy) != n:
        errs.append("%d CPUs in /proc/cpuinfo, %d in sysfs, want %d" % (len(ci), len(sy), n))
    want_apic = sorted((s << (cb + tb)) | (k << tb) | t
                       for s in range(S) for k in range(C) for t in range(T))
    try:
        apic = {i: int(ci[i]["apicid"]) for i in ci}
    except (KeyError, ValueError):
        apic = {}
    if sorted(apic.values()) != want_apic:
        errs.append("APIC IDs %s, want %s" % (sorted(apic.values()), want_apic))
    for i, a in apic.items():
        info, s = ci[i], sy.get(i, {})
        pkg = a >> (cb + tb)
        threads = {j for j, b in apic.items() if b >> tb == a >> tb}
        package = {j for j, b in apic.items() if b >> (cb + tb) == pkg}
        want = {"physical_package_id": str(pkg)}
        got = {"physical_package_id": s.get("physical_package_id")}
        for f, cpus in (("thread_siblings_list", threads), ("core_siblings_list", package)):
            got[f] = s.get(f)
            if got[f] is None or cpulist(got[f]) != cpus:
                want[f] = ",".join(map(str, sorted(cpus)))
            else:
                want[f] = got[f]
        for f, w in (("physical_id", str(pkg)), ("siblings", str(C * T)), ("cpu_cores", str(C)),
                     ("vendor", vendor)):
            want["cpuinfo." + f], got["cpuinfo." + f] = w, info.get(f)
        bad = ["%s=%s (want %s)" % (k, got[k], want[k]) for k in want if got[k] != want[k]]
        if bad:
            errs.append("cpu%d (APIC ID %d): %s" % (i, a, ", ".join(bad)))
    # core_id: one value per core of a package, the same for its threads
    for p in range(S):
        cpus = [i for i, a in apic.items() if a >> (cb + tb) == p]
        cores = {}
        for i in cpus:
            cores.setdefault(sy.get(i, {}).get("core_id"), set()).add(apic[i] >> tb)
        if len(cores) != C or any(len(v) != 1 for v in cores.values()):
            errs.append("package %d: core_id per CPU %s, want %d distinct, one per core" %
                        (p, {i: sy.get(i, {}).get("core_id") for i in cpus}, C))
    smp = key1(rep, "smp") or ""
    want_smp = "Brought up 1 node, %d CPU%s" % (n, "s" if n > 1 else "")
    if want_smp not in smp:
        errs.append("kernel said %r, want %r" % (smp, want_smp))
    for e in errs:
        fail(name, "topology: " + e)
    if not errs:
        ok(name, "topology %d,%d,%d (%d vCPUs, %s): sysfs, /proc/cpuinfo, APIC IDs, online" %
           (S, C, T, n, vendor))


def check_memory(name, rep, cfg):
    mem = cfg["memory"]["bytes"]
    total = key1(rep, "mem")
    if total is None or not total.isdigit():
        fail(name, "no MemTotal in the report")
        return
    gap = mem - int(total) * 1024
    # the kernel's own image, reserved areas and page structs: tens of MiB
    if 0 < gap <= (64 << 20) + mem // 16:
        ok(name, "MemTotal %s kB of %d MiB (%d MiB kept by firmware/kernel)" %
           (total, mem >> 20, gap >> 20))
    else:
        fail(name, "MemTotal %s kB for a %d MiB guest" % (total, mem >> 20))


def compare(name, rep, other, oname):
    diffs = []
    for i in sorted(set(rep["sys"]) | set(other["sys"])):
        a, b = rep["sys"].get(i, {}), other["sys"].get(i, {})
        for f in COMPARED_SYS:
            if a.get(f) != b.get(f):
                diffs.append("cpu%d %s: %s vs %s" % (i, f, a.get(f), b.get(f)))
        a, b = rep["cpuinfo"].get(i, {}), other["cpuinfo"].get(i, {})
        for f in COMPARED_CPUINFO:
            if a.get(f) != b.get(f):
                diffs.append("cpu%d cpuinfo %s: %s vs %s" % (i, f, a.get(f), b.get(f)))
    if diffs:
        fail(name, "topology differs from %s's (%d fields): %s" %
             (oname, len(diffs), "; ".join(diffs[:12])))
    else:
        ok(name, "the same sysfs topology and /proc/cpuinfo as %s" % oname)
    m1, m2 = key1(rep, "mem"), key1(other, "mem")
    if m1 and m2 and m1.isdigit() and m2.isdigit():
        d = abs(int(m1) - int(m2))
        (ok if d <= 4096 else fail)(name, "MemTotal %s kB, %s's %s kB (%d kB apart)" %
                                    (m1, oname, m2, d))


def l1_panic(path):
    """the L1 kernel's own panic line (its kernel is Debian's generic one, L2's
    the cloud kernel: the "CPU: ... Comm:" line after "Kernel panic" tells
    them apart), or None"""
    lines = open(path, errors="replace").read().splitlines()
    for i, line in enumerate(lines):
        if "Kernel panic" not in line:
            continue
        for nxt in lines[i + 1:i + 4]:
            m = re.search(r"CPU: \d+ PID: .* (\d+\.\d+\.\S+)", nxt)
            if m and "cloud" not in m.group(1):
                return re.sub(r"^\s*\d+\.\d+ ", "", line) + " | " + re.sub(r"^.*?(CPU:)", r"\1", nxt)
    return None


def outcome(s, rep, meta):
    """what became of one guest run: ok, triple fault, reset (QEMU: the guest
    reset before its report's end; no L2 panic: a triple fault), hang (the
    scenario's TIMEBOX ended the VMM: SIGKILL, or vmlet's exit 5 after
    SIGTERM and the grace period; or L1's watchdog ended the scenario:
    124), L2 panic, L1 died (during this run: L1 panicked or hung), not run
    (L1 had died or the time box ran out), failed (anything else: a check
    decides)"""
    if s["rc"] is None:
        return "L1 died" if s["begun"] else "not run"
    if any("Kernel panic" in x for x in s["console"]):
        return "L2 panic"
    if any("triple fault" in x for x in s["vmm"]):
        return "triple fault"
    end = key1(rep, "end") or key1(rep, "killed")
    if s["rc"] == int(meta.get("EXPECT_EXIT") or 0) and end:
        return "ok"
    # killed at TIMEBOX (QEMU), or vmlet stopped it after SIGTERM's grace
    # period, or L1's watchdog ended the scenario (lib-l1.sh run_scn: 124)
    if s["rc"] in (124, 137) or (s["rc"] == 5 and not end):
        return "hang"
    if meta.get("VMM") == "qemu" and s["rc"] == 0 and not end:
        return "reset"
    return "failed"


def tally(out, names, scn, reports, metas, skipped):
    """one line per VMM: runs and outcomes; scn/NAME outcomes in OUT/outcomes"""
    per = {}
    with open(os.path.join(out, "outcomes"), "w") as fh:
        for n in names:
            if n in skipped:
                continue
            vmm = metas[n].get("VMM") or "vmlet"
            o = outcome(scn[n], reports[n], metas[n])
            fh.write("%s %s %s\n" % (n, vmm, o))
            per.setdefault(vmm, {}).setdefault(o, []).append(n)
    for vmm in sorted(per):
        runs = sum(len(v) for o, v in per[vmm].items() if o != "not run")
        bad = ", ".join("%d %s (%s)" % (len(v), o, " ".join(v) if o != "not run" else "...")
                        for o, v in sorted(per[vmm].items()) if o != "ok")
        print("tally: %s: %d runs, %d ok%s" % (vmm, runs, len(per[vmm].get("ok", [])),
                                              ", " + bad if bad else ""))
    p = l1_panic(os.path.join(out, "console.log"))
    if p:
        print("tally: L1 panicked: " + p)
    elif not any("@@L1 done" in x for x in open(os.path.join(out, "console.log"), errors="replace")):
        p = "hang"
        print("tally: L1 did not finish (hung, or the time box)")
    with open(os.path.join(out, "outcomes"), "a") as fh:
        fh.write("L1 - %s\n" % ("panic" if p and p != "hang" else p or "ok"))


def strip_ts(line):
    return re.sub(r"^\[\s*\d+\.\d+\]\s*", "", line)


def main():
    out, names = sys.argv[1], sys.argv[2:]
    scn, l1 = split_console(os.path.join(out, "console.log"), names)
    l1vendor = "AuthenticAMD"
    for line in l1:
        m = re.search(r"vendor=(\S+)", line)
        if m:
            l1vendor = m.group(1)
    for line in l1:
        if "FAIL" in line:
            fail("L1", line)
    skipped = [x for x in l1 if x.startswith("@@SKIP")]
    skipped_names = {x.split()[1] for x in skipped if len(x.split()) > 1}
    if skipped and len(skipped) == len(names):
        print("skip: no scenario started within the time box")
        return 77
    reports, metas = {}, {}
    for n in names:
        d = os.path.join(out, "scn", n)
        s = scn[n]
        for k, f in (("report", "report"), ("console", "console"), ("vmm", "vmm.log")):
            with open(os.path.join(d, f), "w") as fh:
                fh.write("".join(x + "\n" for x in s[k]))
        reports[n] = parse_report(s["report"])
        with open(os.path.join(d, "meta")) as fh:
            metas[n] = dict(l.rstrip("\n").split("=", 1) for l in fh if "=" in l)
    # QEMU runs whose report ended: one cut short (L1 died) reported no
    # dmesg lines, and would fail every vmlet run's known ones
    qemu_ran = [t for t in names if metas[t].get("VMM") == "qemu" and key1(reports[t], "end")]
    qemu_bad = {strip_ts(x) for t in qemu_ran for x in reports[t]["keys"].get("dmesg-bad", [])}
    for n in names:
        d = os.path.join(out, "scn", n)
        s, rep = scn[n], reports[n]
        meta = metas[n]
        vmm = meta.get("VMM", "vmlet")
        if s["rc"] is None and any(re.search(r"@@SKIP %s " % re.escape(n), x) for x in l1):
            print("skip: %s: not run: the time box was nearly over (a loaded host)" % n)
            with open(os.path.join(out, "skipped"), "a") as fh:
                fh.write(n + "\n")
            continue
        if s["rc"] is None:
            fail(n, "did not finish (L1's time box, or L1 died before it)")
            continue
        want_rc = int(meta.get("EXPECT_EXIT") or 0)
        if s["rc"] == want_rc:
            ok(n, "%s exit status %d after %.1f s" % (vmm, s["rc"], s["secs"]))
        else:
            fail(n, "%s exit status %d, want %d; its log: %s" %
                 (vmm, s["rc"], want_rc, " | ".join(s["vmm"][-8:])))
        begin, end = key1(rep, "begin"), key1(rep, "end")
        # a guest L1 killed on purpose (its l1 part reports "@R killed") may
        # not have finished its report
        if end is None and key1(rep, "killed") is not None:
            end = "(killed by L1: %s)" % key1(rep, "killed")
        if begin is None or end is None:
            fail(n, "the L2 report is incomplete (begin %r, end %r); console tail: %s" %
                 (begin, end, " | ".join(s["console"][-10:])))
            continue
        ok(n, "L2 userspace at %s, report done at %s" % (begin.split()[-1], end))
        for e in rep["keys"].get("modprobe-error", []):
            fail(n, "modprobe: " + e)
        cfg_path = os.path.join(d, "config.json")
        if os.path.exists(cfg_path):
            cfg = json.load(open(cfg_path))
            vendor = VENDORS.get(meta.get("VENDOR") or "", l1vendor)
            check_topology(n, rep, cfg, vendor)
            check_memory(n, rep, cfg)
        twin = meta.get("COMPARE")
        if twin and twin in skipped_names:
            print("note: %s: %s was not run: no comparison" % (n, twin))
        elif twin and twin in scn and scn[twin]["rc"] is None:
            # (the twin's own "did not finish" is the failure; a rerun
            # of it runs this one again too: tests/sh/nested_linux.sh)
            print("note: %s: %s did not finish: no comparison" % (n, twin))
        elif twin:
            if twin not in reports or not reports[twin]["sys"]:
                fail(n, "no report of %s to compare with (run both)" % twin)
            else:
                compare(n, rep, reports[twin], twin)
        # a complaint of the L2 kernel passes only when QEMU's L2 in the same L1
        # complains the same way (the nested setup's, not vmlet's)
        for line in rep["keys"].get("dmesg-bad", []):
            if vmm == "qemu":
                print("note: %s: L2 kernel under QEMU: %s" % (n, line))
            elif strip_ts(line) in qemu_bad:
                print("note: %s: QEMU's L2 shows it too: %s" % (n, line))
            elif not qemu_ran:
                print("note: %s: (no QEMU run to compare) L2 kernel: %s" % (n, line))
            else:
                fail(n, "L2 kernel (QEMU's L2 does not show it): " + line)
        for line in rep["keys"].get("dmesg-note", []):
            print("note: %s: L2 kernel (nested setup): %s" % (n, line))
    tally(out, names, scn, reports, metas, skipped_names)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
