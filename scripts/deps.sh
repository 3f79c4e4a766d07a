#!/bin/sh
# Install the Debian packages vmlet's build and tests need. Idempotent and
# quiet when everything is present; needs root (or sudo) otherwise.
set -eu
PKGS="build-essential pkg-config clang libclang-rt-14-dev
libyaml-dev libjson-c-dev libseccomp-dev libcap-ng-dev
python3 python3-yaml qemu-system-x86 qemu-utils time acpica-tools
mtools dosfstools gdisk genisoimage xorriso gnu-efi dmidecode
busybox-static cpio iproute2 passt nftables hyperfine valgrind cppcheck clang-format socat
btrfs-progs seabios ovmf syslinux syslinux-common
grub-efi-amd64-bin grub-pc-bin shim-unsigned skopeo docker-registry zstd swtpm"
# tests/nested's patched L0: scripts/build-qemu-l0 builds QEMU from Debian's source
PKGS="$PKGS ninja-build libglib2.0-dev libfdt-dev python3-venv bzip2 patch"

# Debian's cloud kernel for the Linux boot tests (tests/sh/efi_linux_tcg.sh,
# linux_smoke.sh): downloaded once into build/, not installed. Without
# network those tests skip.
fetch_kernel() {
	"$(dirname "$0")/fetch-kernel" >/dev/null 2>&1 ||
		echo "deps: cannot fetch linux-image-cloud-amd64: the Linux boot tests will skip" >&2
}

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
if [ -z "$missing" ]; then
	fetch_kernel
	exit 0
fi

echo "deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# Another apt (a second checkout's make, unattended upgrades) may hold dpkg's lock:
# wait for it rather than fail.
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $missing >/dev/null
fetch_kernel
