// SPDX-License-Identifier: MIT
/*
 * AHCI end to end without KVM: a raw image on port 0 of the controller,
 * the PCI host on a fake bus, and a small AHCI driver (the steps Linux's
 * ahci takes: HBA reset, AE, command list and FIS area, FRE, COMRESET,
 * ST, commands through PxCI) that also misbehaves: PRDTs past RAM or
 * empty, command slots never issued, FIS types no device knows. It checks
 * the data, the received FISes, PxIS/PxTFD/PxCI and the image file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <time.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/dev/ahci/ahci.h"
#include "vmm/dev/ahci/ahci_int.h" /* the ports' serials */
#include "vmm/disk/blk.h"
#include "vmm/snapshot/snap_buf.h"

#define IMG_SIZE (1u << 20)
#define RAM	 (4u << 20)
#define CLB	 0x1000ull
#define FB	 0x2000ull
#define CTBA	 0x3000ull /* slot s: CTBA + s * 0x400 */
#define DATA	 0x40000ull
#define P0	 0x100u /* port 0 registers */

struct env {
	struct pci_host h;
	struct tdrv d;
	struct ahci *ahci;
	uint64_t abar;
	int slot;
	char path[64];
	int fd;
};

static uint32_t rd(struct env *e, uint32_t off)
{
	return mmio_rd(e->abar + off, 4);
}

static void wr(struct env *e, uint32_t off, uint32_t v)
{
	mmio_wr(e->abar + off, v, 4);
}

/* Poll until (reg & mask) == want; false after 5 s (a hang, not a time
 * measurement). */
static bool wait_reg(struct env *e, uint32_t off, uint32_t mask, uint32_t want)
{
	for (int i = 0; i < 5000; i++) {
		if ((rd(e, off) & mask) == want)
			return true;
		usleep(1000);
	}
	return false;
}

static const char *img_dir = "/tmp";
static bool img_sparse;
static enum vm_error_policy img_policy = VM_ERROR_REPORT;

static int env_up(struct env *e, bool ro, const char *serial)
{
	struct ahci_disk_params p = {.name = "sata0",
				     .serial = serial,
				     .physical_block_size = 4096,
				     .error_policy = img_policy};
	struct blk *be;
	uint8_t *buf = malloc(IMG_SIZE);

	memset(e, 0, sizeof(*e));
	tbus_n = 0;
	snprintf(e->path, sizeof(e->path), "%s/vmlet-ahci-test.XXXXXX", img_dir);
	e->fd = mkstemp(e->path);
	for (unsigned int i = 0; i < IMG_SIZE; i++)
		buf[i] = (uint8_t)(i * 7 + i / 512);
	if (e->fd < 0 || (img_sparse ? ftruncate(e->fd, IMG_SIZE) != 0
				     : pwrite(e->fd, buf, IMG_SIZE, 0) != IMG_SIZE)) {
		free(buf);
		return -1;
	}
	free(buf);
	tdrv_init(&e->d, RAM, 16);
	if (thost_init(&e->h, &e->d.mem) || blk_open(&be, e->path, ro, BLK_CACHE_WRITEBACK) ||
	    ahci_create(&e->ahci, &e->h, -1) || ahci_attach_disk(e->ahci, 0, be, &p))
		return -1;
	e->slot = ahci_pci(e->ahci)->slot;
	if (ecam_rd(e->slot, 0, 4) != (0x2922u << 16 | 0x8086) ||
	    ecam_rd(e->slot, PCI_CLASS_REVISION, 4) >> 8 != 0x010601)
		return -1;
	e->abar = ecam_rd(e->slot, PCI_BASE_ADDRESS_5, 4) & ~0xfull;
	ecam_wr(e->slot, PCI_COMMAND, PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER, 2);
	return 0;
}

