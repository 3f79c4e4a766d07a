// SPDX-License-Identifier: MIT
/*
 * vmm/ctl/creds.h: accessCredentials with qemuGuestAgent applied through a
 * stand-in guest agent (a thread on a Unix socket that speaks qemu-ga's
 * protocol and records every command). SSH keys: one
 * guest-ssh-add-authorized-keys per user with reset true and the keys of
 * every Secret naming that user (comments, blank lines and a line with a
 * terminal escape left out); passwords: guest-set-user-password with the
 * password in base64, crypted false; a key that is no user name skipped.
 * A refusing agent (-EREMOTEIO), a silent one (-ETIMEDOUT), an unreadable
 * Secret (-EINVAL, no session at all); the fingerprint follows the files.
 */
#include <errno.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/lib/test.h"
#include "vmm/ctl/creds.h"
#include "vmm/vm_config.h"

static char dir[64], sock[128];
static int lfd = -1;

enum agent_mode { AGENT_GOOD, AGENT_REFUSE, AGENT_SILENT };
static enum agent_mode mode;
static char log_buf[8192]; /* the commands the agent got, one per line */

static void put(const char *rel, const char *text)
{
	char p[256];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, rel);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void agent_line(int c, const char *line)
{
	json_object *req = json_tokener_parse(line), *cmd, *args, *id;
	const char *name;
	char out[256];

	if (!req || !json_object_object_get_ex(req, "execute", &cmd))
		goto out;
	name = json_object_get_string(cmd);
	json_object_object_get_ex(req, "arguments", &args);
	if (!strcmp(name, "guest-sync-delimited")) {
		json_object_object_get_ex(args, "id", &id);
		snprintf(out, sizeof(out), "\xff{\"return\": %lld}\n",
			 (long long)json_object_get_int64(id));
	} else {
		snprintf(log_buf + strlen(log_buf), sizeof(log_buf) - strlen(log_buf), "%s %s\n",
			 name, json_object_to_json_string_ext(args, JSON_C_TO_STRING_PLAIN));
		if (mode == AGENT_SILENT)
			goto out;
		snprintf(out, sizeof(out), "%s\n",
			 mode == AGENT_REFUSE
			     ? "{\"error\": {\"class\": \"GenericError\", \"desc\": "
			       "\"no such user\\u001b[2J\"}}"
			     : "{\"return\": {}}");
	}
	if (write(c, out, strlen(out)) < 0)
		perror("agent write");
out:
	json_object_put(req);
}

/* Serve one client until it closes. */
static void *agent_thread(void *arg)
{
	char buf[16384];
	size_t n = 0;
	ssize_t got;
	int c = accept(lfd, NULL, NULL);

	(void)arg;
	while (c >= 0 && (got = read(c, buf + n, sizeof(buf) - 1 - n)) > 0) {
		char *nl, *p = buf;

		n += (size_t)got;
		buf[n] = 0;
		while ((nl = memchr(p, '\n', n - (size_t)(p - buf)))) {
			*nl = 0;
			while (*p == '\xff')
				p++;
			if (*p)
				agent_line(c, p);
			p = nl + 1;
		}
		n -= (size_t)(p - buf);
		memmove(buf, p, n);
	}
	if (c >= 0)
		close(c);
	return NULL;
}

static int apply(enum agent_mode m, const struct vm_config *cfg, unsigned int timeout_ms)
{
	pthread_t t;
	int r;

	mode = m;
	log_buf[0] = 0;
	pthread_create(&t, NULL, agent_thread, NULL);
	r = ctl_creds_apply(cfg, dir, sock, timeout_ms, NULL);
	if (r == -EINVAL) { /* no session: let the thread go */
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		struct sockaddr_un sa = {.sun_family = AF_UNIX};

		strcpy(sa.sun_path, sock);
		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)))
			perror("connect");
		close(c);
	}
	pthread_join(t, NULL);
	return r;
}

static char *users_root_debian[] = {"root", "debian"}, *users_debian[] = {"debian"},
	    *users_bad[] = {"evil:user"};
