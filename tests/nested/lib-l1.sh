# Sourced by the L1 /init (busybox ash): running scenarios. Each scenario
# runs in a subshell that sources /nested/scenarios/NAME.sh; its files
# (what host_prep made) are in $D = /scn/NAME. The default l1 part is
# vm_run: the L2 kernel and initramfs under vmlet (VMM=vmlet) or QEMU
# (VMM=qemu), with $D/vm.yaml.

up() { cut -d' ' -f1 /proc/uptime; }

# l2_cmdline: the L2 kernel command line for this scenario
l2_cmdline() {
	echo "console=ttyS0 quiet panic=-1 rdinit=/init nested.scn=$SCN${L2_APPEND:+ $L2_APPEND} $(cat /nested/l2-append)"
}

# vmlet_run [ARGS...]: vmlet run with $D/vm.yaml, the L2 kernel and
# initramfs, the console on stdout, vmlet's log in $D/vmm.log; its exit
# status. TIMEBOX (default 150 s) bounds it.
vmlet_run() {
	timeout -s KILL "${TIMEBOX:-150}" vmlet run -f "$D/vm.yaml" --kernel /l2/vmlinuz \
		--initrd /l2/initrd.img --cmdline "$(l2_cmdline)" --console stdio --log-format text \
		${VENDOR:+--cpu-vendor $VENDOR} "$@" 2>"$D/vmm.log"
}

# qemu_run [ARGS...]: QEMU -enable-kvm (q35, SeaBIOS) with the shape and
# memory host_prep wrote to $D/qemu.smp and $D/qemu.mem, the same kernel,
# initramfs and command line.
qemu_run() {
	timeout -s KILL "${TIMEBOX:-150}" qemu-system-x86_64 -L /qemu -enable-kvm \
		-cpu "host${VENDOR:+,vendor=$(vendor_id "$VENDOR")}" -M q35 \
		-smp "$(cat "$D/qemu.smp")" -m "$(cat "$D/qemu.mem")" \
		-nodefaults -no-user-config -nographic -display none -no-reboot -serial stdio \
		-kernel /l2/vmlinuz -initrd /l2/initrd.img -append "$(l2_cmdline)" "$@" 2>"$D/vmm.log"
}

vendor_id() { case $1 in intel) echo GenuineIntel ;; *) echo AuthenticAMD ;; esac; }

vm_run() {
	case ${VMM:-vmlet} in
	qemu) qemu_run "$@" ;;
	*) vmlet_run "$@" ;;
	esac
}

# run_scn NAME: one scenario, framed for the host
run_scn() {
	(
		SCN=$1
		D=/scn/$1
		. "$D/meta"
		. "/nested/scenarios/$1.sh"
		t0=$(up)
		echo "@@BEGIN $SCN up=$t0"
		if type l1 >/dev/null 2>&1; then
			l1 </dev/null
		else
			vm_run </dev/null
		fi
		rc=$?
		echo "@@END $SCN rc=$rc up=$(up) t0=$t0"
		[ -f "$D/vmm.log" ] && sed 's/^/@V /' "$D/vmm.log"
	)
}
