#!/usr/bin/env bash
# A real kernel through the bzImage path: Debian's cloud kernel (fetched by
# scripts/fetch-kernel, not committed) booted with the 64-bit boot protocol
# and "console=ttyS0 earlyprintk=serial" must show its decompressor on
# vmlet's COM1 within the time box. Skips, not fails, when the kernel
# cannot be fetched.
#
# What "shows" means: a decompressor built with CONFIG_X86_VERBOSE_BOOTUP
# prints "early console in extract_kernel" / "Decompressing Linux"; Debian's
# cloud kernel is built without it, so its first line is the warning
# "KASLR disabled: 'nokaslr' on cmdline." (hence nokaslr below), printed
# ~10 s in on kvm-pvm hosts, where the decompressor then runs emulated for
# many minutes. As a last resort the decompressor programming COM1 as
# earlyprintk=serial asks (9600 baud, 8 data bits; vmlet logs it at debug
# level) passes too.
source "$(dirname "$0")/../lib/sh.sh"
have_kvm || skip "no /dev/kvm"
[[ -x $VMLET ]] || skip "no $VMLET"
scripts/fetch-kernel >/dev/null 2>&1 || skip "cannot fetch linux-image-cloud-amd64"
TIMEBOX=${LINUX_SMOKE_TIMEBOX:-180} # ends at the first sign: ~10 s idle, several times that under load
TEXT="early console in extract_kernel|Decompressing Linux|KASLR disabled|Linux version"
UART="serial: guest set COM1 to 9600 baud, 8 data bits"

"$VMLET" run --kernel build/vmlinuz --cmdline "console=ttyS0 earlyprintk=serial nokaslr" \
	--memory 512Mi --smp 2 --grace-period 0 --log-format text --log-level debug \
	--console "file:$TMPD/console" 2>"$TMPD/err" &
pid=$!
how=
for ((i = 0; i < TIMEBOX * 10; i++)); do
	if grep -aqE "$TEXT" "$TMPD/console" 2>/dev/null; then
		how="console: $(grep -aE -m1 "$TEXT" "$TMPD/console" | tr -d '\r')"
		break
	fi
	if ((i > 200)) && grep -q "$UART" "$TMPD/err"; then
		how="decompressor programmed COM1 for earlyprintk (9600 8N1)"
		break
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
if [[ -n $how ]]; then
	ok "after ~$((i / 10)) s: $how"
else
	fail "no sign of the decompressor on COM1 within ${TIMEBOX}s (vmlet exit $rc)"
	grep -v "^vmlet: debug" "$TMPD/err" | tail -n 10 | sed 's/^/    /'
fi
# stopped with SIGTERM and grace 0: the documented hard-stop status
((rc == 5)) && ok "hard stop after SIGTERM: exit 5" || fail "exit $rc after SIGTERM, want 5"
finish
