/* SPDX-License-Identifier: MIT */
/*
 * e1000e_int.h - what the 82574L's files share: e1000e.c (PCI, registers,
 * EEPROM, PHY, interrupts), e1000e_tx.c, e1000e_rx.c (the rings) and
 * e1000e_io.c (the I/O thread). Not for other modules.
 *
 * Register offsets and bits are the 82574 datasheet's (§10); the names
 * follow Linux's e1000e driver so a reader can check one against the other.
 */
#ifndef VMLET_NIC_E1000E_INT_H
#define VMLET_NIC_E1000E_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/dev/pci.h"
#include "vmm/net/backend.h"
#include "vmm/net/net.h"
#include "vmm/nic/e1000e.h"

#define E1000E_MMIO_SIZE    0x20000
#define E1000E_FLASH_SIZE   0x20000
#define E1000E_MSIX_SIZE    0x4000
#define E1000E_MSIX_PBA	    0x2000
#define E1000E_MSIX_VECS    5
#define E1000E_REGS	    (E1000E_MMIO_SIZE / 4)
#define E1000E_EEPROM_WORDS 64
#define E1000E_EEPROM_SUM   0xBABA
#define E1000E_PHY_PAGES    4
#define E1000E_PHY_ADDR	    1

/* The largest packet the TX path assembles: a 64 KiB TSO payload plus its
 * headers; larger ones are dropped. */
#define E1000E_TX_MAX (65536 + 256)
/* The largest frame RX takes from the backend (no GSO is asked of it). */
#define E1000E_RX_MAX	    (16384 + NET_VNET_HDR_LEN)
#define E1000E_INJECT_SLOTS 4

/* registers, byte offsets (datasheet §10.2) */
enum {
	E_CTRL = 0x0000,
	E_STATUS = 0x0008,
	E_EECD = 0x0010,
	E_EERD = 0x0014,
	E_CTRL_EXT = 0x0018,
	E_MDIC = 0x0020,
	E_ICR = 0x00c0,
	E_ITR = 0x00c4,
	E_ICS = 0x00c8,
	E_IMS = 0x00d0,
	E_IMC = 0x00d8,
	E_EIAC = 0x00dc,
	E_IAM = 0x00e0,
	E_IVAR = 0x00e4,
	E_EITR0 = 0x00e8, /* five, 4 bytes apart */
	E_RCTL = 0x0100,
	E_TCTL = 0x0400,
	E_EXTCNF_CTRL = 0x0f00,
	E_PBA = 0x1000,
	E_EEWR = 0x102c,
	E_RDBAL = 0x2800,
	E_RDBAH = 0x2804,
	E_RDLEN = 0x2808,
	E_RDH = 0x2810,
	E_RDT = 0x2818,
	E_RXDCTL = 0x2828,
	E_PSRCTL = 0x2170,
	E_TDBAL = 0x3800,
	E_TDBAH = 0x3804,
	E_TDLEN = 0x3808,
	E_TDH = 0x3810,
	E_TDT = 0x3818,
	E_TXDCTL = 0x3828,
	E_STATS = 0x4000, /* statistics, clear on read, to E_STATS_END */
	E_STATS_END = 0x4128,
	E_RXCSUM = 0x5000,
	E_RFCTL = 0x5008,
	E_MTA = 0x5200,
	E_RAL0 = 0x5400,
	E_RAH0 = 0x5404,
	E_GCR = 0x5b00,
	E_FACTPS = 0x5b30,
	E_SWSM = 0x5b50,
};

/* statistics the device counts (§10.2.7) */
enum {
	E_GPRC = 0x4074,
	E_BPRC = 0x4078,
	E_MPRC = 0x407c,
	E_GPTC = 0x4080,
	E_GORCL = 0x4088,
	E_GOTCL = 0x4090,
	E_RNBC = 0x40a0,
	E_RUC = 0x40a4,
	E_ROC = 0x40ac,
	E_TORL = 0x40c0,
	E_TOTL = 0x40c8,
	E_TPR = 0x40d0,
	E_TPT = 0x40d4,
	E_MPTC = 0x40f0,
	E_BPTC = 0x40f4,
	E_TSCTC = 0x40f8,
};

#define CTRL_GIO_MASTER_DISABLE (1u << 2)
#define CTRL_SLU		(1u << 6)
#define CTRL_RST		(1u << 26)
#define CTRL_PHY_RST		(1u << 31)
#define STATUS_FD		(1u << 0)
#define STATUS_LU		(1u << 1)
#define STATUS_SPEED_1000	(1u << 7)
#define STATUS_ASDV_1000	(2u << 8)
#define STATUS_GIO_MASTER_EN	(1u << 19)
#define EECD_REQ		(1u << 6)
#define EECD_GNT		(1u << 7)
#define EECD_PRES		(1u << 8)
#define EECD_AUTO_RD		(1u << 9)
#define EERD_START		(1u << 0)
#define EERD_DONE		(1u << 1)
#define CTRL_EXT_IAME		(1u << 27)
#define CTRL_EXT_EIAME		(1u << 24)
#define CTRL_EXT_PBA_CLR	(1u << 31)
#define MDIC_OP_WRITE		(1u << 26)
#define MDIC_OP_READ		(2u << 26)
#define MDIC_READY		(1u << 28)
#define MDIC_INT_EN		(1u << 29)
#define MDIC_ERROR		(1u << 30)

