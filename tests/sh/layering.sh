#!/usr/bin/env bash
# The layering rules hold (scripts/check-layering.sh), and the check has
# teeth: each violation planted in a scratch copy of the tree makes it fail
# naming the file, and what the rules allow still passes.
source "$(dirname "$0")/../lib/sh.sh"
out=$(scripts/check-layering.sh 2>&1) && ok "the tree passes" || fail "layering rules broken: $out"

tree=$TMPD/tree
mkdir -p "$tree/scripts"
cp -r spec vmm arch firmware "$tree/"
cp scripts/check-layering.sh "$tree/scripts/"

# plant pass|fail FILE LINE WHAT: append LINE to FILE in the copy, run the
# check there, put FILE back.
plant() {
	local want=$1 f=$2 line=$3 what=$4 rc
	[[ -f $tree/$f ]] || { fail "$what: no $f to plant in"; return; }
	cp "$tree/$f" "$TMPD/saved"
	printf '%s\n' "$line" >>"$tree/$f"
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
plant fail arch/x86_64/acpi.c '#include "vmm/vm.h"' "arch/ includes vmm/"
plant fail arch/x86_64/acpi.c '#include "../../vmm/vm.h"' "arch/ includes ../../vmm/vm.h"
plant fail arch/arch.h '#include <json-c/json.h>' "json-c in arch/"
plant fail spec/node.c '#include "vmm/vm.h"' "spec/ includes vmm/vm.h"
plant fail spec/node.c '#include "../vmm/vm.h"' "spec/ includes ../vmm/vm.h"
plant fail spec/node.c '#  include "vmm/vm.h"' "spec/ includes vmm/vm.h spelled '#  include'"
plant fail spec/node.c $'\t#\tinclude\t"vmm/vm.h"' "spec/ includes vmm/vm.h spelled with tabs"
plant fail spec/node.c '#include "arch/arch.h"' "spec/ includes arch/"
plant fail spec/quantity.c '#include <linux/kvm.h>' "spec/ includes <linux/kvm.h>"
plant fail spec/quantity.c "$ioctl_fn" "an ioctl() call in spec/"
plant fail vmm/cmd_run.c '#include "spec/resolve.h"' "a cmd_*.c includes spec/ internals"
plant fail vmm/main.c '#include "spec/node.h"' "main.c includes spec/ internals"
plant fail vmm/dev/rtc.c '#include "../../spec/node.h"' "vmm/dev/ includes ../../spec/node.h"
plant fail vmm/dev/rtc.c '#include <json-c/json.h>' "json-c in vmm/dev/"
plant fail vmm/dev/rtc.c '# include <json.h>' "json.h in vmm/dev/"
plant fail vmm/vm.c '#include <yaml.h>' "<yaml.h> outside spec/yaml.c"
plant fail vmm/vm.c '#include "firmware/lib/fw.h"' "vmm/ includes firmware/ internals"
plant fail vmm/vm.c '#include "../../../etc/x.h"' "an include that leaves the tree"
plant fail vmm/vm.c '#include VMLET_HEADER' "a computed include"
plant fail firmware/lib/string.c '#include <stdio.h>' "firmware/ includes libc"
plant fail firmware/probe/topo.c '#include "vmm/vm.h"' "firmware/ includes vmm/"
plant fail firmware/efi/main.c '#include "../../arch/arch.h"' "firmware/ includes ../../arch/"

# what the rules allow passes (the check is not failing on any edit)
plant pass spec/node.c '#include "vmm/vm_config.h"' "spec/ includes the contract vmm/vm_config.h"
plant pass vmm/cmd_run.c '#include "spec/spec.h"' "a cmd_*.c includes spec/spec.h"
plant pass vmm/dev/rtc.c '#include "firmware/abi.h"' "vmm/ includes the guest ABI firmware/abi.h"
plant pass arch/x86_64/memmap.c '/* no ioctl(fd, ...) here */' "ioctl( in an arch/ comment"
plant pass arch/x86_64/memmap.c 'static const char s_[] = "ioctl(";' "ioctl( in an arch/ string"
plant pass arch/x86_64/memmap.c '#include "arch/x86_64/util.h"' "arch/ includes arch/"
plant pass firmware/lib/string.c '#include <stdint.h>' "firmware/ includes <stdint.h>"
finish
