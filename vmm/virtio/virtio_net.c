/* SPDX-License-Identifier: MIT */
/*
 * virtio_net.c - virtio-net device model: features, config space, the
 * control queue, lifecycle (virtio 1.2 §5.1). The data path is in
 * virtio_net_io.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/util/iov.h"
#include "vmm/virtio/virtio_net_int.h"
#include "vmm/vm/device.h"
#include "vmm/util/log.h"
#include "vmm/net/mac.h"
#include "vmm/vm_config.h"

static uint64_t net_features(void *dev)
{
	struct virtio_net *n = dev;
	uint64_t f = 1ull << VIRTIO_NET_F_MAC | 1ull << VIRTIO_NET_F_STATUS |
		     1ull << VIRTIO_NET_F_MRG_RXBUF | 1ull << VIRTIO_NET_F_CTRL_VQ |
		     1ull << VIRTIO_NET_F_CTRL_RX | 1ull << VIRTIO_NET_F_GUEST_ANNOUNCE;

	if (n->cfg.mtu >= 68)
		f |= 1ull << VIRTIO_NET_F_MTU;
	if (n->pairs > 1)
		f |= 1ull << VIRTIO_NET_F_MQ;
	/* offloads travel in the vnet header: only backends that have one */
	if (n->pair[0].be->has_vnet_hdr)
		f |= 1ull << VIRTIO_NET_F_CSUM | 1ull << VIRTIO_NET_F_GUEST_CSUM |
		     1ull << VIRTIO_NET_F_GUEST_TSO4 | 1ull << VIRTIO_NET_F_GUEST_TSO6 |
		     1ull << VIRTIO_NET_F_GUEST_ECN | 1ull << VIRTIO_NET_F_HOST_TSO4 |
		     1ull << VIRTIO_NET_F_HOST_TSO6 | 1ull << VIRTIO_NET_F_HOST_ECN;
	return f;
}

static void net_config_read(void *dev, uint32_t off, void *data, uint32_t len)
{
	struct virtio_net *n = dev;

	virtio_pci_config_copy(&n->cfg, NET_CONFIG_LEN, off, data, len);
}

static int net_activate(void *dev, struct virtio_pci *vp, uint64_t features)
{
	struct virtio_net *n = dev;

	(void)vp;
	virtio_net_io_activate(n, features);
	return 0;
}

static void net_reset(void *dev)
{
	virtio_net_io_pause(dev);
}

static const struct virtio_dev_ops virtio_net_ops = {
    .device_id = VIRTIO_ID_NET,
    .class_code = 0x020000, /* network, ethernet */
    .features = net_features,
    .config_read = net_config_read,
    .activate = net_activate,
    .reset = net_reset,
    .freeze = virtio_net_snap_freeze,
    .thaw = virtio_net_snap_thaw,
    .save = virtio_net_snap_save,
    .load = virtio_net_snap_load,
};

/* One control command; returns the ack byte. */
static uint8_t ctrl_command(struct virtio_net *n, const struct virtq_elem *e)
{
	uint8_t hdr[2];
	uint16_t pairs;
	uint8_t mac[6];
	uint64_t data = e->out_bytes - sizeof(hdr);

	iov_to_buf(e->out, e->n_out, 0, hdr, sizeof(hdr));
	switch (hdr[0]) {
	case VIRTIO_NET_CTRL_RX:
		/* promiscuous/allmulti/...: the backend hands us every frame
		 * for this NIC anyway; the guest's own filter does the rest */
		return VIRTIO_NET_OK;
	case VIRTIO_NET_CTRL_MAC:
		if (hdr[1] == VIRTIO_NET_CTRL_MAC_ADDR_SET) {
			if (data != 6)
				return VIRTIO_NET_ERR;
			iov_to_buf(e->out, e->n_out, 2, mac, 6);
			if (net_mac_is_multicast(mac))
				return VIRTIO_NET_ERR;
			memcpy(n->cfg.mac, mac, 6);
		}
		return VIRTIO_NET_OK; /* MAC_TABLE_SET: filtering is the guest's */
	case VIRTIO_NET_CTRL_MQ:
		if (!net_has(n, VIRTIO_NET_F_MQ) || hdr[1] != VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET ||
		    data != 2)
			return VIRTIO_NET_ERR;
		iov_to_buf(e->out, e->n_out, 2, &pairs, 2);
		if (pairs < 1 || pairs > n->pairs)
			return VIRTIO_NET_ERR;
		virtio_net_io_set_pairs(n, pairs);
		return VIRTIO_NET_OK;
	case VIRTIO_NET_CTRL_ANNOUNCE: /* the guest announced itself */
		if (!net_has(n, VIRTIO_NET_F_GUEST_ANNOUNCE) ||
		    hdr[1] != VIRTIO_NET_CTRL_ANNOUNCE_ACK || data)
			return VIRTIO_NET_ERR;
		__atomic_and_fetch(&n->cfg.status, (uint16_t)~VIRTIO_NET_S_ANNOUNCE,
				   __ATOMIC_RELAXED);
		return VIRTIO_NET_OK;
	}
	return VIRTIO_NET_ERR;
}