/* MII registers of the PHY (IEEE 802.3 §22.2.4) and the M88 copper ones */
enum {
	PHY_CTRL = 0,
	PHY_STATUS = 1,
	PHY_ID1 = 2,
	PHY_ID2 = 3,
	PHY_COPPER_STAT1 = 17,
	PHY_PAGE = 22,
};
#define MII_CR_RESET	       0x8000
#define MII_CR_RESTART_AUTONEG 0x0200
#define MII_SR_LINK	       0x0004
#define MII_SR_AUTONEG_DONE    0x0020
#define M88_PSSR_LINK	       0x0400

/* interrupt causes (ICR/ICS/IMS/IMC, §10.2.4) */
#define ICR_TXDW	 (1u << 0)
#define ICR_TXQE	 (1u << 1)
#define ICR_LSC		 (1u << 2)
#define ICR_RXDMT0	 (1u << 4)
#define ICR_RXO		 (1u << 6)
#define ICR_RXT0	 (1u << 7)
#define ICR_MDAC	 (1u << 9)
#define ICR_RXQ0	 (1u << 20)
#define ICR_RXQ1	 (1u << 21)
#define ICR_TXQ0	 (1u << 22)
#define ICR_TXQ1	 (1u << 23)
#define ICR_OTHER	 (1u << 24)
#define ICR_INT_ASSERTED (1u << 31)
#define ICR_OTHER_CAUSES (ICR_LSC | ICR_RXO | ICR_MDAC)
#define IVAR_VALID	 0x8u

#define RCTL_EN	     (1u << 1)
#define RCTL_UPE     (1u << 3)
#define RCTL_MPE     (1u << 4)
#define RCTL_LPE     (1u << 5)
#define RCTL_DTYP    (3u << 10)
#define RCTL_DTYP_PS (1u << 10) /* packet split: 32-byte descriptors */
#define RCTL_BAM     (1u << 15)
#define RCTL_BSEX    (1u << 25)
#define RCTL_SECRC   (1u << 26)
#define RFCTL_EXTEN  (1u << 15)
#define RXCSUM_IPOFL (1u << 8)
#define RXCSUM_TUOFL (1u << 9)
#define RXCSUM_PCSD  (1u << 13)
#define TCTL_EN	     (1u << 1)
#define RAH_AV	     (1u << 31)

/* TX descriptor bits (§7.2.10): in the legacy cmd byte and in the
 * extended descriptors' command field (bits 24..31 of the length word) */
#define TXD_CMD_EOP    0x01
#define TXD_CMD_IFCS   0x02
#define TXD_CMD_IC     0x04 /* legacy: insert checksum */
#define TXD_CMD_TSE    0x04 /* extended: TCP segmentation */
#define TXD_CMD_RS     0x08
#define TXD_CMD_DEXT   0x20
#define TXD_TUCMD_TCP  0x01 /* context: TCP (else UDP) */
#define TXD_TUCMD_IP   0x02 /* context: IPv4 (else IPv6) */
#define TXD_TUCMD_TSE  0x04
#define TXD_POPTS_IXSM 0x01
#define TXD_POPTS_TXSM 0x02
#define TXD_STAT_DD    0x01
#define TXD_DTYP_CTX   0x0
#define TXD_DTYP_DATA  0x1

/* RX status and error bits (§7.1.5) */
#define RXD_STAT_DD    0x01
#define RXD_STAT_EOP   0x02
#define RXD_STAT_IXSM  0x04
#define RXD_STAT_UDPCS 0x10
#define RXD_STAT_TCPCS 0x20
#define RXD_STAT_IPCS  0x40
#define RXD_ERR_TCPE   0x20
#define RXD_ERR_IPE    0x40

/* The offload context the last context descriptor set (§7.2.10.2). */
struct e1000e_txctx {
	uint8_t ipcss, ipcso, tucss, tucso;
	uint16_t ipcse, tucse;
	uint32_t paylen;
	uint8_t hdr_len, tucmd;
	uint16_t mss;
};

/* The packet the TX path is gathering, up to its EOP descriptor. */
struct e1000e_txpkt {
	uint8_t *buf; /* NET_VNET_HDR_LEN zeros, then the frame */
	size_t len;   /* frame bytes gathered */
	bool bad;     /* a descriptor or buffer was bad: drop at EOP */
	bool ext;     /* extended data descriptors */
	bool tse;     /* TCP segmentation (data descriptor's DCMD.TSE) */
	uint8_t popts;
	uint8_t css, cso; /* legacy: checksum start/offset */
	bool ic;	  /* legacy: insert checksum */
};

