/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "arch/arch.h"
#include "vmm/vm_config.h"

uint64_t vm_config_vcpus(const struct vm_config *cfg)
{
	const struct arch_topology t = {cfg->sockets, cfg->cores, cfg->threads};

	return arch_topo_vcpus(&t);
}

void vm_config_init(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->sockets = cfg->cores = cfg->threads = 1;
	cfg->memory_bytes = 64ull << 20;
	cfg->acpi = true;
	cfg->autoattach_serial_console = true;
	cfg->termination_grace_seconds = 30;
}

static void disk_release(struct vm_disk *d)
{
	free(d->name);
	free(d->bus);
	free(d->path);
	free(d->root);
	free(d->image);
	free(d->image_path);
	free(d->serial);
	free(d->io);
	free(d->user_data);
	free(d->network_data);
	free(d->meta_instance_id);
	free(d->meta_uuid);
	free(d->meta_hostname);
	free(d->meta_instance_type);
	for (unsigned int i = 0; i < d->n_meta_public_keys; i++)
		free(d->meta_public_keys[i]);
	free(d->meta_public_keys);
}

static void cred_release(struct vm_access_cred *c)
{
	for (unsigned int i = 0; i < c->n_users; i++)
		free(c->users[i]);
	free(c->users);
	free(c->secret);
}

static void nic_release(struct vm_nic *n)
{
	unsigned int i;

	for (i = 0; i < n->n_ports; i++) {
		free(n->ports[i].name);
		free(n->ports[i].protocol);
	}
	free(n->ports);
	free(n->name);
	free(n->model);
	free(n->binding_plugin);
	free(n->network_type);
	free(n->network_name);
	free(n->tap);
}

void vm_config_release(struct vm_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->n_disks; i++)
		disk_release(&cfg->disks[i]);
	for (i = 0; i < cfg->n_nics; i++)
		nic_release(&cfg->nics[i]);
	for (i = 0; i < cfg->n_access_creds; i++)
		cred_release(&cfg->access_creds[i]);
	free(cfg->access_creds);
	free(cfg->disks);
	free(cfg->nics);
	free(cfg->name);
	free(cfg->namespace);
	free(cfg->uid);
	free(cfg->hostname);
	free(cfg->run_strategy);
	free(cfg->cpu_model);
	free(cfg->rtc_timezone);
	free(cfg->kernel_path);
	free(cfg->initrd_path);
	free(cfg->kernel_root);
	free(cfg->initrd_root);
	free(cfg->cmdline);
	free(cfg->firmware_uuid);
	free(cfg->firmware_serial);
	free(cfg->machine_type);
	free(cfg->architecture);
	memset(cfg, 0, sizeof(*cfg));
}