/* What Linux's ahci does before it issues a command on port 0. */
static int port_start(struct env *e)
{
	wr(e, 0x04, 1); /* GHC.HR */
	if (rd(e, 0x04) & 1)
		return -1;
	wr(e, 0x04, 1u << 31 | 2); /* AE, IE */
	wr(e, P0 + 0x00, (uint32_t)CLB);
	wr(e, P0 + 0x08, (uint32_t)FB);
	wr(e, P0 + 0x18, 1u << 4); /* FRE */
	wr(e, P0 + 0x2c, 1);	   /* COMRESET */
	wr(e, P0 + 0x2c, 0);
	if ((rd(e, P0 + 0x28) & 0xf) != 3 || rd(e, P0 + 0x24) != 0x101 ||
	    (rd(e, P0 + 0x20) & 0x89) != 0)
		return -1;
	wr(e, P0 + 0x30, ~0u);	       /* SERR */
	wr(e, P0 + 0x10, ~0u);	       /* IS */
	wr(e, P0 + 0x14, ~0u);	       /* IE */
	wr(e, P0 + 0x18, 1u << 4 | 1); /* FRE | ST */
	return 0;
}

static void env_down(struct env *e)
{
	ahci_destroy(e->ahci);
	pci_host_release(&e->h);
	tdrv_release(&e->d);
	close(e->fd);
	unlink(e->path);
}

/* Build slot's command: an H2D FIS for cmd at lba with count, and one PRD
 * entry (buf, len) when len; returns the command table. */
static uint8_t *build(struct env *e, unsigned int slot, uint8_t cmd, uint64_t lba, uint16_t count,
		      bool write, uint64_t buf, uint32_t len)
{
	uint32_t *h = tdrv_ptr(&e->d, CLB + 32ull * slot);
	uint64_t ct = CTBA + 0x400ull * slot;
	uint8_t *f = tdrv_ptr(&e->d, ct);
	uint32_t *prd = tdrv_ptr(&e->d, ct + 0x80);

	memset(f, 0, 0x400);
	f[0] = 0x27;
	f[1] = 0x80;
	f[2] = cmd;
	f[4] = (uint8_t)lba, f[5] = (uint8_t)(lba >> 8), f[6] = (uint8_t)(lba >> 16);
	f[7] = 0x40;
	f[8] = (uint8_t)(lba >> 24), f[9] = (uint8_t)(lba >> 32), f[10] = (uint8_t)(lba >> 40);
	f[12] = (uint8_t)count, f[13] = (uint8_t)(count >> 8);
	h[0] = 5u | (write ? 1u << 6 : 0) | (len ? 1u << 16 : 0);
	h[1] = 0;
	h[2] = (uint32_t)ct;
	h[3] = (uint32_t)(ct >> 32);
	prd[0] = (uint32_t)buf;
	prd[1] = (uint32_t)(buf >> 32);
	prd[3] = len ? len - 1 : 0;
	return f;
}

/* Issue slot and wait for PxCI to clear or an error; returns PxIS. */
static uint32_t issue(struct env *e, unsigned int slot)
{
	wr(e, P0 + 0x38, 1u << slot);
	for (int i = 0; i < 5000; i++) {
		uint32_t is = rd(e, P0 + 0x10);

		if (!(rd(e, P0 + 0x38) & (1u << slot)) ||
		    (is & ((1u << 30) | (1u << 29) | (1u << 27) | (1u << 24))))
			return rd(e, P0 + 0x10);
		usleep(1000);
	}
	return 0xdeadbeef;
}

static void identify_string(const uint16_t *id, int w, int words, char *out)
{
	for (int i = 0; i < words; i++) {
		out[2 * i] = (char)(id[w + i] >> 8);
		out[2 * i + 1] = (char)id[w + i];
	}
	out[2 * words] = 0;
}

