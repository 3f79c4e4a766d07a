// SPDX-License-Identifier: MIT
/*
 * pflash.c - CFI parallel flash, Intel command set (pflash.h).
 */
#include <errno.h>
#include <string.h>

#include "vmm/dev/pflash.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/log.h"
#include "vmm/vm/device.h"

#define CMD_READ_ARRAY	 0xff
#define CMD_READ_ARRAY2	 0xf0
#define CMD_PROGRAM	 0x10
#define CMD_PROGRAM2	 0x40
#define CMD_ERASE	 0x20
#define CMD_ERASE_OK	 0xd0
#define CMD_CLEAR_STATUS 0x50
#define CMD_READ_STATUS	 0x70
#define CMD_READ_ID	 0x90
#define CMD_CFI		 0x98

int pflash_init(struct pflash *f, uint8_t *array, size_t size, size_t block)
{
	memset(f, 0, sizeof(*f));
	if (!array || block < 512 || (block & (block - 1)) || !size || size % block)
		return -EINVAL;
	f->array = array;
	f->size = size;
	f->block = block;
	f->cmd = CMD_READ_ARRAY;
	pthread_mutex_init(&f->lock, NULL);
	return 0;
}

void pflash_release(struct pflash *f)
{
	if (f->array)
		pthread_mutex_destroy(&f->lock);
	f->array = NULL;
}

/* The CFI query structure, byte-wide device (JESD68 §4). */
static uint8_t pflash_cfi(const struct pflash *f, uint64_t off)
{
	unsigned int log2size = 0;
	uint32_t nblocks = (uint32_t)(f->size / f->block) - 1, bsz = (uint32_t)(f->block >> 8);

	while (((size_t)1 << log2size) < f->size)
		log2size++;
	switch (off) {
	case 0x10:
		return 'Q';
	case 0x11:
		return 'R';
	case 0x12:
		return 'Y';
	case 0x13:
		return 0x01; /* primary command set: Intel/Sharp extended */
	case 0x1b:
		return 0x45; /* Vcc min 4.5 V */
	case 0x1c:
		return 0x55; /* Vcc max 5.5 V */
	case 0x1f:
		return 0x07; /* typical byte program 2^7 us */
	case 0x21:
		return 0x0a; /* typical block erase 2^10 ms */
	case 0x23:
		return 0x04; /* max program: 2^4 x typical */
	case 0x25:
		return 0x04;
	case 0x27:
		return (uint8_t)log2size;
	case 0x2c:
		return 1; /* one erase block region */
	case 0x2d:
		return (uint8_t)nblocks;
	case 0x2e:
		return (uint8_t)(nblocks >> 8);
	case 0x2f:
		return (uint8_t)bsz;
	case 0x30:
		return (uint8_t)(bsz >> 8);
	default:
		return 0;
	}
}

static uint8_t pflash_read_byte(const struct pflash *f, uint64_t off)
{
	switch (f->cmd) {
	case CMD_READ_STATUS:
	case CMD_PROGRAM:
	case CMD_ERASE:
		return f->status;
	case CMD_READ_ID:
		return off == 0 ? PFLASH_MANUFACTURER : off == 1 ? PFLASH_DEVICE_ID : 0;
	case CMD_CFI:
		return pflash_cfi(f, off);
	default:
		return f->array[off];
	}
}

static void pflash_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct pflash *f = dev;
	uint8_t *out = data;

	bool array = f->secure && !device_in_smm();

	pthread_mutex_lock(&f->lock);
	for (uint32_t i = 0; i < len; i++)
		out[i] = off + i >= f->size ? 0xff
			 : array	    ? f->array[off + i]
					    : pflash_read_byte(f, off + i);
	pthread_mutex_unlock(&f->lock);
}

/* A command byte in read-array (or status/ID/CFI) mode. Lock held. */
static void pflash_command(struct pflash *f, uint8_t v)
{
	switch (v) {
	case CMD_READ_ARRAY:
	case CMD_READ_ARRAY2:
		f->cmd = CMD_READ_ARRAY;
		break;
	case CMD_PROGRAM2:
		f->cmd = CMD_PROGRAM;
		f->armed = 1;
		break;
	case CMD_PROGRAM:
	case CMD_ERASE:
		f->cmd = v;
		f->armed = 1;
		break;
	case CMD_CLEAR_STATUS:
		f->status = 0;
		f->cmd = CMD_READ_ARRAY;
		break;
	case CMD_READ_STATUS:
	case CMD_READ_ID:
	case CMD_CFI:
		f->cmd = v;
		break;
	default: /* unknown: ignored */
		break;
	}
}

