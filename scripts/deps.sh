#!/bin/sh
# Install the Debian packages vmlet's build and tests need. Idempotent and
# quiet when everything is present; needs root (or sudo) otherwise.
set -eu
PKGS="build-essential pkg-config clang libclang-rt-14-dev
libyaml-dev libjson-c-dev libseccomp-dev libcap-ng-dev
python3 python3-yaml qemu-system-x86 qemu-utils time acpica-tools
mtools dosfstools gdisk genisoimage xorriso gnu-efi dmidecode
busybox-static cpio iproute2 passt nftables hyperfine valgrind cppcheck clang-format
btrfs-progs"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
