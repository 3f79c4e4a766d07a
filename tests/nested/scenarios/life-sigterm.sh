# SIGTERM to vmlet presses the ACPI power button; the guest's listener
# (evdev, KEY_POWER) powers off and vmlet exits 0, within the grace period.
SHAPE=1,2,2 MEM=256Mi L2_END=pwrbtn_wait
l1() { vm_run_on "@R pwrbtn-listening" 'kill -TERM $(pidof vmlet)'; }
host_check() {
	rep power-button | grep -q . && ok "the guest saw KEY_POWER" ||
		fail "no power button event in the guest ($(rep pwrbtn-missing))"
}