int virtio_net_announce(struct virtio_net *n)
{
	/* the accepted features (n->features is the I/O thread's copy,
	 * taken when its worker activates: maybe not yet after a load) */
	if (!(__atomic_load_n(&n->want_features, __ATOMIC_ACQUIRE) &
	      (1ull << VIRTIO_NET_F_GUEST_ANNOUNCE)))
		return -ENOTSUP;
	__atomic_or_fetch(&n->cfg.status, (uint16_t)VIRTIO_NET_S_ANNOUNCE, __ATOMIC_RELAXED);
	virtio_pci_config_interrupt(&n->vp);
	return 0;
}

static void ctrl_serve(void *opaque, struct virtq *q, struct virtq_elem *e, bool good)
{
	struct virtio_net *n = opaque;
	uint8_t ack;

	/* §5.1.6.5: class, command, data (readable); ack (writable) */
	if (!good || e->out_bytes < 2 || e->in_bytes < 1) {
		log_warn_once("virtio-net: %s: malformed control command", n->name);
		virtq_push(q, e->head, 0);
		return;
	}
	ack = ctrl_command(n, e);
	iov_from_buf(e->in, e->n_in, e->in_bytes - 1, &ack, 1);
	virtq_push(q, e->head, 1);
}

void virtio_net_ctrl(struct virtio_net *n)
{
	struct virtq_elem e = {.out = n->out, .in = n->in, .cap_out = NET_SEGS, .cap_in = NET_SEGS};

	virtio_pci_drain(&n->vp, 2 * n->pairs, &e, ctrl_serve, n);
}

static void net_free(struct virtio_net *n)
{
	unsigned int i;

	for (i = 0; i < NET_MAX_PAIRS; i++) {
		free(n->pair[i].spill);
		free(n->pair[i].iov);
	}
	net_detach(&n->att);
	free(n);
}

static void net_read_counters(void *opaque, struct device_counters *c)
{
	struct virtio_net_stats st;

	virtio_net_get_stats(opaque, &st);
	c->rx_packets = st.rx_packets;
	c->rx_bytes = st.rx_bytes;
	c->tx_packets = st.tx_packets;
	c->tx_bytes = st.tx_bytes;
	c->rx_dropped = st.rx_dropped;
	c->tx_dropped = st.tx_dropped;
}

