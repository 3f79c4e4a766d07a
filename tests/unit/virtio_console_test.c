// SPDX-License-Identifier: MIT
/* virtio-console (MULTIPORT) through the PCI transport, driven as Linux's
 * virtio_console does and as a hostile driver might: the control
 * handshake (PORT_ADD, PORT_NAME, PORT_OPEN), bytes both ways through the
 * port's host socket, a stalled host reader stalling the queue without
 * losing a byte, malformed control messages, unknown port ids and buffers
 * outside RAM refused without harm, and the socket file made safely. */
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "tests/lib/test.h"
#include "tests/unit/virtio_test_pci.h"
#include "vmm/virtio/virtio_console.h"

#define RAM   (4ull << 20)
#define QS    16
#define NQ    8		 /* two ports: 2 * (2 + 2) */
#define CBUF  0x40000ull /* control buffers, 256 bytes each */
#define DATA  0x80000ull /* data buffers */
#define VER1  (1ull << 32)
#define MULTI (1ull << VIRTIO_CONSOLE_F_MULTIPORT)
#define AGENT "org.qemu.guest_agent.0"

struct tq {
	gpa_t desc, avail, used;
	uint16_t avail_idx, next, last_used;
};

struct tc {
	struct guest_mem mem;
	uint8_t *ram;
	struct pci_host h;
	struct virtio_console *c;
	struct tvdev v;
	struct tq q[NQ];
	unsigned int cbuf_next;
};

static const char *const names[] = {AGENT, "test.port"};

static void tq_setup(struct tc *t, unsigned int i)
{
	struct tq *q = &t->q[i];
	gpa_t base = 0x1000 + 0x4000ull * i;

	*q = (struct tq){base, base + 0x1000, base + 0x2000, 0, 0, 0};
	mmio_wr(t->v.common + 0x16, i, 2);
	mmio_wr(t->v.common + 0x18, QS, 2);
	mmio_wr(t->v.common + 0x1a, i + 1, 2);
	mmio_wr(t->v.common + 0x20, (uint32_t)q->desc, 4);
	mmio_wr(t->v.common + 0x24, 0, 4);
	mmio_wr(t->v.common + 0x28, (uint32_t)q->avail, 4);
	mmio_wr(t->v.common + 0x2c, 0, 4);
	mmio_wr(t->v.common + 0x30, (uint32_t)q->used, 4);
	mmio_wr(t->v.common + 0x34, 0, 4);
	mmio_wr(t->v.common + 0x1c, 1, 2);
}

/* Post one buffer (addr, len) on queue i, device-writable when wr; kick. */
static uint16_t tq_post(struct tc *t, unsigned int i, uint64_t addr, uint32_t len, int wr)
{
	struct tq *q = &t->q[i];
	uint16_t head = q->next++ % QS;
	struct virtq_desc d = {addr, len, (uint16_t)(wr ? VRING_DESC_F_WRITE : 0), 0};

	memcpy(t->ram + q->desc + 16u * head, &d, sizeof(d));
	memcpy(t->ram + q->avail + 4 + 2u * (q->avail_idx % QS), &head, 2);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	q->avail_idx++;
	memcpy(t->ram + q->avail + 2, &q->avail_idx, 2);
	tvdev_kick(&t->v, (uint16_t)i);
	return head;
}

/* Queue i's next used element within ms: 1 and *id, *len, or 0. */
static int tq_used(struct tc *t, unsigned int i, uint32_t *id, uint32_t *len, int ms)
{
	struct tq *q = &t->q[i];

	for (int k = 0; k < ms; k++) {
		uint16_t idx =
		    __atomic_load_n((uint16_t *)(void *)(t->ram + q->used + 2), __ATOMIC_ACQUIRE);
		if (idx != q->last_used) {
			uint8_t *e = t->ram + q->used + 4 + 8u * (q->last_used % QS);

			memcpy(id, e, 4);
			memcpy(len, e + 4, 4);
			q->last_used++;
			return 1;
		}
		usleep(1000);
	}
	return 0;
}

/* A driver -> device control message on c_ovq (queue 3); waits for it. */
static void ctrl_out(struct tc *t, uint32_t id, uint16_t ev, uint16_t val)
{
	struct virtio_console_control m = {id, ev, val};
	uint64_t a = CBUF + 256ull * (t->cbuf_next++ % 64);
	uint32_t uid, len;

	memcpy(t->ram + a, &m, sizeof(m));
	tq_post(t, 3, a, sizeof(m), 0);
	CHECK(tq_used(t, 3, &uid, &len, 2000));
}

