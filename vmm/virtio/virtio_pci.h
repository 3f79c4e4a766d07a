/* SPDX-License-Identifier: MIT */
/*
 * virtio_pci.h - the modern virtio PCI transport (virtio 1.2 §4.1), written
 * once for every virtio device.
 *
 * A device model supplies a static const struct virtio_dev_ops and its own
 * state pointer; the transport owns the PCI function (BAR 0 with the
 * common, ISR, device-config and notify regions plus the MSI-X table),
 * feature negotiation, the status state machine and the virtqueues.
 *
 * Threads: register accesses arrive on vCPU threads and are serialized by
 * the transport. The device's own worker threads may call
 * virtio_pci_queue_interrupt(), virtio_pci_config_interrupt() and
 * virtio_pci_needs_reset() at any time; those take no transport lock, so
 * ops->reset() may wait for the workers while the transport holds its
 * lock.
 *
 * Doorbells: when a device has no ops->notify, each queue's notify address
 * is bound to an eventfd with KVM ioeventfd, and a write that still reaches
 * us (another size, or no ioeventfd) is forwarded to the same eventfd, so
 * the worker sleeps on virtio_pci_kick_fd() only. With ops->notify, kicks
 * are delivered synchronously on the vCPU thread instead.
 * Interrupts: MSI-X through irqfd (one GSI route per vector) honouring the
 * vector masks; INTx (ISR + level line) while MSI-X is disabled.
 */
#ifndef VMLET_VIRTIO_PCI_H
#define VMLET_VIRTIO_PCI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/virtio_config.h> /* VIRTIO_CONFIG_S_*, VIRTIO_F_* */
#include <linux/virtio_ids.h>	 /* VIRTIO_ID_* */
#include <linux/virtio_pci.h>	 /* VIRTIO_PCI_CAP_*, VIRTIO_PCI_COMMON_*, VIRTIO_MSI_NO_VECTOR */

#include "vmm/dev/pci.h"
#include "vmm/virtio/virtqueue.h"

struct vm;
struct guest_mem;
struct snap_buf;
struct snap_cur;

#define VIRTIO_PCI_MAX_QUEUES 32

/* PCI IDs (§4.1.2) */
#define VIRTIO_PCI_VENDOR      0x1af4
#define VIRTIO_PCI_DEVICE_BASE 0x1040

/* BAR 0 layout */
#define VIRTIO_PCI_BAR_SIZE    0x8000u
#define VIRTIO_PCI_COMMON_OFF  0x0000u
#define VIRTIO_PCI_COMMON_LEN  0x38u
#define VIRTIO_PCI_ISR_OFF     0x1000u
#define VIRTIO_PCI_DEVICE_OFF  0x2000u
#define VIRTIO_PCI_DEVICE_LEN  0x1000u
#define VIRTIO_PCI_NOTIFY_OFF  0x3000u
#define VIRTIO_PCI_NOTIFY_MULT 4u
#define VIRTIO_PCI_MSIX_TABLE  0x4000u
#define VIRTIO_PCI_MSIX_PBA    0x5000u

struct virtio_pci;

struct virtio_dev_ops {
	uint16_t device_id;  /* virtio device type: VIRTIO_ID_* */
	uint32_t class_code; /* PCI class for the function */
	/* Device feature bits (the transport adds VERSION_1, EVENT_IDX and
	 * INDIRECT_DESC). */
	uint64_t (*features)(void *dev);
	/* Device-specific config space; off/len already bounds-checked
	 * against config_len. Optional (reads as zero, writes ignored). */
	void (*config_read)(void *dev, uint32_t off, void *data, uint32_t len);
	void (*config_write)(void *dev, uint32_t off, const void *data, uint32_t len);
	/* DRIVER_OK: the enabled queues are valid (virtio_pci_queue());
	 * start the workers. Non-zero fails the device (NEEDS_RESET). */
	int (*activate)(void *dev, struct virtio_pci *vp, uint64_t features);
	/* Optional synchronous kick on the vCPU thread (no ioeventfd). */
	void (*notify)(void *dev, unsigned int queue);
	/* Stop the workers; on return no worker touches a queue any more. */
	void (*reset)(void *dev);
	/* Snapshot (virtio_pci_snap.c), all optional. freeze: hold the
	 * workers as reset() does, keeping every state (each chain a worker
	 * popped is completed first) and make written data durable; thaw:
	 * let them run again (a snapshot with --resume). A started device
	 * without freeze cannot be snapshotted. save/load: the device's
	 * own state beyond the transport's, items of snap_buf.h; load runs
	 * before activate() and checks everything as guest input. */
	void (*freeze)(void *dev);
	void (*thaw)(void *dev);
	int (*save)(void *dev, struct snap_buf *b);
	int (*load)(void *dev, struct snap_cur *c);
};

/*
 * For config_read ops whose config space is a byte image of a struct:
 * copy [off, off+len) of cfg (size bytes) into data, zero past its end.
 */
