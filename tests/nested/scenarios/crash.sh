# Crash consistency (issue 16 part 3): vmlet killed with SIGKILL while a
# stock Linux writes ext4 on virtio-blk; what the guest fsynced must be in
# the images, which must be clean (e2fsck -fn after the journal replay a
# mount would do).
#
# The fsync run (always): six disks, one per format and cache mode (none =
# O_DIRECT, writethrough = O_DSYNC, writeback): raw hostDisks, which keep
# what the guest writes, and qcow2 containerDisks, which are ephemeral (as
# in KubeVirt: the writes go to an overlay in $TMPDIR, thrown away). On
# each the guest writes a new file, rewrites part of it in place and writes
# a small one in a new directory, fsyncs them and the directories, prints
# their md5 sums, then "@R synced": L1 kills vmlet on that line. The raw
# images must hold every synced byte; the qcow2 images must be as they
# were (qemu-img check clean, not one byte changed), and no overlay may be
# left in L1's /tmp.
#
# Random kills (opt-in: CRASH_RUNS=N tests/nested/run --only crash; seed
# CRASH_SEED, printed): N more runs, each on fresh images, one raw and one
# qcow2 disk, the cache mode taking turns; the guest writes files without
# end (each fsynced, its sum printed; old ones removed; unsynced writes
# between) and L1 kills vmlet at a random delay (0 to CRASH_MAX_DELAY
# seconds, default 20) after the workload starts. Figures: "crash:" lines.
SHAPE=1,2,1 MEM=256Mi TIMEBOX=200
CRASH_SERIALS="raw-none raw-wt raw-wb qcow2-none qcow2-wt qcow2-wb"

# crash_yaml DIR: a VM whose disks (serial = volume name = NAME FORMAT-CACHE)
# are DIR/NAME.img (raw hostDisk) or the containerDisk DIR/cd/NAME (qcow2)
crash_yaml() {
	local dir=$1 s devs="" vols="" c
	shift
	for s; do
		case ${s#*-} in none) c=none ;; wt) c=writethrough ;; *) c=writeback ;; esac
		devs+="          - {name: $s, serial: $s, cache: $c, disk: {bus: virtio}}"$'\n'
		case $s in
		raw-*) vols+="      - {name: $s, hostDisk: {path: $dir/$s.img, type: Disk}}"$'\n' ;;
		*) vols+="      - {name: $s, containerDisk: {image: example/$s}}"$'\n' ;;
		esac
	done
	vm_yaml "$SCN" "$SHAPE" "$MEM" "          autoattachPodInterface: false
          disks:
${devs%$'\n'}" "${vols%$'\n'}"
}

# crash_images DIR MIB SERIAL...: fresh empty ext4 images for those disks
crash_images() {
	local dir=$1 mib=$2 s
	shift 2
	mkdir -p "$dir/cd"
	mke2fs -q -t ext4 -F "$dir/base.raw" "${mib}M" >/dev/null || return 1
	for s; do
		case $s in
		raw-*) cp --sparse=always "$dir/base.raw" "$dir/$s.img" ;;
		*) mkdir -p "$dir/cd/$s" && qemu-img convert -q -f raw -O qcow2 "$dir/base.raw" "$dir/cd/$s/disk.qcow2" ;;
		esac || return 1
	done
	rm -f "$dir/base.raw"
}

host_prep() {
	local n=${CRASH_RUNS:-0} seed=${CRASH_SEED:-$RANDOM$RANDOM} i m
	command -v qemu-img >/dev/null || return 1
	crash_images "$SCN_DIR" 32 $CRASH_SERIALS && crash_yaml "/scn/$SCN" $CRASH_SERIALS >"$SCN_DIR/vm.yaml" || return 1
	echo "crash: $n random-kill runs, seed $seed (CRASH_RUNS, CRASH_SEED)"
	awk -v n="$n" -v seed="$seed" -v max="${CRASH_MAX_DELAY:-20}" \
		'BEGIN { srand(seed); for (i = 1; i <= n; i++) printf "%d %.2f\n", i, rand() * max }' >"$SCN_DIR/runs"
	while read -r i m; do
		m=$(echo none wt wb | cut -d' ' -f$(((i - 1) % 3 + 1)))
		crash_images "$SCN_DIR/run$i" 16 "raw-$m" "qcow2-$m" &&
			crash_yaml "/scn/$SCN/run$i" "raw-$m" "qcow2-$m" >"$SCN_DIR/run$i/vm.yaml" || return 1
	done <"$SCN_DIR/runs"
}

