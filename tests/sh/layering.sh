#!/usr/bin/env bash
# The layering rules hold (scripts/check-layering.sh), and the check has
# teeth: each violation planted in a scratch copy of the tree makes it fail
# naming the file, and what the rules allow still passes.
source "$(dirname "$0")/../lib/sh.sh"
out=$(scripts/check-layering.sh 2>&1) && ok "the tree passes" || fail "layering rules broken: $out"

tree=$TMPD/tree
mkdir -p "$tree/scripts"
cp -r spec vmm arch firmware "$tree/"
cp scripts/check-layering.sh scripts/check-links.sh "$tree/scripts/"

# plant pass|fail FILE LINE WHAT: append LINE to FILE in the copy, run the
# check there, put FILE back.
plant() {
	local want=$1 f=$2 line=$3 what=$4 rc
	[[ -f $tree/$f ]] || { fail "$what: no $f to plant in"; return; }
	cp "$tree/$f" "$TMPD/saved"
	# on a line of its own even when FILE does not end in a newline
	printf '\n%s\n' "$line" >>"$tree/$f"
	out=$("$tree/scripts/check-layering.sh" 2>&1)
	rc=$?
	cp "$TMPD/saved" "$tree/$f"
	if [[ $want == fail ]]; then
		if ((rc == 1)) && grep -q "^$f:[0-9]*: " <<<"$out"; then
			ok "fails: $what ($(grep -m1 "^$f:" <<<"$out"))"
		else
			fail "$what: the check did not fail on $f (status $rc): $out"
		fi
	elif ((rc == 0)); then
		ok "passes: $what"
	else
		fail "$what: the check refused what the rules allow (status $rc): $out"
	fi
}

