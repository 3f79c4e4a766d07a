#!/usr/bin/env bash
# The nested harness's console reader (vm_run_on, tests/nested/lib-l1.sh)
# under busybox ash, as L1 runs it: every console line arrives whole and
# the action runs once, on the first matching line, even when a child of
# the shell exits while a line is half read. (busybox ash's own `read`
# drops the bytes it had read when SIGCHLD interrupts it: the control case
# below shows this busybox does, so the check can fail.)
source "$(dirname "$0")/../lib/sh.sh"
command -v busybox >/dev/null || skip "no busybox"
cd "$TMPD" || exit 1
# busybox's applets only (awk, sleep, mkfifo...), as in L1's initramfs
mkdir bin && busybox --install -s "$TMPD/bin" || { fail "busybox --install"; finish; }
export PATH=$TMPD/bin

# the fake guest: "@", a pause in which a background child of the reading
# shell exits, then the rest of the line, then two more lines
cat >guest.sh <<'EOS'
vm_run() {
	printf '@'
	sleep 1
	printf 'R console-ready\n'
	read -r typed
	printf '@R typed %s\n@R console-ready again\n' "$typed"
}
EOS

# control: ash's read loop, as vm_run_on read before
cat >control.sh <<'EOS'
. ./guest.sh
rm -f con && mkfifo con
vm_run >con </dev/null &
sleep 0.3 &
while IFS= read -r l; do echo "$l"; done <con
EOS
control=$(timeout 20 sh control.sh)
if [[ $control == "R console-ready"* ]]; then
	echo "note: control: this busybox's ash read lost the '@' (what the reader avoids)"
else
	echo "note: control: this busybox's ash read kept the line: '${control%%$'\n'*}'"
fi

cat >reader.sh <<'EOS'
. ./lib-l1.sh
. ./guest.sh
sleep 0.3 &
vm_run_on "@R console-ready" 'echo typed-into-vmlet >&4; echo "@R action $(echo ran)"'
echo "@R rc $?"
EOS
sed 's|/tmp/con|./con|g; s|/tmp/in|./in|g' "$OLDPWD/tests/nested/lib-l1.sh" >lib-l1.sh
out=$(timeout 20 sh reader.sh 2>&1)
printf '%s\n' "$out" | sed 's/^/  | /'
want=$'@R console-ready\n@R action ran\n@R typed typed-into-vmlet\n@R console-ready again\n@R rc 0'
[[ $out == "$want" ]] && ok "every line whole, the action ran once and its input reached the guest" ||
	fail "vm_run_on's output differs from what the guest wrote plus one action"
finish
