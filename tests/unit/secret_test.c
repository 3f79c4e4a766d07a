// SPDX-License-Identifier: MIT
/*
 * vmm/util/secret.h: a Secret read as DIR/NAME/KEY files beneath the
 * --secret-dir root. Planted attacks: a Secret name that climbs out
 * ("..", "a/../..", "/etc"), a key that is a symlink out of the root, a
 * Secret directory that is such a symlink, a FIFO as a key (must not
 * block), an oversized key; a kubelet-style mount (..data links inside the
 * root) is read. cmd_vm_access(): keys with noCloud go into the NoCloud
 * seed's meta-data, in order, empty keys left out; a run without
 * --secret-dir or with a missing Secret is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/cmd/cmd_vm.h"
#include "vmm/util/secret.h"
#include "vmm/vm_config.h"

static char root[64], outside[64];

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void sub(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	CHECK(mkdir(p, 0700) == 0);
}

static void link_at(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	CHECK(symlink(target, p) == 0);
}

static void test_names(void)
{
	CHECK(secret_name_ok("my-keys"));
	CHECK(secret_name_ok("a.b-c.d9"));
	CHECK(!secret_name_ok(""));
	CHECK(!secret_name_ok(".."));
	CHECK(!secret_name_ok("."));
	CHECK(!secret_name_ok("a/../.."));
	CHECK(!secret_name_ok("/etc"));
	CHECK(!secret_name_ok("-a"));
	CHECK(!secret_name_ok("a..b"));
	CHECK(!secret_name_ok("Upper"));
}

static void test_plain_and_kubelet(void)
{
	struct secret s;

	sub("keys");
	put("keys/b", "ssh-ed25519 BBBB b@h\n");
	put("keys/a", "ssh-ed25519 AAAA a@h\n");
	put("keys/empty", "");
	sub("keys/adir"); /* skipped, as KubeVirt skips directories */
	CHECK(secret_read(root, "keys", &s) == 0);
	CHECK_EQ_U64(s.n, 3);
	if (s.n == 3) {
		CHECK_STR(s.keys[0].name, "a");
		CHECK_STR(s.keys[0].value, "ssh-ed25519 AAAA a@h\n");
		CHECK_STR(s.keys[1].name, "b");
		CHECK_STR(s.keys[2].name, "empty");
		CHECK_EQ_U64(s.keys[2].len, 0);
	}
	secret_free(&s);
	CHECK(s.n == 0 && s.keys == NULL);

	/* a Secret volume as the kubelet mounts it: KEY -> ..data/KEY,
	 * ..data -> ..2026_11_27, all inside the root */
	sub("pw");
	sub("pw/..2026_11_27");
	put("pw/..2026_11_27/root", "s3cret");
	link_at("..2026_11_27", "pw/..data");
	link_at("..data/root", "pw/root");
	CHECK(secret_read(root, "pw", &s) == 0);
	CHECK_EQ_U64(s.n, 1);
	if (s.n == 1) {
		CHECK_STR(s.keys[0].name, "root");
		CHECK_STR(s.keys[0].value, "s3cret");
	}
	secret_free(&s);
}

static void test_attacks(void)
{
	char p[256];
	struct secret s;
	FILE *f;

	snprintf(p, sizeof(p), "%s/shadow", outside);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs("root:$6$secret:19000::::::\n", f);
		fclose(f);
	}
	CHECK(secret_read(root, "..", &s) == -EINVAL);
	CHECK(secret_read(root, "a/../..", &s) == -EINVAL);
	CHECK(secret_read(root, "/etc", &s) == -EINVAL);
	CHECK(secret_read(root, "missing", &s) == -ENOENT);
	/* a key that links out of the root (absolute, and by "..") */
	sub("evil");
	link_at(p, "evil/shadow");
	CHECK(secret_read(root, "evil", &s) == -EXDEV);
	sub("evil2");
	snprintf(p, sizeof(p), "../../%s/shadow", strrchr(outside, '/') + 1);
	link_at(p, "evil2/shadow");
	CHECK(secret_read(root, "evil2", &s) == -EXDEV);
	/* the Secret directory itself a link out of the root */
	link_at(outside, "evil3");
	CHECK(secret_read(root, "evil3", &s) == -EXDEV);
	/* a FIFO as a key: refused without blocking */
	sub("fifo");
	snprintf(p, sizeof(p), "%s/fifo/k", root);
	CHECK(mkfifo(p, 0600) == 0);
	CHECK(secret_read(root, "fifo", &s) == -EMEDIUMTYPE);
	/* a key above the limit */
	sub("big");
	snprintf(p, sizeof(p), "%s/big/k", root);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		for (unsigned int i = 0; i <= SECRET_MAX_VALUE; i++)
			fputc('k', f);
		fclose(f);
	}
	CHECK(secret_read(root, "big", &s) == -EFBIG);
	CHECK(s.n == 0 && s.keys == NULL);
}

static void drop_keys(struct vm_disk *d)
{
	for (unsigned int i = 0; i < d->n_meta_public_keys; i++)
		free(d->meta_public_keys[i]);
	free(d->meta_public_keys);
	d->meta_public_keys = NULL;
	d->n_meta_public_keys = 0;
}

static void test_run_access(void)
{
	struct vm_disk disks[2] = {{.source = VM_DISK_CLOUDINIT_NOCLOUD},
				   {.source = VM_DISK_CLOUDINIT_CONFIGDRIVE}};
	struct vm_access_cred creds[2] = {
	    {.type = VM_CRED_SSH_KEY, .method = VM_CRED_NOCLOUD, .secret = "keys"},
	    {.type = VM_CRED_PASSWORD, .method = VM_CRED_AGENT, .secret = "pw"}};
	struct vm_config cfg = {
	    .disks = disks, .n_disks = 2, .access_creds = creds, .n_access_creds = 2};
	struct cmd_vm_opts o = {.channels = true};

	CHECK(cmd_vm_access(&o, &cfg) == -EINVAL); /* no --secret-dir */
	o.secret_dir = root;
	CHECK(cmd_vm_access(&o, &cfg) == 0);
	CHECK_EQ_U64(disks[0].n_meta_public_keys, 2);
	CHECK_EQ_U64(disks[1].n_meta_public_keys, 0);
	if (disks[0].n_meta_public_keys == 2) {
		CHECK_STR(disks[0].meta_public_keys[0], "ssh-ed25519 AAAA a@h\n");
		CHECK_STR(disks[0].meta_public_keys[1], "ssh-ed25519 BBBB b@h\n");
	}
	drop_keys(&disks[0]);
	creds[1].secret = "nope";
	CHECK(cmd_vm_access(&o, &cfg) == -EINVAL);
	drop_keys(&disks[0]);
	creds[1].secret = "evil";
	CHECK(cmd_vm_access(&o, &cfg) == -EINVAL); /* a key linked out of the root */
	drop_keys(&disks[0]);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/vmlet-secret.XXXXXX");
	snprintf(outside, sizeof(outside), "/tmp/vmlet-outside.XXXXXX");
	if (!mkdtemp(root) || !mkdtemp(outside))
		return 1;
	TEST_RUN(test_names);
	TEST_RUN(test_plain_and_kubelet);
	TEST_RUN(test_attacks);
	TEST_RUN(test_run_access);
	{
		char cmd[200];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s' '%s'", root, outside);
		if (system(cmd))
			return 1;
	}
	return test_summary();
}
