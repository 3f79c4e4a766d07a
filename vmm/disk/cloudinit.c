// SPDX-License-Identifier: MIT
/*
 * cloudinit.c - NoCloud and ConfigDrive seed images (cloudinit.h).
 * The file contents follow what KubeVirt puts on its seed disks: YAML
 * meta-data for NoCloud, meta_data.json for ConfigDrive.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/disk/cloudinit.h"
#include "vmm/util/file.h"
#include "vmm/util/json_out.h"
#include "vmm/util/log.h"
#include "vmm/vm_config.h"

/* A YAML scalar that is always a string: a JSON string (double-quoted,
 * escaped as json-c does, '/' left alone) is a valid YAML double-quoted
 * scalar. 0 or -ENOMEM / -EIO. */
static int yaml_str(FILE *f, const char *s)
{
	struct json_object *o = json_out_str(s);
	int r = json_out_write(f, o);

	json_object_put(o);
	return r;
}

/* NoCloud's meta-data, YAML. */
static int cloudinit_meta_yaml(FILE *f, const struct vm_disk *d, const char *id, const char *host,
			       const char *type)
{
	int r = 0;

	if (type && *type) {
		fputs("instance-type: ", f);
		r = yaml_str(f, type);
		fputc('\n', f);
	}
	fputs("instance-id: ", f);
	r = r ?: yaml_str(f, id);
	if (host && *host) {
		fputs("\nlocal-hostname: ", f);
		r = r ?: yaml_str(f, host);
	}
	fputc('\n', f);
	/* accessCredentials with propagationMethod noCloud (KubeVirt's
	 * NoCloudMetadata.PublicSSHKeys): "0", "1"... -> a key file each */
	if (d->n_meta_public_keys)
		fputs("public-keys:\n", f);
	for (unsigned int i = 0; i < d->n_meta_public_keys; i++) {
		fprintf(f, "  \"%u\": ", i);
		r = r ?: yaml_str(f, d->meta_public_keys[i]);
		fputc('\n', f);
	}
	return r;
}

/* ConfigDrive's meta_data.json. */
static int cloudinit_meta_json(FILE *f, const struct vm_disk *d, const char *id, const char *host,
			       const char *type, const char *uuid)
{
	struct json_object *o = json_object_new_object(), *keys;
	char idx[16];
	int r = 0;

	if (type && *type)
		r = json_out_add_str(o, "instance_type", type);
	r = r ?: json_out_add_str(o, "instance_id", id);
	if (host && *host)
		r = r ?: json_out_add_str(o, "hostname", host);
	if (uuid && *uuid)
		r = r ?: json_out_add_str(o, "uuid", uuid);
	/* accessCredentials with propagationMethod configDrive */
	if (d->n_meta_public_keys) {
		keys = json_object_new_object();
		for (unsigned int i = 0; !r && i < d->n_meta_public_keys; i++) {
			snprintf(idx, sizeof(idx), "%u", i);
			r = json_out_add_str(keys, idx, d->meta_public_keys[i]);
		}
		json_object_object_add(o, "public_keys", keys);
	}
	r = r ?: json_out_write(f, o);
	fputc('\n', f);
	json_object_put(o);
	return r;
}

/* KubeVirt's NoCloudMetadata / ConfigDriveMetadata (pkg/cloud-init), in
 * its field order; empty optional fields left out as its omitempty does */
static char *cloudinit_meta(bool nocloud, const struct vm_disk *d, size_t *len)
{
	const char *id = d->meta_instance_id ? d->meta_instance_id : "";
	const char *host = d->meta_hostname, *type = d->meta_instance_type;
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	int r;

	if (!f)
		return NULL;
	r = nocloud ? cloudinit_meta_yaml(f, d, id, host, type)
		    : cloudinit_meta_json(f, d, id, host, type, d->meta_uuid);
	if (fclose(f) || r) {
		free(buf);
		return NULL;
	}
	return buf;
}

int cloudinit_build(const struct vm_disk *d, uint8_t **out, size_t *out_len)
{
	bool nocloud = d->source == VM_DISK_CLOUDINIT_NOCLOUD;
	const char *ud = d->user_data ? d->user_data : "";
	struct iso9660_file files[3];
	unsigned int n = 0;
	size_t mlen = 0;
	char *meta;
	int r;

	if (!nocloud && d->source != VM_DISK_CLOUDINIT_CONFIGDRIVE)
		return -EINVAL;
	meta = cloudinit_meta(nocloud, d, &mlen);
	if (!meta)
		return -ENOMEM;
	files[n++] = (struct iso9660_file){
	    nocloud ? "meta-data" : "openstack/latest/meta_data.json", meta, mlen};
	files[n++] = (struct iso9660_file){nocloud ? "user-data" : "openstack/latest/user_data", ud,
					   strlen(ud)};
	if (d->network_data)
		files[n++] = (struct iso9660_file){nocloud ? "network-config"
							   : "openstack/latest/network_data.json",
						   d->network_data, strlen(d->network_data)};
	r = iso9660_build(nocloud ? "cidata" : "config-2", files, n, out, out_len);
	free(meta);
	return r;
}

int cloudinit_write_fd(const struct vm_disk *d, const char *dir)
{
	const char *tmp = dir ? dir : getenv("TMPDIR");
	uint8_t *img = NULL;
	size_t len = 0, done = 0;
	int fd, r;

	r = cloudinit_build(d, &img, &len);
	if (r)
		return error_errno(r, "cloud-init: cannot build the seed image for disk '%s'",
				   d->name ? d->name : "?");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	fd = file_tmp(tmp);
	if (fd < 0) {
		r = error_errno(fd, "cloud-init: cannot create a seed image in '%s'", tmp);
		goto out;
	}
	while (done < len) {
		ssize_t w = write(fd, img + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r = error_errno(w < 0 ? -errno : -EIO,
					"cloud-init: cannot write the seed image in '%s'", tmp);
			break;
		}
		done += (size_t)w;
	}
	if (r)
		close(fd);
out:
	free(img);
	return r ? r : fd;
}
