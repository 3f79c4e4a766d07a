#!/bin/sh
# check-layering.sh - the dependency rules of vmlet (docs/architecture.md "Layering",
# docs/architecture.md). Exit 0 and "layering: ok", or one line per
# violation ("FILE:LINE: rule") and exit 1.
#
# Every include in every file of spec/, vmm/, arch/ and firmware/ (not
# only *.c, *.h, *.S: an .inc or .def file is included too) is read
# however it is spelled ("#  include", "# include", tabs) and resolved the
# way the compiler does with -I.: a quoted one next to the including file
# first, then from the top of the tree, with "." and ".." folded, so
# "../../vmm/vm/vm.h" is vmm/vm/vm.h; an angle one that names a file of the
# tree (<vmm/vm/vm.h>) is that file. A symbolic link in the four roots is a
# violation of its own. The rules:
#  1. <yaml.h> only in spec/yaml.c (the one parser of manifests).
#  2. spec/ includes spec/ headers and, of vmm/, only the contract
#     vmm/vm_config.h; nothing of arch/ or firmware/; no KVM, no ioctl.
#  3. arch/ includes only arch/ headers; no libraries (json-c, libyaml,
#     libseccomp, libcap-ng), no <sys/ioctl.h>, no ioctl call: pure
#     builders.
#  4. vmm/ (every file, main.c and the cmd_*.c too) includes of spec/ only
#     spec/spec.h, of firmware/ only the guest ABI firmware/abi.h.
#  5. vmm/dev/, vmm/virtio/ and vmm/nic/ (the devices) do not include json-c nor
#     vmm/ctl/, and of the VM core vmm/vm/ only the device contract
#     (device.h, bus.h, guest_mem.h, irq.h; not vm.h, vcpu.h,
#     irq_internal.h, lifecycle.h). vmm/disk/ and vmm/net/ (the backends)
#     include nothing of vmm/dev/, vmm/virtio/ or vmm/vm/. vmm/util/ (log,
#     JSON, event loop, threads, files, iovecs) includes nothing of vmm/
#     outside vmm/util/. A room's sub-folder (vmm/dev/ahci/) is that room.
#     These hold through headers too: an include that
#     leads to a forbidden file through other headers of the tree is
#     refused.
#  6. firmware/ includes only firmware/ headers, of arch/ only the ACPI
#     wire layouts arch/x86_64/acpi_wire.h (the builder writes, the
#     firmware reads them), and the compiler's freestanding headers
#     (stdarg.h, stdbool.h, stddef.h, stdint.h, ...); so does acpi_wire.h.
#  7. an include is "FILE" or <FILE>: no computed (macro) includes, no
#     quoted include that leaves the tree.
# An ioctl call is ioctl( or SYS_ioctl / __NR_ioctl outside comments.
set -u
cd "$(dirname "$0")/.." || exit 2
files=$(find spec vmm arch firmware -type f 2>/dev/null | LC_ALL=C sort)
[ -n "$files" ] || { echo "layering: no sources found"; exit 2; }
# a link could make one file count for two rooms, or lead out of the tree
links=$(find spec vmm arch firmware -type l 2>/dev/null | LC_ALL=C sort)
nlinks=0
for l in $links; do
	echo "$l:0: a symbolic link (the rooms hold files only)"
	nlinks=$((nlinks + 1))
