/* SPDX-License-Identifier: MIT */
/*
 * vm_config.h - the plain guest configuration: the contract between spec/
 * (which resolves KubeVirt manifests into it) and vmm/ (which runs it).
 *
 * Nothing here knows YAML, JSON, instancetypes or preferences. Every string
 * is an owned, NUL-terminated heap copy (or NULL when unset); every array is
 * owned and has an explicit count. vm_config_release() frees all of it.
 *
 * Units: bytes for sizes, seconds for times. A value of 0 / NULL / false
 * means "not set" unless a field says otherwise.
 */
#ifndef VMLET_VM_CONFIG_H
#define VMLET_VM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

enum vm_boot_kind {
	VM_BOOT_NONE = 0, /* no manifest and no --kernel: vmm refuses to start */
	VM_BOOT_KERNEL,	  /* firmware.kernelBoot or --kernel: bzImage or PVH ELF */
	VM_BOOT_EFI,	  /* bootloader.efi: vmlet's own firmware or --firmware */
	VM_BOOT_BIOS,	  /* bootloader.bios or none (KubeVirt's default): SeaBIOS */
};

enum vm_disk_source {
	VM_DISK_CONTAINERDISK = 0,
	VM_DISK_HOSTDISK,
	VM_DISK_PVC,
	VM_DISK_DATAVOLUME,
	VM_DISK_EMPTYDISK,
	VM_DISK_CLOUDINIT_NOCLOUD,
	VM_DISK_CLOUDINIT_CONFIGDRIVE,
	VM_DISK_OTHER, /* a volume kind vmlet cannot back (secret, configMap...) */
	VM_DISK_NONE,  /* no volume: an empty CD-ROM drive (cdrom only) */
};

enum vm_disk_device { VM_DEV_DISK = 0, VM_DEV_CDROM, VM_DEV_LUN };

enum vm_cache_mode {
	VM_CACHE_DEFAULT = 0,  /* unset: none where the image takes O_DIRECT, else
				* writethrough (KubeVirt; vmm/disk/volume.c) */
	VM_CACHE_NONE,	       /* O_DIRECT */
	VM_CACHE_WRITETHROUGH, /* O_DSYNC */
	VM_CACHE_WRITEBACK,
};

/* KubeVirt's disk errorPolicy (libvirt error_policy) for a host I/O error:
 * stop pauses the VM with the request pending (resume retries it), report
 * fails the request to the guest, ignore completes it as if it had
 * worked, enospace stops on ENOSPC and reports anything else. */
enum vm_error_policy {
	VM_ERROR_STOP = 0, /* KubeVirt's default */
	VM_ERROR_REPORT,
	VM_ERROR_IGNORE,
	VM_ERROR_ENOSPACE,
};

struct vm_disk {
	char *name; /* disk / volume name */
	enum vm_disk_device device;
	char *bus; /* "virtio", "sata", "scsi", ... NULL = unset */
	enum vm_disk_source source;
	char *path;	  /* host path of the backing file (NULL for
			   * emptyDisk / cloud-init: the vmm creates them; for a
			   * containerDisk with an image store: found there) */
	char *image;	  /* containerDisk.image (NULL for other volumes) */
	char *image_path; /* containerDisk.path, NULL = the one file in /disk */
	bool read_only;
	bool tray_open; /* cdrom.tray: open (the guest sees no medium until it
			 * closes the tray) */
	bool shareable; /* several writers may use the image (lock shared) */
	enum vm_error_policy error_policy;
	char *serial; /* disk serial (virtio-blk GET_ID), NULL = none */
	enum vm_cache_mode cache;
	char *io;		      /* "native" / "threads" / NULL */
	uint32_t boot_order;	      /* 0 = none */
	uint64_t capacity;	      /* emptyDisk / DiskOrCreate capacity in bytes */
	bool create_missing;	      /* hostDisk DiskOrCreate: made sparse, of
				       * capacity, when path does not exist;
				       * false (Disk): never created */
	uint32_t logical_block_size;  /* 0 = 512 */
	uint32_t physical_block_size; /* 0 = logical */
	bool dedicated_io_thread;
	/* cloud-init payloads (NoCloud / ConfigDrive); decoded, not base64 */
	char *user_data;
	char *network_data;
	/* their meta-data, decided by spec/ as KubeVirt's virt-launcher does
	 * (pkg/cloud-init): NoCloud instance-id the firmware UUID,
	 * ConfigDrive instance_id NAME.NAMESPACE and uuid the firmware UUID;
	 * the hostname; the instancetype's name, NULL = none */
	char *meta_instance_id;
	char *meta_uuid; /* ConfigDrive only */
	char *meta_hostname;
	char *meta_instance_type;
	/* SSH public keys for the meta-data's public-keys (NoCloud) /
	 * public_keys (ConfigDrive), as KubeVirt's accessCredentials with
	 * propagationMethod noCloud / configDrive: filled by vmm/ (the
	 * secrets are files: vmm/util/secret.h), not by spec/; each one
	 * secret file's whole content, keyed "0", "1"... in order */
	char **meta_public_keys;
	unsigned int n_meta_public_keys;
	/* Where path may be opened (vmm/disk/volume.c, vmm/util/file.h). root: the
	 * directory path is under and must stay under when opened (--disk-root
	 * for a containerDisk, the PVC directory, an image's unpack directory;
	 * NULL = none). operator_path: path is the operator's (--volume): it
	 * may be a symlink or a host block device. */
	char *root;
	bool operator_path;
};