ioctl_fn='static inline int f_(int fd) { return ioctl(fd, 0); }'
plant fail arch/x86_64/memmap.c "$ioctl_fn" "an ioctl() call in arch/"
plant fail arch/x86_64/topology.c '#include <sys/ioctl.h>' "<sys/ioctl.h> in arch/"
plant fail arch/x86_64/cpuid.c 'long g_(void) { return syscall(SYS_ioctl, 0, 0); }' "syscall(SYS_ioctl) in arch/"
plant fail arch/x86_64/acpi.c '#include "vmm/vm/vm.h"' "arch/ includes vmm/"
plant fail arch/x86_64/acpi.c '#include "../../vmm/vm/vm.h"' "arch/ includes ../../vmm/vm/vm.h"
plant fail arch/arch.h '#include <json-c/json.h>' "json-c in arch/"
plant fail spec/node.c '#include "vmm/vm/vm.h"' "spec/ includes vmm/vm/vm.h"
plant fail spec/node.c '#include "../vmm/vm/vm.h"' "spec/ includes ../vmm/vm/vm.h"
plant fail spec/node.c '#  include "vmm/vm/vm.h"' "spec/ includes vmm/vm/vm.h spelled '#  include'"
plant fail spec/node.c $'\t#\tinclude\t"vmm/vm/vm.h"' "spec/ includes vmm/vm/vm.h spelled with tabs"
plant fail spec/node.c '#include "arch/arch.h"' "spec/ includes arch/"
plant fail spec/quantity.c '#include <linux/kvm.h>' "spec/ includes <linux/kvm.h>"
plant fail spec/quantity.c "$ioctl_fn" "an ioctl() call in spec/"
plant fail vmm/cmd/cmd_run.c '#include "spec/resolve.h"' "a cmd_*.c includes spec/ internals"
plant fail vmm/main.c '#include "spec/node.h"' "main.c includes spec/ internals"
plant fail vmm/dev/rtc.c '#include "../../spec/node.h"' "vmm/dev/ includes ../../spec/node.h"
plant fail vmm/dev/rtc.c '#include <json-c/json.h>' "json-c in vmm/dev/"
plant fail vmm/dev/rtc.c '# include <json.h>' "json.h in vmm/dev/"
plant fail vmm/virtio/virtio_rng.c '#include <json-c/json.h>' "json-c in vmm/virtio/"
# the rooms inside vmm/: devices reach the VM through vmm/vm/device.h, the
# backends know nothing of the devices
plant fail vmm/dev/fw_cfg.c '#include "vmm/vm/vm.h"' "vmm/dev/ includes vmm/vm/vm.h"
plant fail vmm/dev/rtc.c '#include "../vm/vm.h"' "vmm/dev/ includes ../vm/vm.h"
plant fail vmm/dev/rtc.c '#include <vmm/vm/vm.h>' "vmm/dev/ includes <vmm/vm/vm.h>"
plant fail vmm/dev/pm.c '#include "vmm/ctl/ctl.h"' "vmm/dev/ includes vmm/ctl/"
plant fail vmm/virtio/virtio_blk.c '#include "vmm/vm/vm.h"' "vmm/virtio/ includes vmm/vm/vm.h"
plant fail vmm/virtio/virtio_blk.h '#include "../ctl/ctl.h"' "a vmm/virtio/ header includes ../ctl/"
plant fail vmm/disk/blk_raw.c '#include "vmm/dev/pci.h"' "vmm/disk/ includes vmm/dev/"
plant fail vmm/disk/blk.h '#include "vmm/virtio/virtqueue.h"' "vmm/disk/ includes vmm/virtio/"
plant fail vmm/net/passt.c '#include "../virtio/virtqueue.h"' "vmm/net/ includes ../virtio/"
plant fail vmm/net/tap.c '#include <vmm/dev/pci.h>' "vmm/net/ includes <vmm/dev/pci.h>"
plant fail vmm/net/net.h '#include "vmm/virtio/virtio_net.h"' "a vmm/net/ header includes vmm/virtio/"
# of the VM core (vmm/vm/) the devices include only the device contract
# (device.h, bus.h, guest_mem.h, irq.h), the backends nothing; vmm/util/
# nothing of vmm/ outside itself
plant fail vmm/dev/pci.c '#include "vmm/vm/vcpu.h"' "vmm/dev/ includes vmm/vm/vcpu.h"
plant fail vmm/dev/legacy.c '#include "vmm/vm/lifecycle.h"' "vmm/dev/ includes vmm/vm/lifecycle.h"
# a room's sub-folder (vmm/dev/ahci/) keeps the rules of its room
plant fail vmm/dev/ahci/ahci.c '#include "vmm/vm/vm.h"' "vmm/dev/ahci/ includes vmm/vm/vm.h"
plant fail vmm/dev/ahci/ahci_atapi.c '#include "../../vm/vcpu.h"' "vmm/dev/ahci/ includes ../../vm/vcpu.h"
plant fail vmm/dev/ahci/ahci_int.h '#include "../../ctl/ctl.h"' "a vmm/dev/ahci/ header includes ../../ctl/"
plant fail vmm/dev/ahci/ahci_snap.c '#include <json-c/json.h>' "json-c in vmm/dev/ahci/"
plant fail vmm/virtio/virtio_pci.c '#include "../vm/irq_internal.h"' "vmm/virtio/ includes ../vm/irq_internal.h"
plant fail vmm/disk/blk_raw.c '#include "vmm/vm/guest_mem.h"' "vmm/disk/ includes vmm/vm/"
plant fail vmm/net/tap.c '#include <vmm/vm/vm.h>' "vmm/net/ includes <vmm/vm/vm.h>"
plant fail vmm/util/log.c '#include "vmm/vm/vm.h"' "vmm/util/ includes the VM core"
plant fail vmm/util/iov.h '#include "../disk/blk.h"' "a vmm/util/ header includes ../disk/"
plant fail vmm/util/event.c '#include "vmm/vm_config.h"' "vmm/util/ includes vmm/vm_config.h"
plant fail vmm/vm/vm.c '#include <yaml.h>' "<yaml.h> outside spec/yaml.c"
plant fail vmm/vm/vm.c '#include "firmware/lib/fw.h"' "vmm/ includes firmware/ internals"
plant fail vmm/vm/vm.c '#include "../../../etc/x.h"' "an include that leaves the tree"
plant fail vmm/vm/vm.c '#include VMLET_HEADER' "a computed include"
plant fail firmware/lib/string.c '#include <stdio.h>' "firmware/ includes libc"
plant fail firmware/probe/topo.c '#include "vmm/vm/vm.h"' "firmware/ includes vmm/"
plant fail firmware/efi/main.c '#include "../../arch/arch.h"' "firmware/ includes ../../arch/"

