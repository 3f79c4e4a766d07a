#!/bin/sh
# Emit an assembler file that embeds each firmware image named on the
# command line (build/fw/NAME.elf) as fw_NAME_start .. fw_NAME_end, and
# defines empty images for the known names that were not built.
set -eu
for name in probe efi; do
	case " $* " in
	*" $name "*)
		printf '\t.section .rodata.fw_%s,"a"\n\t.balign 16\n' "$name"
		printf '\t.globl fw_%s_start\n\t.globl fw_%s_end\n' "$name" "$name"
		printf 'fw_%s_start:\n\t.incbin "build/fw/%s.elf"\nfw_%s_end:\n' "$name" "$name" "$name"
		;;
	*)
		printf '\t.section .rodata.fw_%s,"a"\n' "$name"
		printf '\t.globl fw_%s_start\n\t.globl fw_%s_end\n' "$name" "$name"
		printf 'fw_%s_start:\nfw_%s_end:\n' "$name" "$name"
		;;
	esac
done
printf '\t.section .note.GNU-stack,"",@progbits\n'