static void test_identify(void)
{
	struct env e;
	uint16_t id[256];
	char s[41];
	uint8_t sum = 0, *pio;

	CHECK(env_up(&e, false, "SER-123") == 0);
	CHECK(rd(&e, 0x00) & (1u << 30)); /* CAP.SNCQ */
	CHECK_EQ_U64(rd(&e, 0x0c), 0x3f);
	CHECK_EQ_U64(rd(&e, 0x10), 0x10301);
	CHECK(port_start(&e) == 0);
	build(&e, 0, 0xec, 0, 0, false, DATA, 512);
	CHECK_EQ_U64(issue(&e, 0) & ~3u, 0); /* DHRS, PSS */
	memcpy(id, tdrv_ptr(&e.d, DATA), 512);
	identify_string(id, 10, 10, s);
	CHECK_STR(s, "SER-123             ");
	identify_string(id, 27, 20, s);
	CHECK(strncmp(s, "QEMU HARDDISK ", 14) == 0);
	CHECK_EQ_U64(id[100] | (uint64_t)id[101] << 16, IMG_SIZE / 512);
	CHECK_EQ_U64(id[106], 0x6003); /* 8 logical sectors a physical one */
	CHECK(id[83] & (1u << 10));    /* LBA48 */
	CHECK(id[76] & (1u << 8));     /* NCQ */
	CHECK(id[169] & 1);	       /* TRIM */
	CHECK(id[85] & (1u << 5));     /* write cache on */
	for (int i = 0; i < 512; i++)
		sum = (uint8_t)(sum + ((uint8_t *)id)[i]);
	CHECK_EQ_U64(sum, 0);
	pio = tdrv_ptr(&e.d, FB + 0x20);
	CHECK_EQ_U64(pio[0], 0x5f);
	CHECK_EQ_U64(pio[2], 0x40); /* SeaBIOS waits while BSY or DRQ show here */
	CHECK_EQ_U64(pio[15], 0x40);
	CHECK_EQ_U64(*(uint32_t *)tdrv_ptr(&e.d, CLB + 4), 512); /* PRDBC */
	CHECK(rd(&e, 0x08) & 1);				 /* HBA IS: port 0 */
	env_down(&e);
}

/* A disk without a serial gets QEMU's default, which Linux shows (sysfs
 * vpd_pg80, /dev/disk/by-id): QM00001 on port 0, QM00003 on port 1, QM00005
 * on port 2 (QEMU counts two IDE units a port; tests/nested scenario sata
 * compares it with QEMU's q35) */