static void pflash_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	struct pflash *f = dev;
	const uint8_t *in = data;

	pthread_mutex_lock(&f->lock);
	if (f->secure && !device_in_smm()) {
		if (!f->refused++)
			log_warn("pflash: a write to the variable flash from outside SMM was "
				 "refused (0x%llx)",
				 (unsigned long long)off);
	} else if (off >= f->size || len > f->size - off) {
		f->armed = 0; /* outside the array: aborts a program/erase */
	} else if (f->armed && f->cmd == CMD_PROGRAM) {
		memcpy(f->array + off, in, len); /* QEMU's part stores the value as is */
		f->armed = 0;
		f->status |= PFLASH_STATUS_READY;
		f->writes++;
	} else if (f->armed && f->cmd == CMD_ERASE) {
		f->armed = 0;
		if (in[0] == CMD_ERASE_OK) {
			memset(f->array + (off & ~(uint64_t)(f->block - 1)), 0xff, f->block);
			f->status |= PFLASH_STATUS_READY;
			f->erases++;
		} else {
			f->status |=
			    PFLASH_STATUS_READY | PFLASH_STATUS_ERASEER | PFLASH_STATUS_PROGER;
			f->cmd = CMD_READ_STATUS;
		}
	} else {
		f->armed = 0;
		pflash_command(f, in[0]);
	}
	pthread_mutex_unlock(&f->lock);
}

const struct io_ops pflash_ops = {pflash_read, pflash_write};

enum { PFLASH_SNAP_STATE = 1, PFLASH_SNAP_ARRAY };

/* The command state as saved: command, status, armed, 0. */
void pflash_save(struct pflash *f, struct snap_buf *b)
{
	uint8_t st[4];

	pthread_mutex_lock(&f->lock);
	st[0] = f->cmd, st[1] = f->status, st[2] = f->armed, st[3] = 0;
	snap_buf_item(b, PFLASH_SNAP_STATE, st, sizeof(st));
	snap_buf_item(b, PFLASH_SNAP_ARRAY, f->array, f->size);
	pthread_mutex_unlock(&f->lock);
}

/* Why the part cannot be in state st (NULL: it can). */
static const char *pflash_refused(const uint8_t *st)
{
	static const uint8_t cmds[] = {CMD_READ_ARRAY,	CMD_PROGRAM, CMD_ERASE,
				       CMD_READ_STATUS, CMD_READ_ID, CMD_CFI};

	if (!memchr(cmds, st[0], sizeof(cmds)))
		return "a command the part does not have";
	if (st[1] & (uint8_t) ~(PFLASH_STATUS_READY | PFLASH_STATUS_ERASEER | PFLASH_STATUS_PROGER))
		return "status bits the part never sets";
	if (st[2] > 1 || st[3])
		return "a flag is neither 0 nor 1";
	if (st[2] && st[0] != CMD_PROGRAM && st[0] != CMD_ERASE)
		return "data armed without a program or erase";
	return NULL;
}

int pflash_load(struct pflash *f, struct snap_cur *c, bool adopt, const char *name)
{
	struct snap_cur arr;
	uint8_t st[4];
	const char *why;
	int r = 0;

	if (snap_cur_want(c, PFLASH_SNAP_STATE, st, sizeof(st)) ||
	    snap_cur_want_any(c, PFLASH_SNAP_ARRAY, &arr))
		return error_errno(-EBADMSG, "pflash: bad saved state");
	if (arr.left != f->size)
		return error_errno(-EBADMSG, "pflash: the saved %s has %zu bytes, this one %zu",
				   name, arr.left, f->size);
	why = pflash_refused(st);
	if (why)
		return error_errno(-EINVAL, "pflash: saved state refused: %s", why);
	pthread_mutex_lock(&f->lock);
	if (adopt)
		memcpy(f->array, arr.p, f->size);
	else if (memcmp(f->array, arr.p, f->size))
		r = -ESTALE;
	if (!r)
		f->cmd = st[0], f->status = st[1], f->armed = st[2];
	pthread_mutex_unlock(&f->lock);
	if (r)
		return error_errno(r,
				   "restore: %s is not the variable store of the snapshot "
				   "(another file, or written since)",
				   name);
	return 0;
}
