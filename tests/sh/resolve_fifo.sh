#!/usr/bin/env bash
# A manifest read from a pipe or a FIFO (issue 28, finding 9): vmlet
# opened every -f file with O_NONBLOCK and read it so, so a pipe whose
# writer had not written yet failed with EAGAIN ("Resource temporarily
# unavailable") and a FIFO whose writer had not opened it yet read as
# empty. Now both are read as cat reads them. The writers start late on
# purpose (sleep): the old reads failed at once, whatever the machine's
# speed; the new ones wait for the writer, however slow it is.
source "$(dirname "$0")/../lib/sh.sh"
[[ -x $VMLET ]] || skip "no $VMLET"

m=$TMPD/vm.yaml
vm_manifest fifo 64Mi Always >"$m"
"$VMLET" resolve -f "$m" -o json >"$TMPD/want.json" || { fail "resolve $m"; finish; }

"$VMLET" resolve -f <(sleep 1; cat "$m") -o json >"$TMPD/pipe.json" 2>"$TMPD/err"
rc=$?
((rc == 0)) && cmp -s "$TMPD/want.json" "$TMPD/pipe.json" &&
	ok "a manifest from a pipe whose writer is slow" ||
	fail "pipe: exit $rc, $(head -n 2 "$TMPD/err")"

mkfifo "$TMPD/fifo"
{ sleep 1; cat "$m" >"$TMPD/fifo"; } &
timeout -k 5 60 "$VMLET" resolve -f "$TMPD/fifo" -o json >"$TMPD/fifo.json" 2>"$TMPD/err"
rc=$?
exec 3<>"$TMPD/fifo" # a reader, so that a writer nobody read does not block
wait
exec 3<&-
((rc == 0)) && cmp -s "$TMPD/want.json" "$TMPD/fifo.json" &&
	ok "a manifest from a FIFO whose writer opens it late" ||
	fail "FIFO: exit $rc, $(head -n 2 "$TMPD/err")"
finish
