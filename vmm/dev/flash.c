// SPDX-License-Identifier: MIT
/*
 * flash.c - an OVMF VM's code and variable flash below 4 GiB (flash.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arch/x86_64/layout.h"
#include "vmm/dev/flash.h"
#include "vmm/dev/pflash.h"
#include "vmm/snapshot/snap_buf.h"
#include "vmm/util/file.h"
#include "vmm/util/log.h"

struct flash {
	struct bus *mmio;
	uint8_t *code, *vars;
	size_t code_size, vars_size;
	int vars_fd;
	uint64_t code_gpa, vars_gpa;
	struct pflash pf;
	bool pf_registered, code_registered;
	bool vars_fresh;       /* the store was made anew for this run */
	const char *vars_path; /* device_firmware's: outlives the VM */
};

/* Writes into the read-only code slot: dropped, as by a ROM. */
static void flash_rom_read(void *dev, uint64_t off, void *data, uint32_t len)
{
	struct flash *f = dev;

	if (off + len <= f->code_size)
		memcpy(data, f->code + off, len);
	else
		memset(data, 0xff, len);
}

static void flash_rom_write(void *dev, uint64_t off, const void *data, uint32_t len)
{
	(void)dev, (void)data;
	log_warn_once("flash: the guest wrote %u bytes into the firmware's code at +0x%llx "
		      "(read-only: dropped)",
		      len, (unsigned long long)off);
}

static const struct io_ops flash_rom_ops = {flash_rom_read, flash_rom_write};

static int flash_file_size(int fd, const char *path, size_t *size)
{
	struct stat st;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return error_errno(-EINVAL, "flash: '%s' is not a regular file", path);
	if (!st.st_size || st.st_size % FLASH_BLOCK || (uint64_t)st.st_size > ARCH_FLASH_MAX)
		return error_errno(-EINVAL,
				   "flash: '%s' is not a firmware flash image (a multiple of 4 "
				   "KiB, at most %llu MiB: %lld bytes)",
				   path, ARCH_FLASH_MAX >> 20, (long long)st.st_size);
	*size = (size_t)st.st_size;
	return 0;
}

/* Copy the template to path (through a new file beside it, O_EXCL, renamed
 * over path: a link planted at either name is never followed). Returns
 * the new file's descriptor (O_RDWR), used as it is, or -errno. */
