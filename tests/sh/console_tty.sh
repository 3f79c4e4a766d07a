#!/usr/bin/env bash
# `vmlet run --console stdio` on a terminal (a pseudo-terminal here, as
# from a person's shell): the console switches the terminal to raw mode,
# and however the run ends vmlet must exit with its README status (never
# SIGSYS: issue 11, restoring the modes was a TCSETS the main thread's
# filter refused) and leave the terminal exactly as it found it. Paths:
# power-off, guest crash, SIGTERM (grace period ends a guest ignoring the
# button), Ctrl-C twice typed on the terminal, Ctrl-C once under
# runStrategy Always (one press: the guest powers off, no restart), restarts
# under Always ended by SIGTERM, and a worker killed with SIGKILL (vmlet
# then exits 128+9 itself).
source "$(dirname "$0")/../lib/sh.sh"

have_kvm || skip "no usable /dev/kvm"
command -v python3 >/dev/null || skip "no python3"
"$VMLET" probe --dump-guest "$TMPD/probe.elf" || { echo "FAIL: vmlet probe --dump-guest"; exit 1; }
vm_manifest tty 64Mi Once >"$TMPD/vm.yaml"

cat >"$TMPD/tty.py" <<'PY'
import fcntl, os, re, select, signal, sys, termios, time

vmlet, elf, yaml, name, want, action = sys.argv[1:7]
extra = sys.argv[7:]
master, slave = os.openpty()
before = termios.tcgetattr(slave)
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.execv(vmlet, [vmlet, "run", "-f", yaml, "--kernel", elf, "--console", "stdio",
                     "--log-format", "text"] + extra)
out, status, t0, done, sent = b"", None, time.time(), False, []

def children(ppid):
    kids = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and int(open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()[1]) == ppid:
                kids.append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    return kids

def console():
    # the guest's bytes without vmlet's own log lines: the event loop writes
    # the console's output, so a log line may land inside a console line
    return re.sub(rb"vmlet: [^\r\n]*\r?\n", b"", out)

def wait_for(pattern, count=1):
    text = console() if pattern == rb"VMLET-PROBE-END" else out
    return len(re.findall(pattern, text)) >= count

while status is None and time.time() - t0 < 300:
    r, _, _ = select.select([master], [], [], 0.1)
    if r:
        try:
            out += os.read(master, 65536)
        except OSError:
            pass
    p, st = os.waitpid(pid, os.WNOHANG)
    if p:
        status = os.waitstatus_to_exitcode(st)
        break
    # the actions, each once the guest is where it needs to be
    if action == "sigterm" and not sent and wait_for(rb"VMLET-PROBE-END"):
        os.kill(pid, signal.SIGTERM); sent.append(1)
    elif action == "ctrl-c-twice" and wait_for(rb"VMLET-PROBE-END"):
        if not sent:
            os.write(master, b"\x03"); sent.append(1)
        elif len(sent) == 1 and wait_for(rb"pressing the ACPI power button"):
            os.write(master, b"\x03"); sent.append(2)
    elif action == "ctrl-c" and not sent and wait_for(rb"VMLET-PROBE-END"):
        os.write(master, b"\x03"); sent.append(1)
    elif action == "restarts" and not sent and wait_for(rb"restart 2 in"):
        os.kill(pid, signal.SIGTERM); sent.append(1)
    elif action == "kill-worker" and not sent and wait_for(rb"VMLET-PROBE-END"):
        for k in children(pid):
            os.kill(k, signal.SIGKILL); sent.append(1)
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
after = termios.tcgetattr(slave)
errs = []
if status != int(want):
    errs.append(f"exit status {status}, want {want}")
if after != before:
    errs.append(f"terminal modes not restored: lflag {before[3]:#x} -> {after[3]:#x}, "
                f"iflag {before[0]:#x} -> {after[0]:#x}")
if b"VMLET-PROBE-END" not in console():
    errs.append("the guest's report did not reach the terminal")
if errs:
    print(f"FAIL: {name}: " + "; ".join(errs))
    for l in out.decode("latin-1").splitlines()[-8:]:
        print("    " + l)
    sys.exit(1)
print(f"ok: {name}: exit status {status}, terminal modes restored")
PY

# tty NAME WANT ACTION [VMLET-ARGS...]
tty() {
	python3 "$TMPD/tty.py" "$VMLET" "$TMPD/probe.elf" "$TMPD/vm.yaml" "$@" || n_fail=$((n_fail + 1))
}

tty poweroff 0 none
tty crash 4 none --cmdline vmlet.end=crash
tty sigterm 5 sigterm --cmdline vmlet.end=hold --grace-period 1
tty ctrl-c-twice 5 ctrl-c-twice --cmdline vmlet.end=hold --grace-period 600
tty always-ctrl-c 0 ctrl-c --cmdline vmlet.end=button --run-strategy Always
tty always-restarts 0 restarts --run-strategy Always
tty always-worker-killed 137 kill-worker --cmdline vmlet.end=hold --run-strategy Always
finish