# angle brackets name a file of the tree too (-I. makes them compile)
plant fail arch/x86_64/acpi.c '#include <vmm/vm/vm.h>' "arch/ includes <vmm/vm/vm.h>"
plant fail spec/node.c '#include <vmm/vm/vm.h>' "spec/ includes <vmm/vm/vm.h>"
plant fail vmm/vm/vm.c '#include <spec/node.h>' "vmm/ includes <spec/node.h>"
plant fail firmware/lib/string.c '#include <arch/arch.h>' "firmware/ includes <arch/arch.h>"
plant fail firmware/lib/acpi.c '#include "arch/x86_64/acpi_tables.h"' "firmware/ includes arch/ beyond acpi_wire.h"
plant fail arch/x86_64/acpi_wire.h '#include <string.h>' "acpi_wire.h, which firmware/ includes, includes libc"

# every file of the roots counts, not only *.c, *.h and *.S
newfile() { # newfile pass|fail FILE CONTENT WHAT: a new file in the copy
	local want=$1 f=$2 rc
	printf '%s\n' "$3" >"$tree/$f"
	out=$("$tree/scripts/check-layering.sh" 2>&1)
	rc=$?
	rm -f "$tree/$f"
	if [[ $want == fail ]] && ((rc == 1)) && grep -q "^$f:[0-9]*: " <<<"$out"; then
		ok "fails: $4 ($(grep -m1 "^$f:" <<<"$out"))"
	elif [[ $want == pass ]] && ((rc == 0)); then
		ok "passes: $4"
	else
		fail "$4: want $want, the check said (status $rc): $out"
	fi
}
# through headers: a header of the tree that leads to a forbidden file
# makes its includer fail (vmm/ itself may include vm.h)
printf '#include "vmm/vm/vm.h"\n' >"$tree/vmm/planted.h"
printf '#include "vmm/virtio/virtqueue.h"\n' >"$tree/vmm/planted2.h"
plant fail vmm/dev/rtc.c '#include "vmm/planted.h"' "vmm/dev/ reaches vmm/vm/vm.h through a header"
plant fail vmm/virtio/virtio_rng.c '#include "../planted.h"' "vmm/virtio/ reaches vmm/vm/vm.h through a header"
plant fail vmm/net/tap.c '#include "vmm/planted2.h"' "vmm/net/ reaches vmm/virtio/ through a header"
plant pass vmm/vm/vm_run.c '#include "vmm/planted.h"' "vmm/ reaches vmm/vm/vm.h through a header"
printf '#include "vmm/vm/vcpu.h"\n' >"$tree/vmm/planted3.h"
plant fail vmm/virtio/virtio_blk.c '#include "vmm/planted3.h"' "vmm/virtio/ reaches vmm/vm/vcpu.h through a header"
plant fail vmm/disk/blk.h '#include "vmm/planted3.h"' "a vmm/disk/ header reaches vmm/vm/ through a header"
rm -f "$tree/vmm/planted.h" "$tree/vmm/planted2.h" "$tree/vmm/planted3.h"

newfile fail arch/x86_64/tables.inc '#include "vmm/vm/vm.h"' "an .inc file in arch/ includes vmm/"
newfile fail spec/rules.def "static int f_(int fd) { return ioctl(fd, 0); }" "an ioctl() in a .def file of spec/"
ln -s ../vmm/vm/vm.h "$tree/spec/vm_link.h"
out=$("$tree/scripts/check-layering.sh" 2>&1) && rc=0 || rc=$?
rm -f "$tree/spec/vm_link.h"
if ((rc == 1)) && grep -q '^spec/vm_link.h:0: a symbolic link' <<<"$out"; then
	ok "fails: a symbolic link in spec/"
else
	fail "a symbolic link in spec/ passed (status $rc): $out"
fi

# The link-level check (scripts/check-links.sh): what the objects of arch/
# and spec/ call, however the source hid it. The copy gets the build's
# objects; a planted source is compiled into it.
B=${BUILD:-build}
out=$(scripts/check-links.sh "$B" 2>&1) && ok "the objects pass: $out" || fail "link rules broken: $out"
mkdir -p "$tree/build/vmm"
cp -r "$B/arch" "$B/spec" "$B/gen" "$tree/build/"
cp "$B/vmm/vm_config.o" "$tree/build/vmm/"
# plant_obj pass|fail FILE SOURCE WHAT: FILE (a new .c) compiled into the copy
plant_obj() {
	local want=$1 f=$2 rc
	printf '%s\n' "$3" >"$tree/$f"
	if ! gcc -std=gnu11 -O2 -I"$tree" -c -o "$tree/build/${f%.c}.o" "$tree/$f" 2>"$TMPD/cc"; then
		fail "$4: the planted source does not compile: $(cat "$TMPD/cc")"
		rm -f "$tree/$f"
		return
	fi
	out=$("$tree/scripts/check-links.sh" build 2>&1)
	rc=$?
	rm -f "$tree/$f" "$tree/build/${f%.c}.o"
	if [[ $want == fail ]] && ((rc == 1)) && grep -q "^build/${f%.c}.o: " <<<"$out"; then
		ok "fails: $4 ($(grep -m1 "^build/" <<<"$out"))"
	elif [[ $want == pass ]] && ((rc == 0)); then
		ok "passes: $4"
	else
		fail "$4: want $want, the link check said (status $rc): $out"
	fi
}
plant_obj fail arch/x86_64/planted.c 'int vm_create(void *vm); int f_(void *v) { return vm_create(v); }' \
	"arch/ calls the VMM through a bare prototype"
