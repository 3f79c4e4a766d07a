/* SPDX-License-Identifier: MIT */
/*
 * virtio_spec.h - the virtio 1.2 names the guest code uses, in one place.
 * The host side takes the same facts from the kernel's uapi headers
 * (<linux/virtio_*.h>); firmware/ is freestanding and may not include
 * them, so this is its one copy. Feature bits are masks here (the guest
 * code only tests and offers them).
 */
#ifndef FW_LIB_VIRTIO_SPEC_H
#define FW_LIB_VIRTIO_SPEC_H

/* PCI IDs of the modern transport (§4.1.2): 0x1040 + device type */
#define FW_VIRTIO_VENDOR      0x1af4
#define FW_VIRTIO_DEV_NET     0x1041
#define FW_VIRTIO_DEV_BLK     0x1042
#define FW_VIRTIO_DEV_RNG     0x1044
#define FW_VIRTIO_DEV_BALLOON 0x1045

/* vendor capability types (§4.1.4) */
#define FW_VIRTIO_PCI_CAP_COMMON_CFG 1
#define FW_VIRTIO_PCI_CAP_NOTIFY_CFG 2
#define FW_VIRTIO_PCI_CAP_ISR_CFG    3
#define FW_VIRTIO_PCI_CAP_DEVICE_CFG 4

/* the common configuration structure's offsets (§4.1.4.3) */
#define FW_VIRTIO_COMMON_DFSELECT 0x00
#define FW_VIRTIO_COMMON_DF	  0x04
#define FW_VIRTIO_COMMON_GFSELECT 0x08
#define FW_VIRTIO_COMMON_GF	  0x0c
#define FW_VIRTIO_COMMON_STATUS	  0x14
#define FW_VIRTIO_COMMON_Q_SELECT 0x16
#define FW_VIRTIO_COMMON_Q_SIZE	  0x18
#define FW_VIRTIO_COMMON_Q_MSIX	  0x1a
#define FW_VIRTIO_COMMON_Q_ENABLE 0x1c
#define FW_VIRTIO_COMMON_Q_NOFF	  0x1e
#define FW_VIRTIO_COMMON_Q_DESC	  0x20
#define FW_VIRTIO_COMMON_Q_AVAIL  0x28
#define FW_VIRTIO_COMMON_Q_USED	  0x30
#define FW_VIRTIO_MSI_NO_VECTOR	  0xffff

/* device status (§2.1) */
#define FW_VIRTIO_S_ACKNOWLEDGE 1
#define FW_VIRTIO_S_DRIVER	2
#define FW_VIRTIO_S_DRIVER_OK	4
#define FW_VIRTIO_S_FEATURES_OK 8
#define FW_VIRTIO_S_NEEDS_RESET 0x40

/* split-queue flags (§2.7.5, §2.7.6) */
#define FW_VRING_DESC_F_NEXT	      1
#define FW_VRING_DESC_F_WRITE	      2
#define FW_VRING_AVAIL_F_NO_INTERRUPT 1

/* feature bits, as masks (§6, §5.2.3, §5.1.3) */
#define FW_VIRTIO_F_EVENT_IDX	     (1ull << 29)
#define FW_VIRTIO_F_VERSION_1	     (1ull << 32)
#define FW_VIRTIO_BLK_F_RO	     (1ull << 5)
#define FW_VIRTIO_BLK_F_FLUSH	     (1ull << 9)
#define FW_VIRTIO_BLK_F_DISCARD	     (1ull << 13)
#define FW_VIRTIO_BLK_F_WRITE_ZEROES (1ull << 14)
#define FW_VIRTIO_NET_F_CSUM	     (1ull << 0)
#define FW_VIRTIO_NET_F_GUEST_CSUM   (1ull << 1)
#define FW_VIRTIO_NET_F_MTU	     (1ull << 3)
#define FW_VIRTIO_NET_F_MAC	     (1ull << 5)
#define FW_VIRTIO_NET_F_GUEST_TSO4   (1ull << 7)
#define FW_VIRTIO_NET_F_HOST_TSO4    (1ull << 11)
#define FW_VIRTIO_NET_F_STATUS	     (1ull << 16)

/* virtio-blk request types (§5.2.6) */
#define FW_VIRTIO_BLK_T_IN	     0
#define FW_VIRTIO_BLK_T_OUT	     1
#define FW_VIRTIO_BLK_T_FLUSH	     4
#define FW_VIRTIO_BLK_T_DISCARD	     11
#define FW_VIRTIO_BLK_T_WRITE_ZEROES 13

#endif /* FW_LIB_VIRTIO_SPEC_H */
