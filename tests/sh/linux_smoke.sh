#!/usr/bin/env bash
# A real kernel through the bzImage path: Debian's cloud kernel (fetched by
# scripts/fetch-kernel, not committed) booted with the 64-bit boot protocol
# must print its decompressor's first line on vmlet's console
# ("early console in extract_kernel" / "Decompressing Linux") within the
# time box. Skips, not fails, when the kernel cannot be fetched. On kvm-pvm
# hosts the decompressor runs emulated, so only its first line is awaited.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
TIMEBOX=${LINUX_SMOKE_TIMEBOX:-60}

"$VMLET" run --kernel build/vmlinuz --cmdline "console=ttyS0 earlyprintk=serial" \
	--memory 512Mi --smp 2 --grace-period 0 --log-format text \
	--console "file:$TMPD/console" 2>"$TMPD/err" &
pid=$!
seen=
for ((i = 0; i < TIMEBOX * 10; i++)); do
	if grep -aqE "early console in extract_kernel|Decompressing Linux|Linux version" "$TMPD/console" 2>/dev/null; then
		seen=1
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [[ -n $seen ]]; then
	ok "decompressor output after ~$((i / 10)) s: $(grep -aE -m1 "early console|Decompressing|Linux version" "$TMPD/console" | tr -d '\r')"
else
	fail "no decompressor output within ${TIMEBOX}s (vmlet exit $rc)"
	sed 's/^/    /' "$TMPD/err" | tail -n 10
	head -c 600 "$TMPD/console" 2>/dev/null | sed 's/^/    console: /'
fi
finish