int virtio_net_create(struct virtio_net **out, struct pci_host *host, struct net_attach *att)
{
	struct virtio_net *n;
	char vname[32];
	unsigned int i;
	int r;

	if (!att->n_queues || !att->be[0])
		return error("virtio-net: interface '%s' has no backend", att->name);
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->att = *att;
	memset(att->be, 0, sizeof(att->be));
	att->n_queues = 0;
	snprintf(n->name, sizeof(n->name), "%s", n->att.name);
	/* queues beyond what the device can offer would get flows nobody reads */
	for (i = NET_MAX_PAIRS; i < TAP_MAX_QUEUES; i++) {
		net_backend_destroy(n->att.be[i]);
		n->att.be[i] = NULL;
	}
	n->pairs = n->att.n_queues < NET_MAX_PAIRS ? n->att.n_queues : NET_MAX_PAIRS;
	n->nq = 2 * n->pairs + 1;
	n->active_pairs = 1;
	for (i = 0; i < n->pairs; i++) {
		n->pair[i].be = n->att.be[i];
		n->pair[i].spill = malloc(NET_FRAME_MAX);
		n->pair[i].iov = calloc(NET_RX_IOV + 1, sizeof(struct iovec));
		if (!n->pair[i].spill || !n->pair[i].iov) {
			net_free(n);
			return -ENOMEM;
		}
	}
	memcpy(n->cfg.mac, n->att.mac, 6);
	n->cfg.status = VIRTIO_NET_S_LINK_UP;
	n->cfg.max_virtqueue_pairs = (uint16_t)n->pairs;
	n->cfg.mtu = n->att.mtu <= 65535 ? (uint16_t)n->att.mtu : 0;
	snprintf(vname, sizeof(vname), "virtio-net %.20s", n->name);
	r = virtio_pci_init(&n->vp, host, vname, &virtio_net_ops, n, n->nq, NET_QUEUE_SIZE,
			    NET_CONFIG_LEN);
	if (r) {
		net_free(n);
		return error_errno(r, "virtio-net: interface '%s': cannot create the device",
				   att->name);
	}
	device_add_counters(host->vm, "net", n->name, net_read_counters, n);
	r = virtio_net_io_start(n);
	if (r) {
		virtio_pci_release(&n->vp);
		net_free(n);
		return error_errno(r, "virtio-net: interface '%s': cannot start the i/o thread",
				   att->name);
	}
	*out = n;
	return 0;
}

int virtio_net_create_nic(struct virtio_net **out, struct pci_host *host,
			  const struct vm_config *cfg, unsigned int index)
{
	unsigned int vcpus = (unsigned int)vm_config_vcpus(cfg), q;
	struct net_env env;
	struct net_attach att;
	int r;

	net_env_detect(&env);
	q = cfg->net_multi_queue && vcpus ? vcpus : 1;
	r = net_attach(cfg, index, q < NET_MAX_PAIRS ? q : NET_MAX_PAIRS, &env, &att);
	if (r)
		return r;
	r = virtio_net_create(out, host, &att);
	if (r)
		net_detach(&att);
	return r;
}

void virtio_net_destroy(struct virtio_net *n)
{
	if (!n)
		return;
	virtio_pci_release(&n->vp); /* resets: the thread goes idle */
	virtio_net_io_stop(n);
	net_free(n);
}

struct virtio_pci *virtio_net_pci(struct virtio_net *n)
{
	return &n->vp;
}

void virtio_net_get_info(struct virtio_net *n, struct virtio_net_info *info)
{
	uint32_t mask = n->att.lease.netmask;

	memset(info, 0, sizeof(*info));
	memcpy(info->mac, n->att.mac, 6);
	info->mtu = n->att.mtu;
	info->binding = net_mode_name(n->att.mode);
	if (n->att.dhcp) {
		info->lease_ip = n->att.lease.client_ip;
		while (info->lease_prefix < 32 && (mask & (1u << (31 - info->lease_prefix))))
			info->lease_prefix++;
	}
	info->want_dhcp = n->att.dhcp || n->att.mode == NET_MODE_PASST;
}

void virtio_net_get_stats(struct virtio_net *n, struct virtio_net_stats *st)
{
	st->rx_packets = __atomic_load_n(&n->st.rx_packets, __ATOMIC_RELAXED);
	st->tx_packets = __atomic_load_n(&n->st.tx_packets, __ATOMIC_RELAXED);
	st->rx_bytes = __atomic_load_n(&n->st.rx_bytes, __ATOMIC_RELAXED);
	st->tx_bytes = __atomic_load_n(&n->st.tx_bytes, __ATOMIC_RELAXED);
	st->rx_dropped = __atomic_load_n(&n->st.rx_dropped, __ATOMIC_RELAXED);
	st->tx_dropped = __atomic_load_n(&n->st.tx_dropped, __ATOMIC_RELAXED);
	st->intercepted = __atomic_load_n(&n->st.intercepted, __ATOMIC_RELAXED);
}
