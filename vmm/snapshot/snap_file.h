/* SPDX-License-Identifier: MIT */
/*
 * snap_file.h - the snapshot's state file, DIR/state (docs/snapshot.md):
 * a header, then sections (type, id, length, CRC-32C of the bytes), the
 * last one SNAP_SEC_END. Guest memory is the separate sparse file
 * DIR/memory that the SNAP_SEC_MEMORY section describes.
 *
 * snap_file_parse() checks the whole file before anything is used: the
 * magic, the version, the header's own CRC, every section's bounds,
 * padding and CRC, known types only, an END section last and nothing
 * after it. A file that fails gets one clear message in err (what, and at
 * which offset) and -EBADMSG (-ENOTSUP for another format version); the
 * bytes are never trusted beyond what was checked.
 */
#ifndef VMLET_SNAP_FILE_H
#define VMLET_SNAP_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "vmm/snapshot/snap_buf.h"

#define SNAP_MAGIC	  "VMLTSNAP"
#define SNAP_VERSION	  1u
#define SNAP_HEADER_SIZE  72u
#define SNAP_SECTION_HDR  24u
#define SNAP_MAX_SECTIONS 4096u
#define SNAP_MAX_STATE	  (256u << 20) /* bytes of DIR/state */
#define SNAP_WRITER	  "vmlet snapshot 1"
#define SNAP_STATE_FILE	  "state"
#define SNAP_MEMORY_FILE  "memory"

enum snap_section_type {
	SNAP_SEC_CONFIG = 1, /* the resolved config as `resolve -o config` JSON */
	SNAP_SEC_MEMORY = 2, /* guest RAM regions in DIR/memory */
	SNAP_SEC_VM = 3,     /* KVM clock, PIC, IOAPIC, PIT */
	SNAP_SEC_VCPU = 4,   /* one vCPU (id: its index) */
	SNAP_SEC_DEVICE = 5, /* one device instance (id: its table position) */
	SNAP_SEC_INPUT = 6,  /* the manifests the config came from (snap_input.h);
			      * optional */
	SNAP_SEC_END = 0xffff,
};

struct snap_header {
	uint32_t version;
	uint32_t vendor; /* enum arch_cpu_vendor of the guest */
	uint32_t n_vcpus;
	uint64_t memory_bytes;
	uint64_t xcr0;	   /* the XSAVE features the vCPUs had enabled */
	char writer[24];   /* NUL-terminated */
	uint32_t features; /* SNAP_FEAT_* the restore needs from the host */
};

/* What the restoring host must offer. */
#define SNAP_FEAT_XSAVE	 (1u << 0) /* vCPU state in KVM_GET_XSAVE form */
#define SNAP_FEAT_SREGS2 (1u << 1) /* sregs in KVM_GET_SREGS2 form */

struct snap_section {
	uint32_t type, id;
	const uint8_t *data;
	size_t len;
	size_t offset; /* of its header in the file, for messages */
};

struct snap_file {
	struct snap_header hdr;
	struct snap_section *sec;
	unsigned int n;
};

/* Writer: the header, sections, then the END section. Errors accumulate
 * in b->err. */
void snap_file_begin(struct snap_buf *b, const struct snap_header *h);
void snap_file_section(struct snap_buf *b, uint32_t type, uint32_t id, const void *data,
		       size_t len);
void snap_file_end(struct snap_buf *b);

/* Check data[0, len) (see above) and index its sections (which point into
 * data: keep it while f is used). 0, -EBADMSG or -ENOTSUP with err set,
 * -ENOMEM. */
int snap_file_parse(const void *data, size_t len, struct snap_file *f, char *err, size_t errlen);
/* The section of type and id, NULL when there is none. */
const struct snap_section *snap_file_find(const struct snap_file *f, uint32_t type, uint32_t id);
void snap_file_release(struct snap_file *f);

#endif /* VMLET_SNAP_FILE_H */
