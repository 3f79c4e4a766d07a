/* SPDX-License-Identifier: MIT */
/*
 * volume.h - from a resolved disk (struct vm_disk) to an open block
 * backend (blk.h): the volume provisioning of vmlet.
 *
 * Files the manifest names (hostDisk, PVC, DataVolume) are opened in place;
 * hostDisk DiskOrCreate is created sparse, of its capacity, when missing.
 * A containerDisk is ephemeral, as in KubeVirt: its image is opened
 * read-only (it may live on a read-only filesystem) and the guest's writes
 * go to a copy-on-write overlay in $TMPDIR (else /tmp; an emptyDir in a
 * pod) that is unlinked at once, so every start of the VM sees the image
 * as it is (blk_overlay_open()). emptyDisk gets a sparse temporary file of its
 * capacity (in $TMPDIR, else /tmp) and cloudInitNoCloud /
 * cloudInitConfigDrive a generated seed image (read-only); both are
 * unlinked as soon as they are open, so they vanish when vmlet exits,
 * however it exits. A path given for them on the command line is used
 * instead. Only containerDisk images are probed for their format (raw or
 * qcow2); every other volume is raw, so a guest that writes a qcow2
 * header into its disk cannot make vmlet reinterpret the file on the next
 * boot. Every image is locked as QEMU locks it (blk_lock(): a second
 * writer is refused unless the disk is shareable).
 */
#ifndef VMLET_DISK_VOLUME_H
#define VMLET_DISK_VOLUME_H

#include "vmm/disk/blk.h"

struct vm_config;
struct vm_disk;

/*
 * Open d's backend into *be (blk_close() it); a cdrom's is read-only.
 * Refused, with an error naming the disk: lun devices, a cdrom on a bus
 * other than sata, a disk on buses other than virtio and sata, an empty
 * drive (VM_DISK_NONE: nothing to open),
 * volume kinds vmlet does not support, volumes with no host path.
 * Returns 0 or -errno.
 */
int volume_open(const struct vm_config *cfg, const struct vm_disk *d, struct blk **be);

#endif /* VMLET_DISK_VOLUME_H */