/* Give c_ivq (queue 2) n buffers of 256 bytes. */
static void ctrl_give(struct tc *t, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		tq_post(t, 2, CBUF + 256ull * (t->cbuf_next++ % 64), 256, 1);
}

/* The next device -> driver control message; name gets a PORT_NAME's. */
static int ctrl_in(struct tc *t, struct virtio_console_control *m, char *name, size_t cap)
{
	uint32_t id = 0, len = 0;
	uint64_t a;

	if (!tq_used(t, 2, &id, &len, 2000))
		return 0;
	memcpy(&a, t->ram + t->q[2].desc + 16u * id, 8);
	memcpy(m, t->ram + a, sizeof(*m));
	if (name) {
		size_t n = len > sizeof(*m) ? len - sizeof(*m) : 0;

		n = n < cap - 1 ? n : cap - 1;
		memcpy(name, t->ram + a + sizeof(*m), n);
		name[n] = 0;
	}
	return 1;
}

static void tc_start_mask(struct tc *t, const char *prefix, unsigned int qmask)
{
	memset(t, 0, sizeof(*t));
	tbus_n = 0;
	t->ram = mmap(NULL, RAM, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(t->ram != MAP_FAILED);
	t->mem = (struct guest_mem){.n = 1, .total = RAM, .page_size = 4096};
	t->mem.r[0] = (struct guest_mem_region){0, RAM, t->ram};
	CHECK(thost_init(&t->h, &t->mem) == 0);
	CHECK(virtio_console_create(&t->c, &t->h, names, 2, prefix) == 0);
	CHECK(tvdev_probe(&t->v, 1) == 0);
	CHECK_EQ_U64(ecam_rd(1, 0, 4), 0x10431af4); /* virtio device id 3 */
	tvdev_msix(&t->v, NQ + 1);
	tvdev_negotiate(&t->v, VER1 | MULTI, NULL);
	mmio_wr(t->v.common + 0x10, 0, 2);
	for (unsigned int i = 0; i < NQ; i++)
		if (qmask >> i & 1)
			tq_setup(t, i);
	mmio_wr(t->v.common + 0x14, 0x0f, 1);
	CHECK_EQ_U64(mmio_rd(t->v.common + 0x14, 1), 0x0f);
}

static void tc_start(struct tc *t, const char *prefix)
{
	tc_start_mask(t, prefix, (1u << NQ) - 1);
}

static void tc_stop(struct tc *t)
{
	virtio_console_destroy(t->c);
	pci_host_release(&t->h);
	munmap(t->ram, RAM);
}

static int host_connect(const char *path, int rcvbuf)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* DEVICE_READY, PORT_ADD of both ports, PORT_READY 1, its name and
 * PORT_OPEN with host_open; the guest opens port 1. */
static void handshake(struct tc *t, int host_open)
{
	struct virtio_console_control m;
	char name[64];

	ctrl_give(t, 8);
	ctrl_out(t, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	for (uint32_t i = 1; i <= 2; i++) {
		CHECK(ctrl_in(t, &m, NULL, 0));
		CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_ADD);
		CHECK_EQ_U64(m.id, i);
	}
	ctrl_out(t, 1, VIRTIO_CONSOLE_PORT_READY, 1);
	CHECK(ctrl_in(t, &m, name, sizeof(name)));
	CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_NAME);
	CHECK_EQ_U64(m.id, 1);
	CHECK_STR(name, AGENT);
	CHECK(ctrl_in(t, &m, NULL, 0));
	CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_OPEN);
	CHECK_EQ_U64(m.value, (uint64_t)host_open);
	ctrl_out(t, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
}