static struct vm_access_cred creds[] = {
    {.type = VM_CRED_SSH_KEY,
     .method = VM_CRED_AGENT,
     .secret = "keys",
     .users = users_root_debian,
     .n_users = 2},
    {.type = VM_CRED_SSH_KEY,
     .method = VM_CRED_AGENT,
     .secret = "keys2",
     .users = users_debian,
     .n_users = 1},
    {.type = VM_CRED_PASSWORD, .method = VM_CRED_AGENT, .secret = "pw"},
    {.type = VM_CRED_SSH_KEY, .method = VM_CRED_NOCLOUD, .secret = "not-read"},
    {.type = VM_CRED_SSH_KEY,
     .method = VM_CRED_AGENT,
     .secret = "keys2",
     .users = users_bad,
     .n_users = 1},
};
static struct vm_config cfg = {.access_creds = creds, .n_access_creds = 5};

static void test_good(void)
{
	CHECK(ctl_creds_wanted(&cfg));
	CHECK(apply(AGENT_GOOD, &cfg, 5000) == 0);
	CHECK_STR(log_buf,
		  "guest-ssh-add-authorized-keys {\"username\":\"root\",\"keys\":[\"ssh-ed25519 "
		  "AAAA a@h\",\"ssh-rsa BBBB b@h\"],\"reset\":true}\n"
		  "guest-ssh-add-authorized-keys {\"username\":\"debian\",\"keys\":[\"ssh-ed25519 "
		  "AAAA a@h\",\"ssh-rsa BBBB b@h\",\"ssh-ed25519 DDDD d@h\"],\"reset\":true}\n"
		  "guest-set-user-password {\"username\":\"root\",\"password\":\"czNjcmV0\","
		  "\"crypted\":false}\n");
}

static void test_hostile(void)
{
	struct vm_config one = {.access_creds = &creds[2], .n_access_creds = 1};
	uint64_t h1 = 0, h2 = 0;

	CHECK(apply(AGENT_REFUSE, &one, 5000) == -EREMOTEIO);
	CHECK(strstr(log_buf, "guest-set-user-password") != NULL);
	CHECK(apply(AGENT_SILENT, &one, 300) == -ETIMEDOUT);
	/* an unreadable Secret: no session, nothing sent */
	creds[2].secret = "missing";
	CHECK(apply(AGENT_GOOD, &one, 5000) == -EINVAL);
	CHECK_STR(log_buf, "");
	creds[2].secret = "pw";
	CHECK(ctl_creds_fingerprint(&cfg, dir, &h1) == 0);
	put("keys2/k", "ssh-ed25519 EEEE e@h\n");
	CHECK(ctl_creds_fingerprint(&cfg, dir, &h2) == 0);
	CHECK(h1 != h2);
	CHECK(ctl_creds_fingerprint(&cfg, dir, &h1) == 0);
	CHECK(h1 == h2);
}

int main(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char cmd[200];

	snprintf(dir, sizeof(dir), "/tmp/vmlet-creds.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(sock, sizeof(sock), "%s/ga.sock", dir);
	strcpy(sa.sun_path, sock);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4))
		return 1;
	snprintf(cmd, sizeof(cmd), "%s/keys", dir);
	mkdir(cmd, 0700);
	snprintf(cmd, sizeof(cmd), "%s/keys2", dir);
	mkdir(cmd, 0700);
	snprintf(cmd, sizeof(cmd), "%s/pw", dir);
	mkdir(cmd, 0700);
	put("keys/a", "ssh-ed25519 AAAA a@h\n# a comment\n\n  ssh-rsa BBBB b@h\r\n");
	put("keys/b", "ssh-ed25519 CCCC \x1b]0;owned\x07 c@h\n");
	put("keys2/k", "ssh-ed25519 DDDD d@h");
	put("pw/root", "s3cret");
	put("pw/bad:user", "x");
	TEST_RUN(test_good);
	TEST_RUN(test_hostile);
	close(lfd);
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", dir);
	if (system(cmd))
		return 1;
	return test_summary();
}
