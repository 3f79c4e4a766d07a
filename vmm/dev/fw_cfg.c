// SPDX-License-Identifier: MIT
/*
 * fw_cfg.c - the firmware configuration interface (fw_cfg.h) and its entry
 * in the device table: present in VMs that boot through a BIOS firmware
 * (VM_BOOT_BIOS) or OVMF; vmm/boot/bios_boot.c or vmm/boot/ovmf_boot.c fills it
 * before the guest runs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/vm/bus.h"
#include "vmm/dev/devices.h"
#include "vmm/dev/fw_cfg.h"
#include "vmm/vm/device.h"
#include "vmm/vm/guest_mem.h"
#include "vmm/util/log.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/vm_config.h"

#define FW_CFG_DMA_SIGNATURE 0x51454d5520434647ull /* "QEMU CFG" */
#define FW_CFG_MAX_ITEMS     32
#define FW_CFG_DIR_ENTRY     64 /* be32 size, be16 select, u16, name[56] */

struct fw_cfg_item {
	uint16_t key;
	uint8_t *data;
	size_t len;
	struct fw_cfg_file_cb cb; /* files only (fw_cfg_add_file_cb) */
};

struct fw_cfg {
	struct guest_mem *mem;
	struct bus *pio;
	pthread_mutex_t lock;
	struct fw_cfg_item items[FW_CFG_MAX_ITEMS];
	unsigned int n_items;
	struct fw_cfg_item files[FW_CFG_MAX_FILES];
	char names[FW_CFG_MAX_FILES][FW_CFG_NAME_MAX];
	unsigned int n_files;
	uint8_t *dir; /* FW_CFG_FILE_DIR, rebuilt on each fw_cfg_add_file() */
	size_t dir_len;
	uint16_t sel;
	size_t off;
	uint64_t dma_addr; /* as written, host order */
	bool warned;
};

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int item_set(struct fw_cfg_item *it, uint16_t key, const void *data, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	if (len)
		memcpy(copy, data, len);
	free(it->data);
	it->key = key;
	it->data = copy; /* (cppcheck took the compound literal for a leak) */
	it->len = len;
	return 0;
}

int fw_cfg_create(struct fw_cfg **out, struct guest_mem *mem)
{
	static const uint32_t id = FW_CFG_VERSION | FW_CFG_VERSION_DMA; /* little-endian */
	struct fw_cfg *fc = calloc(1, sizeof(*fc));
	int r;

	if (!fc)
		return -ENOMEM;
	fc->mem = mem;
	pthread_mutex_init(&fc->lock, NULL);
	r = item_set(&fc->items[fc->n_items++], FW_CFG_SIGNATURE, "QEMU", 4);
	if (!r)
		r = item_set(&fc->items[fc->n_items++], FW_CFG_ID, &id, 4);
	if (r) {
		fw_cfg_destroy(fc);
		return r;
	}
	*out = fc;
	return 0;
}

void fw_cfg_destroy(struct fw_cfg *fc)
{
	if (!fc)
		return;
	if (fc->pio)
		bus_unregister(fc->pio, FW_CFG_PORT_SEL);
	for (unsigned int i = 0; i < fc->n_items; i++)
		free(fc->items[i].data);
	for (unsigned int i = 0; i < fc->n_files; i++)
		free(fc->files[i].data);
	free(fc->dir);
	pthread_mutex_destroy(&fc->lock);
	free(fc);
}

int fw_cfg_add_item(struct fw_cfg *fc, uint16_t key, const void *data, size_t len)
{
	unsigned int i;

	if (key == FW_CFG_SIGNATURE || key == FW_CFG_ID || key == FW_CFG_FILE_DIR ||
	    (key >= FW_CFG_FILE_FIRST && key < 0x4000) || (!data && len))
		return -EINVAL;
	for (i = 0; i < fc->n_items; i++)
		if (fc->items[i].key == key)
			return item_set(&fc->items[i], key, data, len);
	if (fc->n_items == FW_CFG_MAX_ITEMS)
		return -ENOSPC;
	if (item_set(&fc->items[i], key, data, len))
		return -ENOMEM;
	fc->n_items++;
	return 0;
}

/* The directory: be32 count, then per file be32 size, be16 key, 2 bytes
 * reserved and the NUL-padded name. */