enum vm_binding {
	VM_BIND_NONE = 0,
	VM_BIND_BRIDGE,
	VM_BIND_MASQUERADE,
	VM_BIND_PASST,
	VM_BIND_SRIOV,
	VM_BIND_SLIRP,
	VM_BIND_MACVTAP,
	VM_BIND_PLUGIN, /* binding.name holds the plugin name */
};

struct vm_port {
	char *name;
	char *protocol; /* "TCP" / "UDP" */
	uint16_t port;
};

struct vm_nic {
	char *name;
	char *model; /* "virtio", "e1000", ... NULL = unset */
	uint8_t mac[6];
	bool mac_set; /* false: the vmm derives a stable one */
	enum vm_binding binding;
	char *binding_plugin; /* VM_BIND_PLUGIN only */
	char *network_type;   /* "pod" / "multus" */
	char *network_name;   /* multus networkName */
	char *tap;	      /* --tap IFACE=TAP or annotation; NULL = auto */
	uint32_t mtu;	      /* 0 = backend default */
	struct vm_port *ports;
	unsigned int n_ports;
};

/* Hyper-V enlightenments: features.hyperv and clock.timer.hyperv as
 * KubeVirt leaves them (a present feature is on unless "enabled: false";
 * its mutating webhook turns on a requirement left unset: vpindex for
 * synic, ipi and tlbflush, synic for synictimer, vapic for evmcs). Each
 * true is the QEMU hv-* flag libvirt gives for it; the sub-features
 * (direct, extended) only with their parent on. */
struct vm_hyperv {
	bool relaxed, vapic, spinlocks, vpindex, runtime, synic, synictimer;
	bool synictimer_direct, reset, frequencies, reenlightenment, tlbflush;
	bool tlbflush_direct, tlbflush_extended, ipi, evmcs;
	bool time;		   /* clock.timer.hyperv: hv-time */
	bool passthrough;	   /* hypervPassthrough: hv-passthrough */
	uint32_t spinlock_retries; /* with spinlocks: 4095 or more */
	char vendor_id[13];	   /* vendorid: 1..12 printable characters; "" = none */
};

#define VM_MAX_CHANNELS	       8  /* = VIRTIO_CONSOLE_MAX_PORTS */
#define VM_CHANNEL_NAME_MAX    63 /* = VIRTIO_CONSOLE_NAME_MAX */
#define VM_CHANNEL_GUEST_AGENT "org.qemu.guest_agent.0"
/* devices.downwardMetrics: vhostmd's virtio-serial port (KubeVirt's
 * converter, compute/channels.go) */
#define VM_CHANNEL_DOWNWARD_METRICS "org.github.vhostmd.1"

/* SATA disks and CD-ROMs: the ports of vmlet's one AHCI controller
 * (= AHCI_PORTS); spec/ refuses a seventh (KubeVirt adds a controller) */
#define VM_MAX_SATA 6

/* spec.accessCredentials[] (KubeVirt's v1.AccessCredential) */
enum vm_cred_type {
	VM_CRED_SSH_KEY = 1, /* sshPublicKey */
	VM_CRED_PASSWORD,    /* userPassword */
};
enum vm_cred_method {
	VM_CRED_AGENT = 1,    /* propagationMethod.qemuGuestAgent */
	VM_CRED_NOCLOUD,      /* noCloud: the cloud-init meta-data */
	VM_CRED_CONFIG_DRIVE, /* configDrive: likewise */
};
#define VM_MAX_ACCESS_CREDS 64
#define VM_MAX_CRED_USERS   64
struct vm_access_cred {
	enum vm_cred_type type;
	enum vm_cred_method method;
	char *secret; /* source.secret.secretName */
	/* qemuGuestAgent.users of an SSH key (the guest users whose
	 * authorized_keys get the keys); none for the others */
	char **users;
	unsigned int n_users;
};

struct vm_config {
	/* identity */
	char *name;
	char *namespace;
	char *uid;
	char *hostname;	    /* spec.hostname, else name */
	char *run_strategy; /* "Always", "Halted", ...; NULL = legacy running */