plant_obj fail arch/x86_64/planted.c '#define IOC io##ctl
#define CALL(a, b) IOC(a, b)
extern int CALL(int, unsigned long);
int g_(int fd) { return CALL(fd, 0UL); }' "arch/ calls ioctl through a macro"
plant_obj fail spec/planted.c 'long syscall(long n, ...); long h_(void) { return syscall(16, 0, 0); }' \
	"spec/ calls syscall()"
plant_obj fail spec/planted.c 'int seccomp_load(void *ctx); int k_(void *c) { return seccomp_load(c); }' \
	"spec/ calls libseccomp"
plant_obj pass spec/planted.c 'struct json_object *json_object_new_int(int); void *m_(void) { return json_object_new_int(1); }' \
	"spec/ calls json-c"
plant_obj pass arch/x86_64/planted.c '#include <string.h>
void n_(char *d, const char *s, unsigned long n) { memcpy(d, s, n); }' "arch/ calls libc memcpy"

# what the rules allow passes (the check is not failing on any edit)
plant pass spec/node.c '#include "vmm/vm_config.h"' "spec/ includes the contract vmm/vm_config.h"
plant pass vmm/cmd/cmd_run.c '#include "spec/spec.h"' "a cmd_*.c includes spec/spec.h"
plant pass vmm/dev/rtc.c '#include "firmware/abi.h"' "vmm/ includes the guest ABI firmware/abi.h"
plant pass vmm/dev/rtc.c '#include "vmm/vm/device.h"' "vmm/dev/ includes vmm/vm/device.h"
plant pass vmm/virtio/virtio_rng.c '#include "vmm/dev/pci.h"' "vmm/virtio/ includes the PCI bus vmm/dev/pci.h"
plant pass vmm/net/tap.c '#include "vmm/util/iov.h"' "vmm/net/ includes vmm/util/iov.h"
plant pass vmm/disk/blk_raw.c '#include "vmm/util/iov.h"' "vmm/disk/ includes vmm/util/iov.h"
plant pass vmm/virtio/virtio_rng.c '#include "vmm/vm/irq.h"' "vmm/virtio/ includes the contract vmm/vm/irq.h"
plant pass vmm/dev/rtc.c '#include "vmm/vm/guest_mem.h"' "vmm/dev/ includes the contract vmm/vm/guest_mem.h"
plant pass vmm/dev/pm.c '#include "../vm/bus.h"' "vmm/dev/ includes the contract ../vm/bus.h"
plant pass vmm/dev/ahci/ahci_ata.c '#include "../../vm/guest_mem.h"' "vmm/dev/ahci/ includes the contract ../../vm/guest_mem.h"
plant pass vmm/net/tap.c '#include "vmm/util/log.h"' "vmm/net/ includes vmm/util/log.h"
plant pass vmm/util/log.c '#include "vmm/util/thread.h"' "vmm/util/ includes vmm/util/"
plant pass vmm/boot/boot.c '#include "vmm/vm/vcpu.h"' "vmm/boot/ includes vmm/vm/vcpu.h"
plant pass arch/x86_64/memmap.c '/* no ioctl(fd, ...) here */' "ioctl( in an arch/ comment"
plant pass arch/x86_64/memmap.c 'static const char s_[] = "ioctl(";' "ioctl( in an arch/ string"
plant pass arch/x86_64/memmap.c '#include "arch/x86_64/util.h"' "arch/ includes arch/"
plant pass firmware/lib/string.c '#include <stdint.h>' "firmware/ includes <stdint.h>"
plant pass firmware/probe/topo.c '#include "arch/x86_64/acpi_wire.h"' "firmware/ includes the ACPI wire layouts"
plant pass spec/node.c '#include <spec/diag.h>' "spec/ includes <spec/diag.h>"
finish