static int fw_cfg_build_dir(struct fw_cfg *fc)
{
	size_t len = 4 + (size_t)fc->n_files * FW_CFG_DIR_ENTRY;
	uint8_t *d = calloc(1, len);

	if (!d)
		return -ENOMEM;
	put_be32(d, fc->n_files);
	for (unsigned int i = 0; i < fc->n_files; i++) {
		uint8_t *e = d + 4 + (size_t)i * FW_CFG_DIR_ENTRY;

		put_be32(e, (uint32_t)fc->files[i].len);
		put_be16(e + 4, fc->files[i].key);
		memcpy(e + 8, fc->names[i], FW_CFG_NAME_MAX);
	}
	free(fc->dir);
	fc->dir = d;
	fc->dir_len = len;
	return 0;
}

int fw_cfg_add_file_cb(struct fw_cfg *fc, const char *name, const void *data, size_t len,
		       const struct fw_cfg_file_cb *cb)
{
	int r = fw_cfg_add_file(fc, name, data, len);

	if (!r)
		fc->files[fc->n_files - 1].cb = *cb;
	return r;
}

int fw_cfg_add_file(struct fw_cfg *fc, const char *name, const void *data, size_t len)
{
	unsigned int i = fc->n_files;
	int r;

	if (!name || !*name || strlen(name) >= FW_CFG_NAME_MAX || (!data && len) ||
	    len > UINT32_MAX)
		return -EINVAL;
	for (unsigned int k = 0; k < fc->n_files; k++)
		if (!strcmp(fc->names[k], name))
			return -EINVAL;
	if (i == FW_CFG_MAX_FILES)
		return -ENOSPC;
	r = item_set(&fc->files[i], (uint16_t)(FW_CFG_FILE_FIRST + i), data, len);
	if (r)
		return r;
	fc->files[i].cb = (struct fw_cfg_file_cb){0};
	memset(fc->names[i], 0, FW_CFG_NAME_MAX);
	strcpy(fc->names[i], name);
	fc->n_files++;
	r = fw_cfg_build_dir(fc);
	if (r) {
		free(fc->files[i].data);
		fc->files[i] = (struct fw_cfg_item){0};
		fc->n_files--;
	}
	return r;
}

/* The selected item's bytes (NULL, 0 for an unknown key). Lock held. */
static const uint8_t *fw_cfg_cur(const struct fw_cfg *fc, size_t *len)
{
	*len = 0;
	if (fc->sel == FW_CFG_FILE_DIR) {
		*len = fc->dir_len;
		return fc->dir;
	}
	if (fc->sel >= FW_CFG_FILE_FIRST && fc->sel < FW_CFG_FILE_FIRST + fc->n_files) {
		*len = fc->files[fc->sel - FW_CFG_FILE_FIRST].len;
		return fc->files[fc->sel - FW_CFG_FILE_FIRST].data;
	}
	for (unsigned int i = 0; i < fc->n_items; i++)
		if (fc->items[i].key == fc->sel) {
			*len = fc->items[i].len;
			return fc->items[i].data;
		}
	return NULL;
}

/* Move n bytes of the selected item from the current offset to dst (NULL:
 * skip); zeros past its end. Lock held. */
static void fw_cfg_take(struct fw_cfg *fc, uint8_t *dst, size_t n)
{
	size_t len, have;
	const uint8_t *src = fw_cfg_cur(fc, &len);

	have = fc->off < len ? len - fc->off : 0;
	if (have > n)
		have = n;
	if (dst) {
		if (have)
			memcpy(dst, src + fc->off, have);
		memset(dst + have, 0, n - have);
	}
	fc->off = fc->off + n < fc->off ? SIZE_MAX : fc->off + n;
}

/* The file selected now, if it has callbacks (NULL). Lock held. */
static struct fw_cfg_item *fw_cfg_cb_file(struct fw_cfg *fc)
{
	struct fw_cfg_item *it;

	if (fc->sel < FW_CFG_FILE_FIRST || fc->sel >= FW_CFG_FILE_FIRST + fc->n_files)
		return NULL;
	it = &fc->files[fc->sel - FW_CFG_FILE_FIRST];
	return it->cb.select || it->cb.written ? it : NULL;
}

/* The guest selected key. Lock held. */
static void fw_cfg_select(struct fw_cfg *fc, uint16_t key)
{
	struct fw_cfg_item *it;

	fc->sel = key;
	fc->off = 0;
	it = fw_cfg_cb_file(fc);
	if (it && it->cb.select)
		it->cb.select(it->cb.opaque, it->data, it->len);
}

/* A DMA write of length bytes from guest address addr at the current
 * offset: only into a file with a written callback, only within it. 0 or
 * FW_CFG_DMA_ERROR. Lock held. */