void virtio_pci_config_copy(const void *cfg, size_t size, uint32_t off, void *data, uint32_t len);

struct virtio_pci_queue {
	uint16_t size, max_size;
	uint16_t vector;
	bool enabled;
	uint64_t desc, driver, device;
	int kick_fd;
	bool ioeventfd; /* bound at the notify address */
	struct virtq vq;
};

struct virtio_pci {
	struct pci_dev pci;
	const struct virtio_dev_ops *ops;
	void *dev;
	struct vm *vm;
	const struct guest_mem *mem;
	char name[32];	      /* for messages: "virtio-blk0" */
	pthread_mutex_t lock; /* transport registers */
	uint32_t config_len;
	uint64_t device_features, driver_features;
	uint32_t dfselect, gfselect;
	uint8_t status; /* atomic: workers OR in NEEDS_RESET */
	uint8_t config_gen;
	uint16_t queue_select, config_vector;
	bool active; /* ops->activate succeeded */
	bool frozen; /* virtio_pci_freeze() held the workers */
	uint8_t isr; /* under isr_lock */
	pthread_mutex_t isr_lock;
	unsigned int nq;
	struct virtio_pci_queue q[VIRTIO_PCI_MAX_QUEUES];
	uint64_t bar_gpa;
	bool bar_mapped;
	unsigned int nvec;	   /* MSI-X vectors: one per queue + config */
	int irq_fd[PCI_MSIX_MAX];  /* irqfd eventfd per vector (made at init) */
	bool routed[PCI_MSIX_MAX]; /* irq_fd bound to an MSI route (atomic) */
	uint32_t gsi[PCI_MSIX_MAX];
};

/*
 * Build the PCI function for ops/dev with nq queues of at most
 * queue_max_size entries and config_len bytes of device config, and add
 * it to host, whose VM handle and guest memory it uses. name is copied.
 * Returns 0 or -errno.
 */
int virtio_pci_init(struct virtio_pci *vp, struct pci_host *host, const char *name,
		    const struct virtio_dev_ops *ops, void *dev, unsigned int nq,
		    uint16_t queue_max_size, uint32_t config_len);
/* Reset the device (ops->reset), unbind doorbells and routes, remove the
 * function from its host and close the eventfds. */
void virtio_pci_release(struct virtio_pci *vp);

/* For workers after activate(): the ring of queue i (NULL if not enabled)
 * and the eventfd the guest's kicks land on. */
struct virtq *virtio_pci_queue(struct virtio_pci *vp, unsigned int i);
int virtio_pci_kick_fd(struct virtio_pci *vp, unsigned int i);

/*
 * The consumer loop a device runs when queue i is kicked: with kicks
 * suppressed, pop every chain and hand it to serve(), which must
 * virtq_push() it (good is false for a VIRTQ_POP_BAD chain: complete it
 * with length 0); interrupt the driver if it wants one; repeat until no
 * buffer arrived while kicks were re-enabled. e brings the caller's iovec
 * arrays. Returns 0 (also when the queue is not enabled), or -EIO when
 * the driver broke the ring (NEEDS_RESET is then set).
 */
int virtio_pci_drain(struct virtio_pci *vp, unsigned int i, struct virtq_elem *e,
		     void (*serve)(void *opaque, struct virtq *q, struct virtq_elem *e, bool good),
		     void *opaque);

/* Raise queue i's interrupt (MSI-X vector or INTx + ISR bit 0). */
void virtio_pci_queue_interrupt(struct virtio_pci *vp, unsigned int i);
/* Raise the configuration-change interrupt (ISR bit 1). */
void virtio_pci_config_interrupt(struct virtio_pci *vp);
/* The device hit a broken ring: set NEEDS_RESET and tell the driver. */
void virtio_pci_needs_reset(struct virtio_pci *vp);

/* The transport of PCI function d, NULL when d is not a virtio function. */
struct virtio_pci *virtio_pci_of(struct pci_dev *d);

/*
 * Snapshot (virtio_pci_snap.c, docs/snapshot.md): freeze() holds a
 * started device's workers (ops->freeze; -ENOTSUP, logged, when it has
 * none), save() writes the transport's registers, each queue's ring
 * indices and the device's own state (ops->save), thaw() lets the
 * workers go on. load() is called between pci_dev_load() and
 * pci_dev_resync() and checks every value as the guest's (-EBADMSG);
 * start() after the resync activates a device the driver had started.
 */
int virtio_pci_freeze(struct virtio_pci *vp);
void virtio_pci_thaw(struct virtio_pci *vp);
int virtio_pci_save(struct virtio_pci *vp, struct snap_buf *b);
int virtio_pci_load(struct virtio_pci *vp, struct snap_cur *c);
int virtio_pci_start(struct virtio_pci *vp);

/* BAR 0 accesses as the guest makes them (used by tests too). */
extern const struct io_ops virtio_pci_bar_ops;

#endif /* VMLET_VIRTIO_PCI_H */