l1() {
	local rc i delay all=0
	vm_run_on "@R synced" 'kill -KILL $(pidof vmlet); echo "@R killed fsync-run"' --disk-root "$D/cd"
	rc=$?
	echo "@R vmm-rc fsync $rc"
	[ $rc = 137 ] || all=1
	echo "@R tmp-left $(ls /tmp | grep -c '^vmlet-')"
	while read -r i delay; do
		echo "@R run $i delay=$delay"
		(
			D=$D/run$i L2_APPEND="crash.mode=random"
			vm_run_on "@R workload-start" "(sleep $delay; kill -KILL \$(pidof vmlet)) &" --disk-root "$D/cd"
		)
		rc=$?
		echo "@R vmm-rc $i $rc"
		[ $rc = 137 ] || all=1
	done <"$D/runs"
	return $all
}

# ---- L2 ---------------------------------------------------------------------

# crash_mount: each disk of this VM (by serial) mounted at /mnt/SERIAL
crash_mount() {
	for b in /sys/block/vd*; do
		s=$(cat "$b/serial")
		mkdir -p "/mnt/$s"
		mount -t ext4 -o noatime "/dev/${b##*/}" "/mnt/$s" || rep crash-mount-failed "$s"
	done
}

sum() { md5sum "$1" | cut -c1-32; }

crash_fsync() {
	for s in $CRASH_SERIALS; do
		m=/mnt/$s
		mkdir "$m/dir"
		dd if=/dev/urandom of="$m/dir/big" bs=64k count=24 2>/dev/null
		sync "$m/dir/big" "$m/dir" "$m"
		# rewritten in place after it was synced once
		dd if=/dev/urandom of="$m/dir/big" bs=64k seek=5 count=4 conv=notrunc 2>/dev/null
		echo "$s $(cat /proc/sys/kernel/random/uuid)" >"$m/small"
		sync "$m/dir/big" "$m/small" "$m"
		rep s "$s dir/big $(sum "$m/dir/big")"
		rep s "$s small $(sum "$m/small")"
	done
	rep crash-kernel "$(dmesg | grep -c -E 'EXT4-fs (error|warning)|I/O error|blk_update_request')"
	rep synced
}

