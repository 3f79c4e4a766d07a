#!/usr/bin/env bash
# The sizes of the command line (--memory) in every spelling it accepts,
# end to end: spec_parse_size() (spec/quantity.c) is the one parser since
# cmd_parse_size() went (issue 26). Spellings of one size give the guest
# the same RAM (the probe's memoryBytes) and the probe agrees with what
# was promised (exit 0); 512M is 10^6-based, 512Mi 2^20-based; K is Ki.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
M=examples/vm

mem() { # SPELLING: the guest's memoryBytes as the probe reports it
	local rc
	timeout 60 "$VMLET" probe -f "$M" --smp 1 --memory "$1" -o json >"$TMPD/out" 2>"$TMPD/err"
	rc=$?
	if ((rc)); then
		fail "--memory $1: probe exit $rc ($(head -c 200 "$TMPD/err"))"
		echo x
		return
	fi
	grep -o '"guest":{.*' "$TMPD/out" | grep -o '"memoryBytes":[0-9]*' | head -n 1
}

same() { # SPELLING... : all give the same guest RAM
	local first v s
	first=$(mem "$1")
	for s in "${@:2}"; do
		v=$(mem "$s")
		if [[ $v == "$first" && $v == *[0-9] ]]; then
			ok "--memory $s = --memory $1 ($v)"
		else
			fail "--memory $s ($v) != --memory $1 ($first)"
		fi
	done
}

same 1Gi 1024Mi 1048576K 1073741824 1073741824B
same 512M 512000000 512000k
a=$(mem 512M) b=$(mem 512Mi)
if [[ $a != "$b" && $a == *[0-9] && $b == *[0-9] ]]; then
	ok "512M ($a) is not 512Mi ($b)"
else
	fail "512M ($a) vs 512Mi ($b)"
fi
finish