	/* CPU: effective topology, never 0 */
	uint32_t sockets, cores, threads;
	uint32_t max_sockets;	      /* 0 = unset */
	char *cpu_model;	      /* NULL = unset */
	bool dedicated_cpu_placement; /* each vCPU thread on its own host CPU */
	bool isolate_emulator_thread; /* and the other threads on one more */
	uint64_t cpu_limit_millis;    /* domain.resources.limits.cpu, 0 = unset */

	/* memory */
	uint64_t memory_bytes;	  /* effective guest memory */
	uint64_t hugepage_size;	  /* 0 = none; 2 MiB or 1 GiB */
	uint64_t max_guest_bytes; /* 0 = unset */

	/* firmware */
	enum vm_boot_kind boot;
	char *kernel_path; /* VM_BOOT_KERNEL */
	char *initrd_path;
	/* the directory kernel_path / initrd_path are under and must stay
	 * under (--disk-root, for kernelBoot.container): NULL = none */
	char *kernel_root;
	char *initrd_root;
	char *cmdline;
	bool efi_secure_boot; /* effective secure boot (EFI only) */
	bool efi_persistent;
	bool bios_use_serial;  /* bootloader.bios.useSerial: BIOS console on COM1 */
	bool bios_default;     /* BIOS because the VMI has no bootloader at all */
	char *firmware_uuid;   /* firmware.uuid (SMBIOS) */
	char *firmware_serial; /* firmware.serial (SMBIOS) */

	/* features */
	bool acpi; /* true unless features.acpi.enabled=false */
	bool smm;
	/* devices.tpm (not enabled: false): a TPM 2.0 backed by swtpm;
	 * tpm_persistent: its state outlives the run (tpm.persistent) */
	bool tpm;
	bool tpm_persistent;
	struct vm_hyperv hyperv;
	bool kvm_hidden;    /* features.kvm.hidden: no KVM signature in CPUID */
	char *machine_type; /* NULL = unset */
	char *architecture; /* NULL = unset (amd64) */

	/* clock: the RTC shows UTC + rtc_offset_seconds, or the local time of
	 * rtc_timezone (its UTC offset when the VM starts) when that is set;
	 * spec/ leaves rtc_timezone NULL when clock.utc is set (KubeVirt's
	 * converter lets utc win) */
	int64_t rtc_offset_seconds; /* clock.utc.offsetSeconds */
	char *rtc_timezone;	    /* clock.timezone (IANA name), NULL = UTC */

	/* devices */
	struct vm_disk *disks;
	unsigned int n_disks;
	struct vm_nic *nics;
	unsigned int n_nics;
	bool rng;
	/* autoattachMemBalloon (KubeVirt's default true): a virtio-balloon
	 * with a statistics queue (vmm/virtio/virtio_balloon.h) */
	bool mem_balloon;
	/* ... that also offers free page reporting: KubeVirt turns it off for
	 * dedicatedCpuPlacement, cpu.realtime, memory.hugepages and the
	 * annotation kubevirt.io/free-page-reporting-disabled: "true" */
	bool free_page_reporting;
	bool autoattach_serial_console; /* default true */
	/* autoattachVSOCK: the guest's vsock context id (3..2^31-1, spec/
	 * derives it from namespace/name: spec_vsock_cid()), 0 = no device
	 * (vmm/virtio/virtio_vsock.h) */
	uint64_t vsock_cid;
	/* virtio-serial channels (vmm/virtio/virtio_console.h): KubeVirt's
	 * converter gives every VMI "org.qemu.guest_agent.0" */
	char channels[VM_MAX_CHANNELS][VM_CHANNEL_NAME_MAX + 1];
	unsigned int n_channels;
	/* devices.downwardMetrics: the channel VM_CHANNEL_DOWNWARD_METRICS is
	 * among channels[] and its host side serves the metrics document */
	bool downward_metrics;
	struct vm_access_cred *access_creds;
	unsigned int n_access_creds;
	bool block_multi_queue;
	bool net_multi_queue;

	/* lifecycle */
	int64_t termination_grace_seconds; /* KubeVirt default 30 */
	bool start_paused;		   /* startStrategy: Paused */
};

/* Free every owned string and array and zero *cfg. Safe on a zeroed cfg. */
void vm_config_release(struct vm_config *cfg);

/* The number of vCPUs: sockets * cores * threads (arch_topo_vcpus()); 0
 * when a count is 0. */
uint64_t vm_config_vcpus(const struct vm_config *cfg);

/* Fill *cfg with vmlet's built-in defaults (1/1/1 vCPU, 64 MiB, ACPI on,
 * grace 30 s, serial console on). Owned fields are left NULL. */
void vm_config_init(struct vm_config *cfg);

#endif /* VMLET_VM_CONFIG_H */