# without end: new files (1 to 48 blocks of 4 KiB), each fsynced with its
# directory and its sum printed; files older than 8 rounds are removed
# ("rm" printed first); an unsynced 1 MiB file rewritten between
crash_random() {
	i=0
	rep workload-start
	while :; do
		i=$((i + 1))
		for m in /mnt/*; do
			s=${m#/mnt/}
			dd if=/dev/urandom of="$m/f$i" bs=4k count=$((RANDOM % 48 + 1)) 2>/dev/null
			sync "$m/f$i" "$m"
			rep s "$s f$i $(sum "$m/f$i")"
			dd if=/dev/urandom of="$m/junk" bs=64k count=16 2>/dev/null
			if [ $i -gt 8 ]; then
				rep rm "$s f$((i - 8))"
				rm "$m/f$((i - 8))"
			fi
		done
	done
}

l2() {
	mod virtio_pci virtio_blk
	crash_mount
	L2_END=none
	if [ "$(l2_arg crash.mode)" = random ]; then
		crash_random
	else
		crash_fsync
	fi
}

# ---- host -------------------------------------------------------------------

# crash_image IMG RUN SERIAL: the image L1 gave back, checked: qemu-img
# check (qcow2), the journal replayed (as a mount would), e2fsck -fn, then
# every file the guest reported synced in RUN holds its sum (one it
# reported removing may be gone). Prints one "crash: ..." verdict line;
# status 0 clean, 1 data lost or the filesystem damaged, 2 qcow2 leaks only.
crash_image() {
	local img=$1 run=$2 s=$3 raw=$1.raw t=$1.tree out rc=0 q="" f want got lost=0 n=0 gone=0
	if [[ $s == qcow2-* ]]; then
		out=$(qemu-img check "$img" 2>&1)
		case $? in
		0) q="qemu-img check clean" ;;
		3) q="qemu-img check: leaked clusters only ($(echo "$out" | grep -m1 -i leak))" rc=2 ;;
		*) echo "crash: $run $s: qemu-img check: $(echo "$out" | tr '\n' ' ')"; return 1 ;;
		esac
		# an ephemeral containerDisk: the image as host_prep made it
		if ! cmp -s "$img" "$img.orig"; then
			echo "crash: $run $s: the containerDisk image was written"
			return 1
		fi
		q+=", the image untouched (ephemeral)"
		: >"$img.sums"
		qemu-img convert -q -f qcow2 -O raw "$img" "$raw" || { echo "crash: $run $s: cannot convert"; return 1; }
	else
		cp --sparse=always "$img" "$raw"
	fi
	# (journal_only without -f: with -f e2fsck would check and repair all)
	e2fsck -y -E journal_only "$raw" >/dev/null 2>&1
	if ! out=$(e2fsck -fn "$raw" 2>&1); then
		echo "crash: $run $s: e2fsck -fn: $(echo "$out" | tail -n 8 | tr '\n' ' ')"
		rm -f "$raw"
		return 1
	fi
	rm -rf "$t" && mkdir -p "$t" && debugfs -R "rdump / $t" "$raw" >/dev/null 2>&1
	while read -r f want; do
		got=$({ md5sum <"$t/$f"; } 2>/dev/null | cut -c1-32)
		[[ $got == "$want" ]] && n=$((n + 1)) && continue
		# a file the guest said it removes may be gone, not different
		[[ -z $got && -n $(awk -v s="$s" -v f="$f" '$1 == s && $2 == f' "$img.rm") ]] &&
			gone=$((gone + 1)) && continue
		echo "crash: $run $s: $f: ${got:-missing}, the guest synced $want"
		lost=1
	done <"$img.sums"
	rm -rf "$t" "$raw"
	((lost)) && return 1
	echo "crash: $run $s: e2fsck -fn clean, $n synced files intact, $gone removed${q:+, $q}"
	return $rc
}

host_check() {
	local run s img runs=0 clean=0 leaks=0 bad=0 r
	# the report, split per run: "s" and "rm" lines after "run N" belong to it.
	# An "s" line whose sum is not 32 hex digits was cut by the kill while the
	# guest printed it: it says nothing, and is named (seen once in 54 kills:
	# the sum's last 13 digits missing, the file intact)
	awk -v d="$D" '
		/^run / { run = $2 }
		/^s / && (length($4) != 32 || $4 ~ /[^0-9a-f]/) {
			print "crash: " (run ? run : "fsync") " " $2 ": a report line cut by the kill, not counted: " $0
			next
		}
		/^s / { print $3, $4 >> (d "/" (run ? "run" run "/" : "") $2 ".sums") }
		/^rm / { print $2, $3 >> (d "/" (run ? "run" run "/" : "") $2 ".rm") }' "$R"
	[[ $(grep -c '^synced$' "$R") == 1 ]] && ok "the guest fsynced on all six disks" ||
		fail "the guest did not report synced"
	[[ $(rep killed) == fsync-run ]] && ok "L1 killed vmlet on 'synced'" || fail "no kill after 'synced'"
	[[ $(rep crash-kernel) == 0 ]] && ok "no I/O or ext4 error in the guest" ||
		fail "guest kernel: $(rep crash-kernel) I/O or ext4 errors"
	[[ $(rep tmp-left) == 0 ]] && ok "no containerDisk overlay left in L1's /tmp after the kill" ||
		fail "$(rep tmp-left) vmlet files left in L1's /tmp after the kill"
	[[ $(rep vmm-rc | grep -v -c ' 137$') == 0 ]] && ok "vmlet died of SIGKILL in every run" ||
		fail "vmlet exit statuses: $(rep vmm-rc | tr '\n' ';')"
	for run in fsync $(sed -n 's/^run \([0-9]*\) .*/\1/p' "$R"); do
		for s in $CRASH_SERIALS; do
			if [[ $run == fsync ]]; then
				img=scn/$SCN/$s.img r=$D
				[[ $s == qcow2-* ]] && img=scn/$SCN/cd/$s/disk.qcow2
			else
				img=scn/$SCN/run$run/$s.img r=$D/run$run
				[[ $s == qcow2-* ]] && img=scn/$SCN/run$run/cd/$s/disk.qcow2
				[[ -f $r/cd/$s/disk.qcow2 || -f $r/$s.img ]] || continue
			fi
			[[ $run == fsync && ! -s $r/$s.sums ]] && fail "$s: the guest reported no synced file"
			touch "$r/$s.sums" "$r/$s.rm"
			l1_get "$img" "$r/$s.back" || { fail "$run $s: no image back from L1"; continue; }
			mv "$r/$s.sums" "$r/$s.back.sums" && mv "$r/$s.rm" "$r/$s.back.rm"
			[[ $s == qcow2-* ]] && cp "$r/cd/$s/disk.qcow2" "$r/$s.back.orig"
			crash_image "$r/$s.back" "$run" "$s"
			case $? in 0) clean=$((clean + 1)) ;; 2) leaks=$((leaks + 1)) ;; *) bad=$((bad + 1)) ;; esac
			runs=$((runs + 1))
			rm -f "$r/$s.back" "$r/$s.back.orig"
		done
	done
	echo "crash: figures: $runs disk kills: $clean clean, $leaks qcow2 leaks only, $bad lost data or damaged"
	((bad == 0)) && ok "every kill: fsynced data intact, e2fsck -fn clean, qcow2 images untouched and clean" ||
		fail "$bad of $runs disk kills lost fsynced data or left a damaged image"
}