static uint32_t fw_cfg_dma_write(struct fw_cfg *fc, uint64_t addr, uint32_t length)
{
	struct fw_cfg_item *it = fw_cfg_cb_file(fc);
	const uint8_t *src = length ? guest_mem_ptr(fc->mem, addr, length) : NULL;

	if (!it || !it->cb.written || (length && !src) || fc->off > it->len ||
	    length > it->len - fc->off)
		return FW_CFG_DMA_ERROR;
	if (length)
		memcpy(it->data + fc->off, src, length);
	fc->off += length;
	it->cb.written(it->cb.opaque, it->data, it->len);
	return 0;
}

/* One DMA request whose descriptor is at gpa. Lock held. */
static void fw_cfg_dma(struct fw_cfg *fc, uint64_t gpa)
{
	uint8_t *desc = guest_mem_ptr(fc->mem, gpa, 16), *buf;
	uint32_t control, length, done = 0;
	uint64_t addr;

	if (!desc) {
		if (!fc->warned)
			log_warn("fw_cfg: DMA descriptor at 0x%llx is not in guest RAM",
				 (unsigned long long)gpa);
		fc->warned = true;
		return;
	}
	control = get_be32(desc);
	length = get_be32(desc + 4);
	addr = (uint64_t)get_be32(desc + 8) << 32 | get_be32(desc + 12);
	if (control & FW_CFG_DMA_SELECT)
		fw_cfg_select(fc, (uint16_t)(control >> 16));
	if (control & FW_CFG_DMA_WRITE) {
		done = fw_cfg_dma_write(fc, addr, length);
	} else if (control & FW_CFG_DMA_READ) {
		buf = length ? guest_mem_ptr(fc->mem, addr, length) : NULL;
		if (length && !buf)
			done = FW_CFG_DMA_ERROR;
		else
			fw_cfg_take(fc, buf, length);
	} else if (control & FW_CFG_DMA_SKIP) {
		fw_cfg_take(fc, NULL, length);
	}
	/* the guest polls control: publish it last, after the data */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	put_be32(desc, done);
}

void fw_cfg_pio_read(struct fw_cfg *fc, uint16_t port, void *data, uint32_t len)
{
	uint8_t *out = data;

	memset(data, 0xff, len);
	pthread_mutex_lock(&fc->lock);
	if (port == FW_CFG_PORT_DATA) {
		fw_cfg_take(fc, out, len);
	} else if (port >= FW_CFG_PORT_DMA && port + len <= FW_CFG_PORT_DMA + 8u) {
		/* big-endian: byte i of the register is byte 7 - i of the value */
		for (uint32_t i = 0; i < len; i++)
			out[i] = (uint8_t)(FW_CFG_DMA_SIGNATURE >>
					   (8 * (7 - (port - FW_CFG_PORT_DMA) - i)));
	}
	pthread_mutex_unlock(&fc->lock);
}

void fw_cfg_pio_write(struct fw_cfg *fc, uint16_t port, const void *data, uint32_t len)
{
	const uint8_t *in = data;
	uint16_t key;

	pthread_mutex_lock(&fc->lock);
	if (port == FW_CFG_PORT_SEL && len == 2) {
		memcpy(&key, data, 2);
		fw_cfg_select(fc, key);
	} else if (port >= FW_CFG_PORT_DMA && port + len <= FW_CFG_PORT_DMA + 8u) {
		unsigned int at = port - FW_CFG_PORT_DMA;

		for (uint32_t i = 0; i < len; i++) {
			unsigned int shift = 8 * (7 - (at + i));

			fc->dma_addr = (fc->dma_addr & ~(0xffull << shift)) | (uint64_t)in[i]
										  << shift;
		}
		/* a write that ends with the last byte of the low half starts it */
		if (at + len == 8) {
			fw_cfg_dma(fc, fc->dma_addr);
			fc->dma_addr = 0;
		}
	}
	pthread_mutex_unlock(&fc->lock);
}

static void fw_cfg_bus_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	fw_cfg_pio_read(dev, (uint16_t)(FW_CFG_PORT_SEL + off), data, len);
}

static void fw_cfg_bus_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	fw_cfg_pio_write(dev, (uint16_t)(FW_CFG_PORT_SEL + off), data, len);
}

static const struct io_ops fw_cfg_ops = {fw_cfg_bus_read, fw_cfg_bus_write};