struct e1000e {
	struct pci_dev pci;
	const struct guest_mem *mem;
	char name[64];
	struct net_attach att;
	struct net_backend *be;

	pthread_mutex_t lock; /* everything below to the I/O fields */
	uint32_t reg[E1000E_REGS];
	uint16_t eeprom[E1000E_EEPROM_WORDS];
	uint16_t phy[E1000E_PHY_PAGES][32];
	bool link_up;
	bool ps_seen;	    /* the driver turned packet-split receive on (logged once) */
	uint64_t msix_sent; /* MSI-X messages sent (for tests) */
	/* moderation of the I/O thread's RX (0) and TX (1) interrupts */
	uint64_t (*clock_ns)(void); /* CLOCK_MONOTONIC; tests set their own */
	uint64_t irq_last_ns[2];
	uint32_t irq_deferred[2]; /* causes held back until the interval ends */

	/* I/O thread */
	int kick_fd; /* eventfd: a doorbell, a state change, stop */
	bool quit;
	bool be_dead;
	bool rx_wait; /* no free RX descriptors: backend not read */
	pthread_t thread;
	bool started;
	/* snapshot (e1000e_snap.c): hold asks the thread to wait between two
	 * turns (lock held to set it), held says it does; hold_cond for both */
	bool hold, held;
	pthread_cond_t hold_cond;
	struct e1000e_txctx ctx;     /* as the guest's last context set it (lock) */
	struct e1000e_txctx ctx_run; /* ctx's copy the packet being sent uses */
	struct e1000e_txpkt tx;
	uint8_t *seg;	/* a TSO segment being built */
	uint8_t *rxbuf; /* E1000E_RX_MAX */
	uint8_t *reply; /* net_intercept()'s answer */
	uint8_t inject[E1000E_INJECT_SLOTS][NET_VNET_HDR_LEN + DHCP_FRAME_MAX];
	size_t inject_len[E1000E_INJECT_SLOTS];
	unsigned int inject_head, inject_n;

	struct e1000e_stats st; /* updated atomically */
};

#define E1000E_STAT_ADD(e, f, v) __atomic_add_fetch(&(e)->st.f, (v), __ATOMIC_RELAXED)

static inline uint32_t e1000e_reg(const struct e1000e *e, uint32_t off)
{
	return e->reg[off / 4];
}

/* e1000e.c: the EEPROM, the registers' reset values and the PCI function
 * with its BARs and MSI-X, added to host (create). */
int e1000e_pci_setup(struct e1000e *e, struct pci_host *host);
/* e1000e.c: raise causes (lock held); the interrupt goes out per the
 * mode (MSI-X vectors through IVAR, or INTA#). */
void e1000e_raise(struct e1000e *e, uint32_t causes);
/*
 * e1000e.c: raise the I/O thread's RX (idx 0) or TX (idx 1) causes no
 * sooner than the interval the guest asked for (EITR of the cause's MSI-X
 * vector, else ITR; units of 256 ns, 0: none) after the last one; held
 * back otherwise. e1000e_moderation_due() raises what is due and returns
 * the milliseconds until the next (-1: none). Lock held.
 */
void e1000e_raise_moderated(struct e1000e *e, uint32_t causes, unsigned int idx);
int e1000e_moderation_due(struct e1000e *e);
/* a statistics counter (lock held), saturating; 64-bit ones as low/high */
void e1000e_stat(struct e1000e *e, uint32_t off, uint32_t v);
void e1000e_stat64(struct e1000e *e, uint32_t off_lo, uint64_t v);
/* wake the I/O thread */
void e1000e_kick(struct e1000e *e);

/* e1000e_tx.c: run the TX ring (I/O thread; takes the lock). True when
 * descriptors were processed. */
bool e1000e_tx_run(struct e1000e *e);
/* Send one whole frame (at e->tx.buf or another buffer with its zeroed
 * vnet header in front) to the backend or the intercept. */
void e1000e_tx_emit(struct e1000e *e, uint8_t *hdr_and_frame, size_t frame_len);

/* e1000e_rx.c: can the RX ring take a frame now (lock held)? */
bool e1000e_rx_ready(struct e1000e *e);
/* Put one frame (no vnet header) into the RX ring (lock held). 0 put,
 * -ENOSPC no descriptors (the frame waits), -EINVAL dropped. */
int e1000e_rx_put(struct e1000e *e, const uint8_t *frame, size_t len, uint8_t vflags);
/* Complete a NEEDS_CSUM frame from the backend (vnet header fields). */
void e1000e_rx_fix_csum(uint8_t *frame, size_t len, uint16_t start, uint16_t off);

/* e1000e_io.c: with the lock held, wait while a snapshot holds the I/O
 * thread (e->hold), saying so (e->held). */
void e1000e_hold_wait(struct e1000e *e);

#endif /* VMLET_NIC_E1000E_INT_H */