static void test_ports_and_bytes(void)
{
	struct virtio_console_control m;
	struct tc t;
	char prefix[64], path[100], buf[16];
	struct stat st;
	uint32_t id = 0, len = 0;
	int fd;

	snprintf(prefix, sizeof(prefix), "%s/vc%d.", getenv("TMPDIR") ?: "/tmp", getpid());
	snprintf(path, sizeof(path), "%s%s", prefix, AGENT);
	tc_start(&t, prefix);
	/* the socket is there, 0600, before any guest */
	CHECK(lstat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	CHECK_EQ_U64(st.st_mode & 0777, 0600);
	CHECK_STR(virtio_console_port_path(t.c, 0), path);
	handshake(&t, 0);
	/* the guest writes before any host reader: the chain waits */
	memcpy(t.ram + DATA, "hello", 5);
	tq_post(&t, 5, DATA, 5, 0);
	CHECK(!tq_used(&t, 5, &id, &len, 100));
	fd = host_connect(path, 0);
	CHECK(fd >= 0);
	CHECK(ctrl_in(&t, &m, NULL, 0));
	CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_OPEN);
	CHECK_EQ_U64(m.id, 1);
	CHECK_EQ_U64(m.value, 1);
	CHECK_EQ_U64(read(fd, buf, sizeof(buf)), 5);
	CHECK(!memcmp(buf, "hello", 5));
	CHECK(tq_used(&t, 5, &id, &len, 2000));
	/* host -> guest, into the buffer the guest posted */
	CHECK_EQ_U64(write(fd, "world!", 6), 6);
	tq_post(&t, 4, DATA + 0x1000, 64, 1);
	CHECK(tq_used(&t, 4, &id, &len, 2000));
	CHECK_EQ_U64(len, 6);
	CHECK(!memcmp(t.ram + DATA + 0x1000, "world!", 6));
	/* a second host client waits while the first is served */
	int fd2 = host_connect(path, 0);
	CHECK(fd2 >= 0);
	close(fd);
	CHECK(ctrl_in(&t, &m, NULL, 0));
	CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_OPEN);
	CHECK_EQ_U64(m.value, 0);
	CHECK(ctrl_in(&t, &m, NULL, 0)); /* then the waiting one comes in */
	CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_OPEN);
	CHECK_EQ_U64(m.value, 1);
	close(fd2);
	CHECK(ctrl_in(&t, &m, NULL, 0));
	CHECK_EQ_U64(m.value, 0);
	tc_stop(&t);
	unlink(path);
	snprintf(path, sizeof(path), "%stest.port", prefix);
	unlink(path);
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* A host reader that stops reading stalls the port's queue; once it reads
 * again every byte arrives, in order. */
static void test_stalled_reader_loses_nothing(void)
{
	enum { CHUNK = 128 << 10, N = 14 };
	struct tc t;
	char prefix[64], path[100];
	uint64_t want = 0xcbf29ce484222325ull, got = want, total = 0;
	uint32_t id = 0, len = 0, used = 0;
	uint8_t buf[65536];
	int fd;

	snprintf(prefix, sizeof(prefix), "%s/vs%d.", getenv("TMPDIR") ?: "/tmp", getpid());
	snprintf(path, sizeof(path), "%s%s", prefix, AGENT);
	tc_start(&t, prefix);
	fd = host_connect(path, 4096);
	CHECK(fd >= 0);
	handshake(&t, 1);
	for (unsigned int i = 0; i < N; i++) {
		uint8_t *p = t.ram + DATA + (uint64_t)CHUNK * i;

		for (unsigned int k = 0; k < CHUNK; k++)
			p[k] = (uint8_t)(k * 7 + i * 13 + (k >> 9));
		want = fnv(want, p, CHUNK);
		tq_post(&t, 5, DATA + (uint64_t)CHUNK * i, CHUNK, 0);
	}
	/* 1.75 MiB cannot fit the socket's buffers: the queue stalls */
	while (tq_used(&t, 5, &id, &len, 200))
		used++;
	CHECK(used < N);
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		ssize_t n;

		if (poll(&pfd, 1, 2000) <= 0)
			break;
		n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		got = fnv(got, buf, (size_t)n);
		total += (uint64_t)n;
		if (total == (uint64_t)CHUNK * N)
			break;
	}
	CHECK_EQ_U64(total, (uint64_t)CHUNK * N);
	CHECK_EQ_U64(got, want);
	while (tq_used(&t, 5, &id, &len, 500))
		used++;
	CHECK_EQ_U64(used, N);
	close(fd);
	tc_stop(&t);
	unlink(path);
	snprintf(path, sizeof(path), "%stest.port", prefix);
	unlink(path);
}

/* Everything the guest sends is untrusted: short and unknown control
 * messages, ports that do not exist, buffers outside RAM. Nothing crashes,
 * bad chains complete empty, and the device still works afterwards. */
