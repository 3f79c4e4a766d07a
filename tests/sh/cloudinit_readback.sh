#!/usr/bin/env bash
# The seed images vmlet writes read back through two more independent
# ISO 9660 implementations: xorriso (Joliet names, contents), and Linux's
# isofs through a loop mount the way cloud-init mounts them, when the
# kernel has isofs and we are root.
source "$(dirname "$0")/../lib/sh.sh"

command -v xorriso >/dev/null || skip "no xorriso"
can_mount=0
[[ $(id -u) -eq 0 ]] && grep -qw iso9660 /proc/filesystems && can_mount=1
modprobe isofs 2>/dev/null && grep -qw iso9660 /proc/filesystems && [[ $(id -u) -eq 0 ]] && can_mount=1
BIN=$TMPD/ci_write
cat >"$TMPD/w.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "vmm/disk/cloudinit.h"
#include "vmm/vm_config.h"
int main(int argc, char **argv)
{
	struct vm_disk d = { .name = "ci", .user_data = "#cloud-config\nhostname: x\n",
			     .network_data = "version: 2\n", .meta_hostname = "vm1" };
	char buf[65536];
	ssize_t n;
	int fd;

	d.source = argv[1][0] == 'n' ? VM_DISK_CLOUDINIT_NOCLOUD : VM_DISK_CLOUDINIT_CONFIGDRIVE;
	/* as spec/ decides them (KubeVirt's pkg/cloud-init) */
	d.meta_instance_id = argv[1][0] == 'n' ? "5a9fc181-957e-5c32-9e5a-2de5e9673531" : "vm1.ns";
	d.meta_uuid = argv[1][0] == 'n' ? NULL : "5a9fc181-957e-5c32-9e5a-2de5e9673531";
	fd = cloudinit_write_fd(&d, argv[2]);
	if (fd < 0 || lseek(fd, 0, SEEK_SET))
		return 1;
	/* the seed has no name: copied to stdout */
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			return 1;
	return n < 0;
}
C
make -s build/libvmlet.a || { fail "build"; finish; }
cc -std=gnu11 -D_GNU_SOURCE -I. -o "$BIN" "$TMPD/w.c" build/libvmlet.a -ljson-c -lpthread ||
	{ fail "build the writer"; finish; }
mkdir -p "$TMPD/m"
for kind in nocloud configdrive; do
	img=$TMPD/$kind.iso
	"$BIN" "$kind" "$TMPD" >"$img" || { fail "$kind: writer failed"; continue; }
	rm -rf "$TMPD/m" && mkdir -p "$TMPD/m"
	if ((can_mount)) && mount -o loop,ro -t iso9660 "$img" "$TMPD/m" 2>"$TMPD/mount.err"; then
		how=mount
	else
		how=xorriso
		xorriso -osirrox on -indev "$img" -extract / "$TMPD/m" >"$TMPD/x.log" 2>&1 ||
			{ fail "$kind: xorriso: $(tail -3 "$TMPD/x.log")"; continue; }
	fi
	echo "  ($kind read through $how)"
	files=$(cd "$TMPD/m" && find . -type f | sort | tr '\n' ' ')
	label=$(blkid -p -o value -s LABEL "$img")
	if [[ $kind == nocloud ]]; then
		[[ $files == "./meta-data ./network-config ./user-data " && $label == cidata ]] &&
			ok "nocloud: $label: $files" || fail "nocloud: label '$label' files '$files'"
		grep -q '^instance-id: "5a9fc181-957e-5c32-9e5a-2de5e9673531"$' "$TMPD/m/meta-data" &&
			grep -q '^local-hostname: "vm1"$' "$TMPD/m/meta-data" && ok "nocloud meta-data" ||
			fail "nocloud meta-data: $(cat "$TMPD/m/meta-data")"
	else
		[[ $files == "./openstack/latest/meta_data.json ./openstack/latest/network_data.json ./openstack/latest/user_data " && $label == config-2 ]] &&
			ok "configdrive: $label: $files" || fail "configdrive: label '$label' files '$files'"
		python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["uuid"]=="5a9fc181-957e-5c32-9e5a-2de5e9673531" and d["instance_id"]=="vm1.ns" and d["hostname"]=="vm1"' \
			"$TMPD/m/openstack/latest/meta_data.json" && ok "configdrive meta_data.json" ||
			fail "configdrive meta_data.json"
	fi
	cmp -s <(printf '#cloud-config\nhostname: x\n') "$TMPD/m/$([[ $kind == nocloud ]] && echo user-data || echo openstack/latest/user_data)" &&
		ok "$kind: user data intact" || fail "$kind: user data differs"
	[[ $how == mount ]] && umount "$TMPD/m"
	chmod -R u+w "$TMPD/m"
	rm -f "$img"
done
finish