int fw_cfg_register(struct fw_cfg *fc, struct bus *pio)
{
	int r = bus_register(pio, FW_CFG_PORT_SEL, FW_CFG_PORT_DMA + 8 - FW_CFG_PORT_SEL,
			     &fw_cfg_ops, fc);

	if (r)
		return error_errno(r, "fw_cfg: cannot claim ports 0x510-0x51b");
	fc->pio = pio;
	return 0;
}

/* ---- the device table's entry ------------------------------------------- */

static int fw_cfg_dev_create(const struct device_env *env, unsigned int index, void **state)
{
	struct fw_cfg *fc = NULL;
	int r;

	(void)index;
	if (env->cfg->boot != VM_BOOT_BIOS && !(env->fw && env->fw->flash_code))
		return 0; /* BIOS and OVMF VMs only */
	r = fw_cfg_create(&fc, env->mem);
	if (!r)
		r = fw_cfg_register(fc, env->pio);
	if (r) {
		fw_cfg_destroy(fc);
		return r;
	}
	device_set_fw_cfg(env->vm, fc);
	*state = fc;
	return 0;
}

static void fw_cfg_dev_destroy(void *state)
{
	fw_cfg_destroy(state);
}

/*
 * Snapshot: the selector, offset and DMA address, and every item and file
 * the boot code added (a restore does not run it: the firmware may still
 * read them, Linux's qemu_fw_cfg too). Loaded only into a fresh device,
 * through fw_cfg_add_item() and fw_cfg_add_file(), which refuse the keys
 * and names they refuse from the boot code.
 */
enum { FWCFG_SNAP_REGS = 1, FWCFG_SNAP_ITEM, FWCFG_SNAP_FILE };

static int fw_cfg_save(void *state, struct snap_buf *b)
{
	struct fw_cfg *fc = state;
	uint64_t r[3];

	pthread_mutex_lock(&fc->lock);
	r[0] = fc->sel, r[1] = fc->off, r[2] = fc->dma_addr;
	snap_buf_item(b, FWCFG_SNAP_REGS, r, sizeof(r));
	for (unsigned int i = 0; i < fc->n_items; i++) {
		const struct fw_cfg_item *it = &fc->items[i];
		size_t m;

		if (it->key == FW_CFG_SIGNATURE || it->key == FW_CFG_ID)
			continue; /* every fw_cfg has them */
		m = snap_buf_open(b, FWCFG_SNAP_ITEM);
		snap_buf_u32(b, it->key);
		snap_buf_put(b, it->data, it->len);
		snap_buf_close(b, m);
	}
	for (unsigned int i = 0; i < fc->n_files; i++) {
		size_t m = snap_buf_open(b, FWCFG_SNAP_FILE);

		snap_buf_put(b, fc->names[i], FW_CFG_NAME_MAX);
		snap_buf_put(b, fc->files[i].data, fc->files[i].len);
		snap_buf_close(b, m);
	}
	pthread_mutex_unlock(&fc->lock);
	return b->err;
}

static int fw_cfg_load(void *state, struct snap_cur *c)
{
	struct fw_cfg *fc = state;
	struct snap_cur body;
	char name[FW_CFG_NAME_MAX];
	uint32_t tag, key;
	uint64_t r[3];
	int ret = 0;

	if (snap_cur_want(c, FWCFG_SNAP_REGS, r, sizeof(r)) || r[0] > 0xffff)
		return -EBADMSG;
	if (fc->n_files || fc->n_items != 2)
		return -EINVAL; /* not a fresh device */
	while (!ret && c->left) {
		if (snap_cur_next(c, &tag, &body))
			return -EBADMSG;
		if (tag == FWCFG_SNAP_ITEM && !snap_cur_u32(&body, &key) && key <= 0xffff)
			ret = fw_cfg_add_item(fc, (uint16_t)key, body.p, body.left);
		else if (tag == FWCFG_SNAP_FILE && !snap_cur_bytes(&body, name, sizeof(name)) &&
			 memchr(name, 0, sizeof(name)))
			ret = fw_cfg_add_file(fc, name, body.p, body.left);
		else
			ret = -EBADMSG;
	}
	if (ret)
		return ret == -ENOMEM ? ret : -EBADMSG;
	pthread_mutex_lock(&fc->lock);
	fc->sel = (uint16_t)r[0];
	fc->off = (size_t)r[1];
	fc->dma_addr = r[2];
	pthread_mutex_unlock(&fc->lock);
	return 0;
}

const struct device_type fw_cfg_device = {
    .name = "fw_cfg",
    .create = fw_cfg_dev_create,
    .destroy = fw_cfg_dev_destroy,
    .save = fw_cfg_save,
    .load = fw_cfg_load,
};