static void test_hostile_driver(void)
{
	static const uint32_t bad_ids[] = {0, 3, 9, 0x7fffffff, 0xffffffff};
	struct virtio_console_control m;
	struct tc t;
	uint32_t id = 0, len = 0;
	int fd;
	char prefix[64], path[100];

	snprintf(prefix, sizeof(prefix), "%s/vh%d.", getenv("TMPDIR") ?: "/tmp", getpid());
	snprintf(path, sizeof(path), "%s%s", prefix, AGENT);
	tc_start(&t, prefix);
	fd = host_connect(path, 0);
	CHECK(fd >= 0);
	/* a short control message and an outside-RAM one, before READY */
	tq_post(&t, 3, CBUF, 4, 0);
	CHECK(tq_used(&t, 3, &id, &len, 2000));
	tq_post(&t, 3, RAM + 0x1000, 8, 0);
	CHECK(tq_used(&t, 3, &id, &len, 2000));
	CHECK_EQ_U64(len, 0);
	for (unsigned int i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
		ctrl_out(&t, bad_ids[i], VIRTIO_CONSOLE_PORT_READY, 1);
		ctrl_out(&t, bad_ids[i], VIRTIO_CONSOLE_PORT_OPEN, 1);
	}
	ctrl_out(&t, 1, 0xffff, 1);			 /* unknown event */
	ctrl_out(&t, 1, VIRTIO_CONSOLE_PORT_NAME, 1);	 /* device -> driver only */
	ctrl_out(&t, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);	 /* before PORT_READY */
	ctrl_out(&t, 0, VIRTIO_CONSOLE_DEVICE_READY, 0); /* failure */
	/* nothing was answered: no DEVICE_READY 1 yet */
	tq_post(&t, 2, CBUF + 0x3000, 256, 1);
	CHECK(!tq_used(&t, 2, &id, &len, 100));
	/* port 0 and unknown queues' buffers are left alone */
	tq_post(&t, 1, DATA, 16, 0);
	tq_post(&t, 0, RAM - 8, 64, 1); /* crosses the end of RAM */
	/* a control buffer outside RAM is completed empty, not written */
	tq_post(&t, 2, RAM + 0x10000, 256, 1);
	ctrl_out(&t, 0, VIRTIO_CONSOLE_DEVICE_READY, 1);
	CHECK(tq_used(&t, 2, &id, &len, 2000)); /* the good buffer: PORT_ADD 1 */
	CHECK(tq_used(&t, 2, &id, &len, 2000)); /* the bad one, empty */
	CHECK_EQ_U64(len, 0);
	CHECK(ctrl_in(&t, &m, NULL, 0) == 0); /* PORT_ADD 2 waits for a buffer */
	ctrl_give(&t, 8);
	CHECK(ctrl_in(&t, &m, NULL, 0));
	CHECK_EQ_U64(m.event, VIRTIO_CONSOLE_PORT_ADD);
	CHECK_EQ_U64(m.id, 2);
	ctrl_out(&t, 1, VIRTIO_CONSOLE_PORT_READY, 1);
	CHECK(ctrl_in(&t, &m, NULL, 0)); /* name */
	CHECK(ctrl_in(&t, &m, NULL, 0)); /* open: the host is connected */
	CHECK_EQ_U64(m.value, 1);
	ctrl_out(&t, 1, VIRTIO_CONSOLE_PORT_OPEN, 1);
	/* data chains outside RAM, or with nothing to fill, complete empty */
	tq_post(&t, 5, RAM + 0x1000, 64, 0);
	CHECK(tq_used(&t, 5, &id, &len, 2000));
	CHECK_EQ_U64(write(fd, "x", 1), 1);
	tq_post(&t, 4, RAM - 16, 64, 1);
	CHECK(tq_used(&t, 4, &id, &len, 2000));
	CHECK_EQ_U64(len, 0);
	tq_post(&t, 4, DATA, 0, 1);
	CHECK(tq_used(&t, 4, &id, &len, 2000));
	CHECK_EQ_U64(len, 0);
	/* and the port still carries bytes */
	tq_post(&t, 4, DATA + 0x2000, 8, 1);
	CHECK(tq_used(&t, 4, &id, &len, 2000));
	CHECK_EQ_U64(len, 1);
	CHECK_EQ_U64(t.ram[DATA + 0x2000], 'x');
	CHECK(!(mmio_rd(t.v.common + 0x14, 1) & VIRTIO_CONFIG_S_NEEDS_RESET));
	/* a broken ring (a head past the queue size) asks for a reset */
	{
		uint16_t bad = QS + 3;
		struct tq *q = &t.q[5];

		memcpy(t.ram + q->avail + 4 + 2u * (q->avail_idx % QS), &bad, 2);
		q->avail_idx++;
		memcpy(t.ram + q->avail + 2, &q->avail_idx, 2);
		tvdev_kick(&t.v, 5);
		for (int i = 0; i < 2000 && !(mmio_rd(t.v.common + 0x14, 1) & 0x40); i++)
			usleep(1000);
		CHECK(mmio_rd(t.v.common + 0x14, 1) & VIRTIO_CONFIG_S_NEEDS_RESET);
	}
	close(fd);
	tc_stop(&t);
	unlink(path);
	snprintf(path, sizeof(path), "%stest.port", prefix);
	unlink(path);
}

