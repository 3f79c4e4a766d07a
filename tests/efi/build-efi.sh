#!/bin/sh
# Build an EFI application from one C file with Debian's gnu-efi:
#   tests/efi/build-efi.sh SRC.c OUT.efi [WORKDIR]
# Leaves OUT.so (the ELF, with symbols) next to OUT.efi. Exits 77 when
# gnu-efi is not installed. Code is built general-registers-only: our
# firmware runs applications at CPL0, where SSE arithmetic and x87 stop the
# vCPU under kvm-pvm (docs/hosts.md).
set -eu
src=$1 out=$2
lib=/usr/lib
[ -f $lib/crt0-efi-x86_64.o ] && [ -f /usr/include/efi/efi.h ] || {
	echo "skip: gnu-efi not installed" >&2
	exit 77
}
so=${out%.efi}.so
obj=${out%.efi}.o
gcc -I/usr/include/efi -I/usr/include/efi/x86_64 -O2 -fpic -ffreestanding \
	-fno-stack-protector -fno-stack-check -fshort-wchar -mno-red-zone \
	-mgeneral-regs-only -maccumulate-outgoing-args -DGNU_EFI_USE_MS_ABI \
	-Wall -Werror -c "$src" -o "$obj"
ld -nostdlib -znocombreloc -shared -Bsymbolic -T $lib/elf_x86_64_efi.lds \
	$lib/crt0-efi-x86_64.o "$obj" -o "$so" -L$lib -lefi -lgnuefi
objcopy -j .text -j .sdata -j .data -j .rodata -j .dynamic -j .dynsym \
	-j .rel -j .rela -j .rel.* -j .rela.* -j .reloc \
	--target efi-app-x86_64 --subsystem=10 "$so" "$out"