static void test_default_serial(void)
{
	struct ahci_disk_params p = {.name = "sata2"};
	char path[64] = "/tmp/vmlet-ahci-test.XXXXXX";
	struct blk *be;
	struct env e;
	int fd;

	CHECK(env_up(&e, false, NULL) == 0);
	fd = mkstemp(path);
	CHECK(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	CHECK(blk_open(&be, path, false, BLK_CACHE_WRITEBACK) == 0);
	CHECK(ahci_attach_disk(e.ahci, 2, be, &p) == 0);
	CHECK_STR(e.ahci->port[0].serial, "QM00001");
	CHECK_STR(e.ahci->port[2].serial, "QM00005");
	env_down(&e);
	close(fd);
	unlink(path);
}

static void test_read_write_ncq_trim(void)
{
	struct env e;
	uint8_t *buf, img[4096];
	uint64_t *range;
	int i;

	CHECK(env_up(&e, false, NULL) == 0);
	CHECK(port_start(&e) == 0);
	/* WRITE DMA EXT, 8 sectors at 16 */
	buf = tdrv_ptr(&e.d, DATA);
	for (i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(0xa5 ^ i);
	build(&e, 0, 0x35, 16, 8, true, DATA, 4096);
	CHECK_EQ_U64(issue(&e, 0) & (1u << 30), 0);
	CHECK(pread(e.fd, img, 4096, 16 * 512) == 4096 && memcmp(img, buf, 4096) == 0);
	/* READ FPDMA QUEUED (NCQ, tag 3) of the same sectors */
	memset(tdrv_ptr(&e.d, DATA + 0x10000), 0, 4096);
	buf = build(&e, 3, 0x60, 16, 0, false, DATA + 0x10000, 4096);
	buf[3] = 8;	  /* count in the features */
	buf[12] = 3 << 3; /* tag */
	wr(&e, P0 + 0x34, 1u << 3);
	CHECK(issue(&e, 3) & (1u << 3)); /* SDBS */
	CHECK(wait_reg(&e, P0 + 0x34, 1u << 3, 0));
	CHECK(memcmp(tdrv_ptr(&e.d, DATA + 0x10000), img, 4096) == 0);
	CHECK_EQ_U64(*(uint8_t *)tdrv_ptr(&e.d, FB + 0x58), 0xa1);
	/* FLUSH CACHE EXT */
	build(&e, 1, 0xea, 0, 0, false, 0, 0);
	CHECK_EQ_U64(issue(&e, 1) & (1u << 30), 0);
	/* TRIM sectors 16..23: the raw image reads zeroes there */
	range = tdrv_ptr(&e.d, DATA + 0x20000);
	memset(range, 0, 512);
	range[0] = 16 | 8ull << 48;
	buf = build(&e, 2, 0x06, 0, 1, true, DATA + 0x20000, 512);
	buf[3] = 1;
	CHECK_EQ_U64(issue(&e, 2) & (1u << 30), 0);
	CHECK(pread(e.fd, img, 4096, 16 * 512) == 4096);
	for (i = 0; i < 4096 && !img[i]; i++)
		;
	CHECK_EQ_U64(i, 4096);
	env_down(&e);
}

/* A task file error: ERR in PxTFD and the D2H FIS, TFES, the slot left
 * in PxCI, the port stopped until ST is cleared. */
static void check_tfe(struct env *e, unsigned int slot, uint8_t error)
{
	uint8_t *d2h = tdrv_ptr(&e->d, FB + 0x40);

	CHECK(issue(e, slot) & (1u << 30));
	CHECK_EQ_U64(rd(e, P0 + 0x20), (uint32_t)error << 8 | 0x41);
	CHECK_EQ_U64(d2h[2], 0x41);
	CHECK_EQ_U64(d2h[3], error);
	CHECK(rd(e, P0 + 0x38) & (1u << slot));
}

static void test_read_only_and_range(void)
{
	struct env e;
	uint8_t img[512], before[512];

	CHECK(env_up(&e, true, NULL) == 0);
	CHECK(port_start(&e) == 0);
	CHECK(pread(e.fd, before, 512, 0) == 512);
	memset(tdrv_ptr(&e.d, DATA), 0x11, 512);
	build(&e, 0, 0x35, 0, 1, true, DATA, 512);
	check_tfe(&e, 0, 0x04);
	CHECK(pread(e.fd, img, 512, 0) == 512 && memcmp(img, before, 512) == 0);
	/* restart the port: clear ST, then a read past the end */
	wr(&e, P0 + 0x18, 1u << 4);
	CHECK(wait_reg(&e, P0 + 0x18, 1u << 15, 0));
	CHECK_EQ_U64(rd(&e, P0 + 0x38), 0);
	wr(&e, P0 + 0x10, ~0u);
	wr(&e, P0 + 0x18, 1u << 4 | 1);
	build(&e, 1, 0x25, IMG_SIZE / 512, 1, false, DATA, 512);
	check_tfe(&e, 1, 0x14);
	env_down(&e);
}

/* Restart port 0 after a fatal error as Linux's EH would. */
static void port_restart(struct env *e)
{
	wr(e, P0 + 0x18, 1u << 4);
	CHECK(wait_reg(e, P0 + 0x18, 1u << 15, 0));
	wr(e, P0 + 0x10, ~0u);
	wr(e, P0 + 0x30, ~0u);
	wr(e, P0 + 0x18, 1u << 4 | 1);
}

static void test_hostile_driver(void)
{
	struct env e;
	uint32_t *h;
	uint8_t *f;

	CHECK(env_up(&e, false, NULL) == 0);
	/* commands while ST is clear are not taken */
	wr(&e, P0 + 0x00, (uint32_t)CLB);
	build(&e, 0, 0x35, 0, 1, true, DATA, 512);
	wr(&e, P0 + 0x38, 1);
	CHECK_EQ_U64(rd(&e, P0 + 0x38), 0);
	CHECK(port_start(&e) == 0);
	/* a PRD entry past RAM: host bus fatal error, nothing read */
	build(&e, 0, 0x25, 0, 1, false, RAM - 256, 512);
	CHECK(issue(&e, 0) & (1u << 29));
	CHECK(rd(&e, P0 + 0x38) & 1);
	/* so is a command table past RAM */
	port_restart(&e);
	build(&e, 1, 0x25, 0, 1, false, DATA, 512);
	h = tdrv_ptr(&e.d, CLB + 32);
	h[2] = 0xfffff000u;
	h[3] = 0xffffffffu;
	CHECK(issue(&e, 1) & (1u << 29));
	/* an empty PRDT for a read: overflow */
	port_restart(&e);
	build(&e, 2, 0x25, 0, 1, false, 0, 0);
	CHECK(issue(&e, 2) & (1u << 24));
	/* a FIS type no device knows: interface fatal error, SERR.DIAG.F */
	port_restart(&e);
	f = build(&e, 3, 0x25, 0, 1, false, DATA, 512);
	f[0] = 0x39;
	CHECK(issue(&e, 3) & (1u << 27));
	CHECK(rd(&e, P0 + 0x30) & (1u << 25));
	/* an unknown ATA command: aborted */
	port_restart(&e);
	build(&e, 4, 0xb0, 0, 0, false, 0, 0);
	check_tfe(&e, 4, 0x04);
	/* a slot built but never issued is never run; the port still works */
	port_restart(&e);
	memset(tdrv_ptr(&e.d, DATA + 0x8000), 0xee, 512);
	build(&e, 6, 0x25, 0, 1, false, DATA + 0x8000, 512);
	build(&e, 5, 0xe7, 0, 0, false, 0, 0);
	CHECK_EQ_U64(issue(&e, 5) & (1u << 30), 0);
	CHECK_EQ_U64(*(uint8_t *)tdrv_ptr(&e.d, DATA + 0x8000), 0xee);
	CHECK_EQ_U64(*(uint32_t *)tdrv_ptr(&e.d, CLB + 6 * 32 + 4), 0);
	/* odd-sized register writes are ignored, unknown ports read 0 */
	mmio_wr(e.abar + P0 + 0x38, 0xff, 1);
	CHECK_EQ_U64(rd(&e, P0 + 0x38), 0);
	CHECK_EQ_U64(rd(&e, 0x100 + 7 * 0x80 + 0x28), 0);
	env_down(&e);
}

/* A 256 KiB write at sector 64 of a sparse image in a 64 KiB tmpfs
 * (root only) under policy: what the guest sees of the host's ENOSPC. */
static void enospc(enum vm_error_policy policy)
{
	char mnt[] = "/tmp/vmlet-ahci-enospc.XXXXXX";
	unsigned int pauses = __atomic_load_n(&tvm_pauses, __ATOMIC_SEQ_CST);
	uint8_t back[512];
	struct env e;
	int r;

	if (geteuid() != 0 || !mkdtemp(mnt))
		SKIP("needs root to mount a small tmpfs");
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		rmdir(mnt);
		SKIP("no tmpfs");
	}
	img_dir = mnt, img_sparse = true, img_policy = policy;
	r = env_up(&e, false, NULL);
	img_dir = "/tmp", img_sparse = false, img_policy = VM_ERROR_REPORT;
	CHECK(r == 0 && port_start(&e) == 0);
	memset(tdrv_ptr(&e.d, DATA), 0x5a, 256 << 10);
	build(&e, 0, 0x35, 64, 512, true, DATA, 256 << 10);
	if (policy == VM_ERROR_REPORT) {
		check_tfe(&e, 0, 0x04); /* status ERR, error ABRT, as QEMU's AHCI */
		port_restart(&e);
	} else if (policy == VM_ERROR_IGNORE) {
		CHECK_EQ_U64(issue(&e, 0) & (1u << 30), 0); /* completed as if written */
	} else {
		/* stop: the VM pauses, the command stays issued, no error; the
		 * host makes room and resumes: the write lands */
		wr(&e, P0 + 0x38, 1);
		for (int i = 0;
		     i < 5000 && __atomic_load_n(&tvm_pauses, __ATOMIC_SEQ_CST) == pauses; i++)
			usleep(1000);
		CHECK(__atomic_load_n(&tvm_pauses, __ATOMIC_SEQ_CST) != pauses);
		CHECK(rd(&e, P0 + 0x38) & 1);
		/* a snapshot now would lose the command: refused, ports let go */
		CHECK_EQ_U64(ahci_freeze(e.ahci), -ENOTSUP);
		CHECK_EQ_U64(rd(&e, P0 + 0x10) & (1u << 30), 0);
		CHECK(!mount("tmpfs", mnt, "tmpfs", MS_REMOUNT, "size=4m"));
		__atomic_add_fetch(&tvm_resumes, 1, __ATOMIC_SEQ_CST);
		CHECK(wait_reg(&e, P0 + 0x38, 1, 0));
		CHECK_EQ_U64(rd(&e, P0 + 0x10) & (1u << 30), 0);
		CHECK(pread(e.fd, back, 512, 64 * 512 + (256 << 10) - 512) == 512);
		CHECK(back[0] == 0x5a && back[511] == 0x5a);
	}
	/* the port goes on: a read of sector 0 */
	build(&e, 1, 0x25, 0, 1, false, DATA + 0x100000, 512);
	CHECK_EQ_U64(issue(&e, 1) & (1u << 30), 0);
	env_down(&e);
	umount(mnt);
	rmdir(mnt);
}

static void test_enospc_report(void)
{
	enospc(VM_ERROR_REPORT);
}

static void test_enospc_ignore(void)
{
	enospc(VM_ERROR_IGNORE);
}

static void test_enospc_stop(void)
{
	enospc(VM_ERROR_STOP);
}

static void test_enospc_enospace(void)
{
	enospc(VM_ERROR_ENOSPACE);
}

/* ---- snapshot (ahci_snap.c) ---------------------------------------------- */

/* The registers a snapshot holds, as the guest reads them. */
#define SNAP_REGS 14
static void snap_regs(struct env *e, uint32_t v[SNAP_REGS])
{
	static const uint32_t off[SNAP_REGS] = {
	    0x04,      0x08,	  P0 + 0x00, P0 + 0x08, P0 + 0x10, P0 + 0x14, P0 + 0x18,
	    P0 + 0x20, P0 + 0x24, P0 + 0x28, P0 + 0x2c, P0 + 0x30, P0 + 0x34, P0 + 0x38};

	for (int i = 0; i < SNAP_REGS; i++)
		v[i] = rd(e, off[i]);
}

/* Load b with the u32 at off (in bytes) xor x: refused, nothing set
 * (the port as the HBA reset left it: no command list). */
static void snap_refused(struct env *e, const struct snap_buf *b, size_t off, uint32_t x)
{
	struct snap_buf bad = {0};
	struct snap_cur c;
	uint32_t v;

	snap_buf_put(&bad, b->p, b->len);
	CHECK(bad.err == 0 && off + 4 <= bad.len);
	memcpy(&v, bad.p + off, 4);
	v ^= x;
	memcpy(bad.p + off, &v, 4);
	c = snap_cur_make(bad.p, bad.len);
	CHECK(ahci_load(e->ahci, &c) < 0);
	CHECK_EQ_U64(rd(e, P0 + 0x00), 0);
	snap_buf_release(&bad);
}

/* Port 0's u32 k in the state: HBA item (8 + 8 bytes), port item header. */
#define PORT0(k) (24u + 4u * (k))

static void test_snapshot(void)
{
	uint32_t before[SNAP_REGS], after[SNAP_REGS];
	struct snap_buf b = {0};
	struct snap_cur c;
	uint8_t *buf, img[4096];
	struct env e;

	CHECK(env_up(&e, false, NULL) == 0);
	CHECK(port_start(&e) == 0);
	buf = tdrv_ptr(&e.d, DATA);
	for (int i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(0x3c ^ i);
	build(&e, 0, 0x35, 8, 8, true, DATA, 4096); /* WRITE DMA EXT */
	CHECK_EQ_U64(issue(&e, 0) & (1u << 30), 0);
	/* held: a READ issued now is not fetched, and is in the snapshot */
	CHECK(ahci_freeze(e.ahci) == 0);
	memset(tdrv_ptr(&e.d, DATA + 0x10000), 0, 4096);
	build(&e, 1, 0x25, 8, 8, false, DATA + 0x10000, 4096); /* READ DMA EXT */
	wr(&e, P0 + 0x38, 1u << 1);
	snap_regs(&e, before);
	CHECK_EQ_U64(before[13], 1u << 1);
	CHECK(ahci_save(e.ahci, &b) == 0 && b.err == 0);
	/* the HBA reset forgets it all; the load brings it back */
	wr(&e, 0x04, 1);
	CHECK_EQ_U64(rd(&e, P0 + 0x00), 0);
	/* planted: state the guest cannot make, another disk */
	snap_refused(&e, &b, 8, 1u << 31);	  /* GHC without AE */
	snap_refused(&e, &b, 12, 1u << 6);	  /* IS of a port there is not */
	snap_refused(&e, &b, PORT0(0), 2);	  /* an ATAPI port */
	snap_refused(&e, &b, PORT0(1), 0x200);	  /* CLB not aligned */
	snap_refused(&e, &b, PORT0(7), 1);	  /* CI while not ST */
	snap_refused(&e, &b, PORT0(7), 1u << 15); /* CR: not the guest's */
	snap_refused(&e, &b, PORT0(9), 1);	  /* another signature */
	snap_refused(&e, &b, PORT0(10), 0x2);	  /* an SSTS never shown */
	snap_refused(&e, &b, PORT0(12), 1);	  /* SERR the HBA never sets */
	snap_refused(&e, &b, PORT0(15), 8);	  /* unknown flags */
	snap_refused(&e, &b, PORT0(16), 0x0602);  /* sense on a disk */
	snap_refused(&e, &b, 24 + 80 + 8, 1);	  /* the disk's size */
	c = snap_cur_make(b.p, b.len - 8);
	CHECK(ahci_load(e.ahci, &c) < 0); /* cut short */
	CHECK_EQ_U64(rd(&e, P0 + 0x00), 0);
	c = snap_cur_make(b.p, b.len);
	CHECK(ahci_load(e.ahci, &c) == 0);
	snap_regs(&e, after);
	for (int i = 0; i < SNAP_REGS; i++)
		CHECK_EQ_U64(after[i], before[i]);
	/* let go, the issued READ runs: the data written before */
	ahci_thaw(e.ahci);
	CHECK(wait_reg(&e, P0 + 0x38, 1u << 1, 0));
	CHECK(memcmp(tdrv_ptr(&e.d, DATA + 0x10000), buf, 4096) == 0);
	/* the image written since the snapshot: refused, naming the disk */
	CHECK(pread(e.fd, img, 512, 0) == 512);
	img[0] ^= 0xff;
	CHECK(pwrite(e.fd, img, 512, 0) == 512);
	wr(&e, 0x04, 1);
	c = snap_cur_make(b.p, b.len);
	CHECK_EQ_U64(ahci_load(e.ahci, &c), -EINVAL);
	CHECK_EQ_U64(rd(&e, P0 + 0x00), 0);
	snap_buf_release(&b);
	env_down(&e);
}

int main(void)
{
	TEST_RUN(test_identify);
	TEST_RUN(test_default_serial);
	TEST_RUN(test_read_write_ncq_trim);
	TEST_RUN(test_read_only_and_range);
	TEST_RUN(test_hostile_driver);
	TEST_RUN(test_enospc_report);
	TEST_RUN(test_enospc_ignore);
	TEST_RUN(test_enospc_stop);
	TEST_RUN(test_enospc_enospace);
	TEST_RUN(test_snapshot);
	return test_summary();
}