static uint64_t cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A driver that opens the port but never enables its receive queue, while
 * host bytes wait: the I/O thread must sleep, not poll the readable socket
 * in a loop (a guest-driven busy loop on a host CPU). */
static void test_open_port_without_rx_queue_idles(void)
{
	struct tc t;
	char prefix[64], path[100];
	uint64_t c0, used;
	int fd;

	snprintf(prefix, sizeof(prefix), "%s/vq%d.", getenv("TMPDIR") ?: "/tmp", getpid());
	snprintf(path, sizeof(path), "%s%s", prefix, AGENT);
	tc_start_mask(&t, prefix, (1u << NQ) - 1 - (1u << 4)); /* port 1's rx queue off */
	fd = host_connect(path, 0);
	CHECK(fd >= 0);
	handshake(&t, 1);
	CHECK_EQ_U64(write(fd, "pending", 7), 7);
	usleep(100000);
	c0 = cpu_ms();
	usleep(1000000);
	used = cpu_ms() - c0;
	/* a busy loop burns most of that second (about 300 ms measured on a
	 * loaded 2-core host), an idle thread next to nothing */
	CHECK(used < 100);
	close(fd);
	tc_stop(&t);
	unlink(path);
	snprintf(path, sizeof(path), "%stest.port", prefix);
	unlink(path);
}

/* The socket path is created, never reused: a file or a symlink planted
 * there fails the device and is left as it was; a stale socket is
 * replaced. A name that could leave the directory is refused. */
static void test_socket_path_attacks(void)
{
	struct pci_host h;
	struct virtio_console *c = NULL;
	struct guest_mem mem = {.n = 1, .total = RAM};
	char prefix[64], path[100], target[100];
	const char *evil[] = {"../x"};
	struct stat st;
	int fd;

	tbus_n = 0;
	CHECK(thost_init(&h, &mem) == 0);
	snprintf(prefix, sizeof(prefix), "%s/va%d.", getenv("TMPDIR") ?: "/tmp", getpid());
	snprintf(path, sizeof(path), "%s%s", prefix, AGENT);
	snprintf(target, sizeof(target), "%starget", prefix);
	/* a symlink to a file elsewhere */
	fd = open(target, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	CHECK(fd >= 0);
	close(fd);
	CHECK(symlink(target, path) == 0);
	CHECK(virtio_console_create(&c, &h, names, 1, prefix) == -EEXIST);
	CHECK(lstat(path, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK(lstat(target, &st) == 0 && S_ISREG(st.st_mode));
	unlink(path);
	/* a regular file */
	CHECK(rename(target, path) == 0);
	CHECK(virtio_console_create(&c, &h, names, 1, prefix) == -EEXIST);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
	unlink(path);
	/* a stale socket is replaced */
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		fd = socket(AF_UNIX, SOCK_STREAM, 0);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		CHECK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
		close(fd);
	}
	CHECK(virtio_console_create(&c, &h, names, 1, prefix) == 0);
	CHECK(lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0600);
	virtio_console_destroy(c);
	unlink(path);
	CHECK(virtio_console_create(&c, &h, evil, 1, prefix) == -EINVAL);
	CHECK(virtio_console_create(&c, &h, names, 0, prefix) == -EINVAL);
	pci_host_release(&h);
}

int main(void)
{
	TEST_RUN(test_ports_and_bytes);
	TEST_RUN(test_stalled_reader_loses_nothing);
	TEST_RUN(test_hostile_driver);
	TEST_RUN(test_open_port_without_rx_queue_idles);
	TEST_RUN(test_socket_path_attacks);
	return test_summary();
}