static int flash_vars_create(const char *path, const char *tmpl)
{
	uint8_t buf[65536];
	char *tmp = NULL;
	ssize_t n = 0;
	int in, out, r = 0;

	in = open(tmpl, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return error_errno(-errno,
				   "ovmf: no variable store template %s (Debian package 'ovmf': "
				   "apt-get install ovmf)",
				   tmpl);
	out = file_replace_begin(path, 0600, &tmp);
	if (out < 0) {
		r = error_errno(out, "ovmf: cannot create the variable store %s", path);
		goto out;
	}
	while (!r && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			r = -EIO;
	if (n < 0)
		r = -errno;
	r = file_replace_commit(out, &tmp, path, r);
	if (r) {
		close(out);
		error_errno(r, "ovmf: cannot write the variable store %s", path);
	} else {
		log_info("ovmf: variable store %s created from %s", path, tmpl);
	}
out:
	close(in);
	return r ? r : out;
}

static int flash_open_vars(struct flash *f, const struct device_firmware *o)
{
	static const struct file_where w = {.follow = false}; /* a regular file */
	struct stat st;
	size_t want = 0;
	int r;

	f->vars_fd = o->flash_vars_fresh ? -ENOENT : file_open(&w, o->flash_vars, O_RDWR);
	if (f->vars_fd == -ENOENT)
		f->vars_fd = flash_vars_create(o->flash_vars, o->flash_vars_template);
	else if (f->vars_fd < 0)
		error_errno(f->vars_fd, "ovmf: cannot open the variable store %s%s", o->flash_vars,
			    file_why(f->vars_fd));
	if (f->vars_fd < 0) {
		r = f->vars_fd;
		f->vars_fd = -1;
		return r;
	}
	if (!stat(o->flash_vars_template, &st))
		want = (size_t)st.st_size;
	r = flash_file_size(f->vars_fd, o->flash_vars, &f->vars_size);
	if (!r && want && f->vars_size != want)
		r = error_errno(-EINVAL,
				"ovmf: the variable store %s has %zu bytes, but this firmware's "
				"(%s) has %zu: remove it to start from the template, or give "
				"--efi-vars another file",
				o->flash_vars, f->vars_size, o->flash_vars_template, want);
	if (r)
		return r;
	f->vars = mmap(NULL, f->vars_size, PROT_READ | PROT_WRITE, MAP_SHARED, f->vars_fd, 0);
	if (f->vars == MAP_FAILED) {
		f->vars = NULL;
		return error_errno(-errno, "ovmf: cannot map %s", o->flash_vars);
	}
	return 0;
}

static int flash_open_code(struct flash *f, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0 && errno == ENOENT)
		return error_errno(-ENOENT,
				   "ovmf: no firmware image %s (Debian package 'ovmf': apt-get "
				   "install ovmf)",
				   path);
	if (fd < 0)
		return error_errno(-errno, "ovmf: cannot open the firmware image %s", path);
	r = flash_file_size(fd, path, &f->code_size);
	if (!r) {
		f->code = mmap(NULL, f->code_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
		if (f->code == MAP_FAILED) {
			f->code = NULL;
			r = error_errno(-errno, "ovmf: cannot map %s", path);
		}
	}
	close(fd);
	return r;
}

static void flash_destroy(void *state)
{
	struct flash *f = state;

	if (!f)
		return;
	if (f->pf_registered)
		bus_unregister(f->mmio, f->vars_gpa);
	if (f->code_registered)
		bus_unregister(f->mmio, f->code_gpa);
	pflash_release(&f->pf);
	if (f->vars) {
		if (f->vars_fd >= 0 && fdatasync(f->vars_fd))
			log_warn("ovmf: cannot sync the variable store: %s", strerror(errno));
		munmap(f->vars, f->vars_size);
	}
	if (f->code)
		munmap(f->code, f->code_size);
	if (f->vars_fd >= 0)
		close(f->vars_fd);
	free(f);
}

static void flash_quiesce(void *state)
{
	struct flash *f = state;

	if (f->vars_fd >= 0 && fdatasync(f->vars_fd))
		log_warn("ovmf: cannot sync the variable store: %s", strerror(errno));
}

static int flash_map(struct flash *f, const struct device_env *env)
{
	int r;

	if (f->code_size + f->vars_size > ARCH_FLASH_MAX)
		return error_errno(-EFBIG, "ovmf: code and variables exceed %llu MiB of flash",
				   ARCH_FLASH_MAX >> 20);
	f->code_gpa = ARCH_FLASH_END - f->code_size;
	f->vars_gpa = f->code_gpa - f->vars_size;
	r = pflash_init(&f->pf, f->vars, f->vars_size, FLASH_BLOCK);
	f->pf.secure = env->fw->smm; /* QEMU's secure=on: SMM alone writes it */
	if (!r)
		r = device_map_rom(env->vm, 0, f->code_gpa, f->code_size, f->code);
	if (!r) {
		r = bus_register(env->mmio, f->code_gpa, f->code_size, &flash_rom_ops, f);
		f->code_registered = !r;
	}
	if (!r) {
		r = bus_register(env->mmio, f->vars_gpa, f->vars_size, &pflash_ops, &f->pf);
		f->pf_registered = !r;
	}
	if (r)
		return error_errno(r, "ovmf: cannot map the flash at 0x%llx",
				   (unsigned long long)f->vars_gpa);
	log_debug("ovmf: variables at 0x%llx (%zu KiB), code at 0x%llx (%zu KiB)",
		  (unsigned long long)f->vars_gpa, f->vars_size >> 10,
		  (unsigned long long)f->code_gpa, f->code_size >> 10);
	return 0;
}

static int flash_create(const struct device_env *env, unsigned int index, void **state)
{
	const struct device_firmware *o = env->fw;
	struct flash *f;
	int r;

	(void)index;
	if (!o || !o->flash_code)
		return 0;
	if (!o->flash_vars || !o->flash_vars_template)
		return error_errno(-EINVAL, "ovmf: no variable store file");
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->mmio = env->mmio;
	f->vars_fd = -1;
	f->vars_fresh = o->flash_vars_fresh;
	f->vars_path = o->flash_vars;
	r = flash_open_code(f, o->flash_code);
	if (!r)
		r = flash_open_vars(f, o);
	if (!r)
		r = flash_map(f, env);
	if (r) {
		flash_destroy(f);
		return r;
	}
	*state = f;
	return 0;
}

enum { FLASH_SNAP_CODE = 1 };

/* The code image's identity: its size and CRC-32C (u64, u32, u32 0). */
static void flash_code_id(const struct flash *f, uint8_t id[16])
{
	uint64_t size = f->code_size;
	uint32_t crc = snap_crc32c(0, f->code, f->code_size), zero = 0;

	memcpy(id, &size, 8);
	memcpy(id + 8, &crc, 4);
	memcpy(id + 12, &zero, 4);
}

/* The code image's identity, the variable flash's command state and the
 * store's bytes. */
static int flash_save(void *state, struct snap_buf *b)
{
	struct flash *f = state;
	uint8_t id[16];

	flash_code_id(f, id);
	snap_buf_item(b, FLASH_SNAP_CODE, id, sizeof(id));
	pflash_save(&f->pf, b);
	return b->err;
}

/* The same firmware code; a store made anew for this run (no
 * efi.persistent) takes the saved bytes, a kept one must hold them. */
static int flash_load(void *state, struct snap_cur *c)
{
	struct flash *f = state;
	uint8_t id[16], saved[16];

	if (snap_cur_want(c, FLASH_SNAP_CODE, saved, sizeof(saved)))
		return error_errno(-EBADMSG, "flash: bad saved firmware identity");
	flash_code_id(f, id);
	if (memcmp(id, saved, sizeof(id)))
		return error_errno(-ESTALE,
				   "restore: the firmware image is not the one the snapshot "
				   "ran (another OVMF build)");
	return pflash_load(&f->pf, c, f->vars_fresh, f->vars_path);
}

const struct device_type flash_device = {
    .name = "flash",
    .create = flash_create,
    .quiesce = flash_quiesce,
    .destroy = flash_destroy,
    .save = flash_save,
    .load = flash_load,
};