done
# shellcheck disable=SC2086
awk -v nbad="$nlinks" '
function norm(p,   n, a, i, k, st, out) {
	n = split(p, a, "/")
	k = 0
	for (i = 1; i <= n; i++) {
		if (a[i] == "" || a[i] == ".")
			continue
		if (a[i] == "..") {
			if (k == 0)
				return "../" p	# above the top of the tree
			k--
			continue
		}
		st[++k] = a[i]
	}
	out = ""
	for (i = 1; i <= k; i++)
		out = out (i > 1 ? "/" : "") st[i]
	return out
}
function exists(p,   r, line) {
	r = (getline line < p)
	if (r >= 0)
		close(p)
	return r >= 0
}
function dirname(p) {
	return sub(/\/[^\/]*$/, "", p) ? p : "."
}
# the quoted include "inc" of file f as a path from the top of the tree
function resolve(f, inc,   c) {
	c = norm(dirname(f) "/" inc)
	if (c !~ /^\.\.\// && exists(c))
		return c
	return norm(inc)
}
# the rules for an include of t, a file of the tree
function tree_include(t,   ttop) {
	ttop = t
	sub(/\/.*/, "", ttop)
	edge[FILENAME, ++nedge[FILENAME]] = t
	eline[FILENAME, nedge[FILENAME]] = FNR
	if (top == "spec" && ttop != "spec" && t != "vmm/vm_config.h")
		bad("spec/ includes " t " (only spec/ and vmm/vm_config.h)")
	if (top == "arch" && ttop != "arch")
		bad("arch/ includes " t " (only arch/)")
	if (top == "vmm" && ttop == "spec" && t != "spec/spec.h")
		bad("vmm/ includes " t " (of spec/ only spec/spec.h)")
	if (top == "vmm" && ttop == "firmware" && t != "firmware/abi.h")
		bad("vmm/ includes " t " (of firmware/ only firmware/abi.h)")
	if (top == "firmware" && ttop != "firmware" && t != "arch/x86_64/acpi_wire.h")
		bad("firmware/ includes " t " (only firmware/ and arch/x86_64/acpi_wire.h)")
	if (t == "yaml.h" && FILENAME != "spec/yaml.c")
		bad("<yaml.h> outside spec/yaml.c")
}
function bad(msg) {
	badat(FILENAME, FNR, msg)
}
function badat(f, l, msg) {
	printf "%s:%d: %s\n", f, l, msg
	nbad++
}
# the room of vmm/ a file of the tree lives in ("vmm/dev"; "vmm" at the top)
function vmm_room(f,   r) {
	if (f !~ /^vmm\/[^\/]+\//)
		return f ~ /^vmm\// ? "vmm" : ""
	r = f
	sub(/^vmm\//, "", r)
	sub(/\/.*/, "", r)
	return "vmm/" r
}
# why room r may not include t ("" when it may)
function forbidden(r, t) {
	if ((r == "vmm/dev" || r == "vmm/virtio" || r == "vmm/nic") && \
	    (t ~ /^vmm\/ctl\// || (t ~ /^vmm\/vm\// && !(t in device_api))))
		return "the devices reach the VM through vmm/vm/device.h, bus.h, guest_mem.h, irq.h"
	if ((r == "vmm/disk" || r == "vmm/net") && t ~ /^vmm\/(dev|virtio|vm)\//)
		return "the backends know nothing of the devices or the VM"
	if (r == "vmm/util" && t ~ /^vmm\// && t !~ /^vmm\/util\//)
		return "the utilities use nothing of the rooms above them"
	return ""
}
# a forbidden file for room r that t leads to through the includes of the
# tree (t itself included), "" when none
function reaches(r, t,   i, w) {
	if (forbidden(r, t) != "")
		return t
	if ((r SUBSEP t) in seen)
		return seen[r, t]
	seen[r, t] = ""
	for (i = 1; i <= nedge[t]; i++)
		if ((w = reaches(r, edge[t, i])) != "")
			return seen[r, t] = w
	return ""
}
# the line without comments and string/char literals (state in incomment)
function code_of(s,   out, i, c, n, q) {
	out = ""
	n = length(s)
	for (i = 1; i <= n; i++) {
		c = substr(s, i, 1)
		if (incomment) {
			if (c == "*" && substr(s, i + 1, 1) == "/") {
				incomment = 0
				i++
			}
			continue
		}
		if (c == "/" && substr(s, i + 1, 1) == "*") {
			incomment = 1
			i++
			continue
		}
		if (c == "/" && substr(s, i + 1, 1) == "/")
			break
		if (c == "\"" || c == "\047") {
			q = c
			for (i++; i <= n; i++) {
				c = substr(s, i, 1)
				if (c == "\\")
					i++
				else if (c == q)
					break
			}
			out = out " "
			continue
		}
		out = out c
	}
	return out
}
BEGIN {
	# what a device may include of the VM core (vmm/vm/device.h)
	device_api["vmm/vm/device.h"] = device_api["vmm/vm/bus.h"] = 1
	device_api["vmm/vm/guest_mem.h"] = device_api["vmm/vm/irq.h"] = 1
}
FNR == 1 {
	incomment = 0
	top = FILENAME
	sub(/\/.*/, "", top)
	room = top == "vmm" ? vmm_room(FILENAME) : top
	files[++nfiles] = FILENAME
}
top != "vmm" {
	code = code_of($0)
	if (code ~ /(^|[^A-Za-z0-9_])(ioctl[ \t]*\(|SYS_ioctl|__NR_ioctl)/)
		bad("ioctl in " top "/ (only vmm/ talks to the kernel)")
}
/^[ \t]*#[ \t]*include/ {
	line = $0
	sub(/^[ \t]*#[ \t]*include[ \t]*/, "", line)
	if (line ~ /^"/) {
		inc = line
		sub(/^"/, "", inc)
		sub(/".*/, "", inc)
		t = resolve(FILENAME, inc)
		if (t ~ /^\.\.\//) {
			bad("\"" inc "\" leaves the tree")
			next
		}
		tree_include(t)
	} else if (line ~ /^</) {
		inc = line
		sub(/^</, "", inc)
		sub(/>.*/, "", inc)
		t = norm(inc)
		if (t !~ /^\.\.\// && t ~ /^(spec|vmm|arch|firmware)\// && exists(t)) {
			tree_include(t)
			next
		}
		if (inc == "yaml.h" && FILENAME != "spec/yaml.c")
			bad("<yaml.h> outside spec/yaml.c")
		json = inc ~ /^json-c\// || inc == "json.h"
		lib = json || inc == "yaml.h" || inc == "seccomp.h" || inc == "cap-ng.h"
		if (top == "arch" && (lib || inc == "sys/ioctl.h"))
			bad("arch/ includes <" inc "> (pure builders: no libraries, no ioctl)")
		if (top == "spec" && (inc == "sys/ioctl.h" || inc ~ /^linux\/kvm/ || \
		    inc == "seccomp.h" || inc == "cap-ng.h"))
			bad("spec/ includes <" inc "> (no KVM, no sandbox)")
		if ((room == "vmm/dev" || room == "vmm/virtio" || room == "vmm/nic") && json)
			bad(room "/ includes <" inc "> (devices do not speak JSON)")
		if ((top == "firmware" || FILENAME == "arch/x86_64/acpi_wire.h") && \
		    inc !~ /^(float|iso646|limits|stdalign|stdarg|stdbool|stddef|stdint|stdnoreturn)\.h$/)
			bad(FILENAME " includes <" inc "> (freestanding: only the compiler headers)")
	} else {
		bad("computed include (" line "): spell it \"FILE\" or <FILE>")
	}
}
END {
	# the rules of the rooms inside vmm/, through headers too
	for (i = 1; i <= nfiles; i++) {
		f = files[i]
		r = vmm_room(f)
		for (j = 1; j <= nedge[f]; j++) {
			t = edge[f, j]
			if ((w = reaches(r, t)) == "")
				continue
			if (w == t)
				badat(f, eline[f, j], r "/ includes " t " (" forbidden(r, t) ")")
			else
				badat(f, eline[f, j], r "/ includes " t ", which leads to " w " (" \
				      forbidden(r, w) ")")
		}
	}
	if (nbad) {
		printf "layering: %d violation(s)\n", nbad
		exit 1
	}
	print "layering: ok"
}
' $files
