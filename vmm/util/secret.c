// SPDX-License-Identifier: MIT
/*
 * secret.c - a Secret read from DIR/NAME/KEY files beneath --secret-dir
 * (secret.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vmm/util/file.h"
#include "vmm/util/secret.h"

bool secret_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > 253)
		return false;
	/* labels of [a-z0-9-], each starting and ending alphanumeric */
	for (size_t i = 0; i < n; i++) {
		char c = name[i], prev = i ? name[i - 1] : '.', next = name[i + 1];
		bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');

		if (alnum)
			continue;
		if (c == '-' && prev != '.' && next && next != '.')
			continue;
		if (c == '.' && prev != '.' && prev != '-' && next && next != '-')
			continue;
		return false;
	}
	return true;
}

void secret_free(struct secret *s)
{
	for (unsigned int i = 0; i < s->n; i++) {
		if (s->keys[i].value) {
			explicit_bzero(s->keys[i].value, s->keys[i].len);
			free(s->keys[i].value);
		}
		free(s->keys[i].name);
	}
	free(s->keys);
	s->keys = NULL;
	s->n = 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in DIR/NAME (opened beneath DIR), sorted, without "..*". */
static int secret_list(const char *root, const char *name, char ***names, unsigned int *n)
{
	struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};
	int rootfd, fd, r = 0;
	struct dirent *de;
	DIR *d;

	*names = NULL;
	*n = 0;
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = (int)syscall(SYS_openat2, rootfd, name, &how, sizeof(how));
	r = fd < 0 ? -errno : 0;
	close(rootfd);
	if (r)
		return r;
	d = fdopendir(fd);
	if (!d) {
		r = -errno;
		close(fd);
		return r;
	}
	*names = calloc(SECRET_MAX_KEYS, sizeof(**names));
	while (*names && (errno = 0, de = readdir(d))) {
		/* the kubelet's own names, and directories, as KubeVirt */
		if (!strncmp(de->d_name, "..", 2) || !strcmp(de->d_name, ".") ||
		    de->d_type == DT_DIR)
			continue;
		if (*n == SECRET_MAX_KEYS) {
			r = -E2BIG;
			break;
		}
		(*names)[*n] = strdup(de->d_name);
		if (!(*names)[(*n)++]) {
			r = -ENOMEM;
			break;
		}
	}
	if (!*names)
		r = -ENOMEM;
	else if (!r && errno)
		r = -errno;
	closedir(d);
	if (!r && *n)
		qsort(*names, *n, sizeof(**names), name_cmp);
	return r;
}

/* Read one key (a regular file beneath root) into k. */
static int secret_key_read(const char *root, const char *name, const char *key,
			   struct secret_key *k)
{
	const struct file_where w = {.root = root, .follow = true};
	char *rel = malloc(strlen(name) + strlen(key) + 2);
	int fd, r = 0;
	ssize_t got;

	if (!rel)
		return -ENOMEM;
	strcpy(rel, name);
	strcat(rel, "/");
	strcat(rel, key);
	fd = file_open(&w, rel, O_RDONLY);
	free(rel);
	if (fd < 0)
		return fd;
	k->value = malloc(SECRET_MAX_VALUE + 1);
	k->len = 0;
	while (k->value &&
	       (got = read(fd, k->value + k->len, SECRET_MAX_VALUE + 1 - k->len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			break;
		}
		k->len += (size_t)got;
		if (k->len > SECRET_MAX_VALUE) {
			r = -EFBIG;
			break;
		}
	}
	close(fd);
	if (!k->value)
		return -ENOMEM;
	k->value[r ? 0 : k->len] = '\0';
	return r;
}

int secret_read(const char *root, const char *name, struct secret *out)
{
	unsigned int n = 0, i;
	size_t total = 0;
	char **names;
	int r;

	memset(out, 0, sizeof(*out));
	if (!secret_name_ok(name) || !root)
		return -EINVAL;
	r = secret_list(root, name, &names, &n);
	if (!r && n) {
		out->keys = calloc(n, sizeof(*out->keys));
		r = out->keys ? 0 : -ENOMEM;
	}
	for (i = 0; !r && i < n; i++) {
		struct secret_key *k = &out->keys[out->n];

		r = secret_key_read(root, name, names[i], k);
		k->name = names[i];
		names[i] = NULL;
		out->n++;
		total += k->len;
		if (!r && total > SECRET_MAX_TOTAL)
			r = -EFBIG;
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (r)
		secret_free(out);
	return r;
}
