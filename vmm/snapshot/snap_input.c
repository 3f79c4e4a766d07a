/* SPDX-License-Identifier: MIT */
/*
 * snap_input.c - the manifests a snapshot records (snap_input.h). Every
 * length is checked before a byte is used.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec/spec.h"
#include "vmm/snapshot/snap_file.h"
#include "vmm/snapshot/snap_input.h"
#include "vmm/snapshot/snapshot.h"

void snap_input_add(struct snap_buf *b, const char *text, size_t len)
{
	snap_buf_item(b, SNAP_INPUT_TEXT, text, len);
}

int snap_input_texts(const struct snap_file *f, struct spec_text **out, unsigned int *n, char *err,
		     size_t errlen)
{
	const struct snap_section *s = snap_file_find(f, SNAP_SEC_INPUT, 0);
	struct spec_text *t = NULL;
	struct snap_cur c, body;
	unsigned int k = 0;
	uint32_t tag;
	int ret;

	*out = NULL;
	*n = 0;
	if (!s)
		return -ENOENT;
	c = snap_cur_make(s->data, s->len);
	while (c.left) {
		ret = snap_cur_next(&c, &tag, &body);
		if (ret || tag != SNAP_INPUT_TEXT || body.left > SNAP_INPUT_MAX_LEN ||
		    k >= SNAP_INPUT_MAX_TEXTS) {
			snprintf(err, errlen,
				 "input section: item %u is not a manifest text of at most "
				 "%u bytes, or one too many",
				 k, SNAP_INPUT_MAX_LEN);
			free(t);
			return -EBADMSG;
		}
		if (!(k & (k - 1))) { /* 0, 1, 2, 4...: grow by doubling */
			struct spec_text *m = realloc(t, (k ? 2 * k : 1) * sizeof(*t));

			if (!m) {
				free(t);
				return -ENOMEM;
			}
			t = m;
		}
		t[k++] = (struct spec_text){
		    .name = "<snapshot manifest>", .text = (const char *)body.p, .len = body.left};
	}
	*out = t;
	*n = k;
	return 0;
}

int snapshot_read_state(const char *dir, uint8_t **data, size_t *len)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	if (dfd < 0)
		return -errno;
	ret = snap_read_state_at(dfd, data, len);
	close(dfd);
	return ret;
}
