# The memory balloon KubeVirt attaches by default (no autoattachMemBalloon
# in the manifest): Linux's virtio_balloon binds it and negotiates the
# statistics queue and free page reporting. The guest fills 128 MiB of
# tmpfs (vmlet's RSS grows), deletes it and waits; its page reporting
# hands the freed memory back and vmlet releases it (MADV_DONTNEED), so
# vmlet's RSS drops again. L1 reads the RSS of the vmlet process running
# the guest (/proc, the largest of the vmlet processes) and the balloon's
# metrics through the control socket at each step, then lets the guest on
# through its console.
SHAPE=1,1,1 MEM=512Mi
TIMEBOX=400
l1() {
	sock=/tmp/api.sock
	rm -f "$sock" /tmp/bin /tmp/bout /tmp/brc && mkfifo /tmp/bin && : >/tmp/bout
	exec 5<>/tmp/bin
	{
		vm_run --api-socket "$sock" <&5
		echo $? >/tmp/brc
	} | tee /tmp/bout &
	bal_wait "@R balloon-filled" && bal_measure filled && echo go >&5
	bal_wait "@R balloon-freed" && bal_measure freed && echo go >&5
	wait
	exec 5>&-
	return "$(cat /tmp/brc 2>/dev/null || echo 1)"
}
# bal_wait PATTERN: until the console shows it (at most 300 s)
bal_wait() {
	n=0
	while ! grep -q "$1" /tmp/bout && [ $n -lt 1500 ]; do sleep 0.2; n=$((n + 1)); done
	grep -q "$1" /tmp/bout
}
# bal_measure STEP: "@R l1-STEP RSS_KIB RELEASED_BYTES STATS_UPDATES GUEST_TOTAL"
bal_measure() {
	rss=0
	for p in $(pidof vmlet); do
		r=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$p/status" 2>/dev/null)
		[ -n "$r" ] && [ "$r" -gt "$rss" ] && rss=$r
	done
	vmlet ctl "$sock" metrics >/tmp/bm 2>&1
	m() { awk -v k="$1" '$1 == k { printf "%.0f", $2; f = 1 } END { if (!f) printf "-" }' /tmp/bm; }
	echo "@R l1-$1 $rss $(m vmlet_balloon_released_bytes_total) $(m vmlet_balloon_stats_updates_total) $(m vmlet_guest_memory_total_bytes)"
}
l2() {
	mod virtio_pci virtio_balloon
	d=$(ls -d /sys/bus/virtio/drivers/virtio_balloon/virtio* 2>/dev/null | head -n 1)
	rep balloon-dev "$(cat "$d/device" 2>/dev/null) $(cat "$d/features" 2>/dev/null)"
	mkdir -p /mnt/fill && mount -t tmpfs -o size=200m tmpfs /mnt/fill
	dd if=/dev/zero of=/mnt/fill/x bs=1M count=128 2>/dev/null
	rep balloon-filled "$(du -k /mnt/fill/x | cut -f1)"
	read -t 300 -r line
	rm /mnt/fill/x
	# page reporting runs 2 s after pages are freed; the statistics
	# period is 10 s: wait for both
	sleep 15
	rep balloon-freed
	read -t 300 -r line
}
# (sourced by L1's and L2's ash too: POSIX sh only)
bal_f() { echo "$1" | cut -d' ' -f"$2"; }
host_check() {
	local dev feat f1 f2 rss1 rss2 rel1 rel2 upd tot mt
	dev=$(rep balloon-dev)
	feat=$(bal_f "$dev" 2 | cut -c1-8)
	[ "$(bal_f "$dev" 1)" = 0x0005 ] && ok "virtio_balloon bound virtio device 5" || fail "virtio_balloon: '$dev'"
	# bits 0..7: MUST_TELL_HOST STATS_VQ DEFLATE_ON_OOM FREE_PAGE_HINT PAGE_POISON REPORTING
	case $feat in
	01??01*) ok "negotiated STATS_VQ and REPORTING, not MUST_TELL_HOST or DEFLATE_ON_OOM: $feat" ;;
	*) fail "balloon features '$feat'" ;;
	esac
	f1=$(rep l1-filled) f2=$(rep l1-freed)
	rss1=$(bal_f "$f1" 1) rel1=$(bal_f "$f1" 2)
	rss2=$(bal_f "$f2" 1) rel2=$(bal_f "$f2" 2) upd=$(bal_f "$f2" 3) tot=$(bal_f "$f2" 4)
	case "$rss1$rel1$rss2$rel2$upd$tot" in
	'' | *[!0-9]*)
		fail "L1 measures: filled '$f1', freed '$f2'"
		return
		;;
	esac
	echo "    vmlet RSS: $((rss1 / 1024)) MiB with 128 MiB filled, $((rss2 / 1024)) MiB after it was freed; released $((rel2 / 1048576)) MiB in all"
	[ $((rss1 - rss2)) -ge 65536 ] && ok "vmlet's RSS dropped by $(((rss1 - rss2) / 1024)) MiB (>= 64 of the 128 freed)" ||
		fail "vmlet's RSS: $rss1 KiB filled, $rss2 KiB freed"
	[ $((rel2 - rel1)) -ge $((64 << 20)) ] && ok "free page reporting released $(((rel2 - rel1) >> 20)) MiB after the free" ||
		fail "released bytes: $rel1 then $rel2"
	[ "$upd" -ge 2 ] && ok "the guest's statistics arrived $upd times" || fail "stats updates: $upd"
	# (a gauge: the metrics text has 6 significant digits)
	mt=$(rep mem)
	[ -n "$mt" ] && [ $((tot - mt * 1024)) -le "$mt" ] && [ $((mt * 1024 - tot)) -le "$mt" ] &&
		ok "the guest's total memory statistic is its MemTotal" || fail "guest total stat $tot, MemTotal $mt kB"
}
