/* SPDX-License-Identifier: MIT */
/*
 * devices.h - the device types vmm/vm/device.c lists in its table.
 */
#ifndef VMLET_DEV_DEVICES_H
#define VMLET_DEV_DEVICES_H

#include <stdint.h>

#include "vmm/vm/device.h"

extern const struct device_type legacy_ports_device; /* dev/legacy.c */
extern const struct device_type rtc_device;	     /* dev/rtc.c */
extern const struct device_type i8042_device;	     /* dev/i8042.c */
extern const struct device_type serial8250_device;   /* dev/serial8250.c */
extern const struct device_type acpi_pm_device;	     /* dev/pm.c */
extern const struct device_type report_port_device;  /* dev/report_port.c */
extern const struct device_type efi_port_device;     /* dev/efi_port.c */
extern const struct device_type fw_cfg_device;	     /* dev/fw_cfg.c */

/* PM1 register bits (ACPI 6.5 §4.8.3.1, §4.8.3.2.1) */
#define PM1_STS_PWRBTN	   (1u << 8)
#define PM1_STS_WAK	   (1u << 15)
#define PM1_CNT_SCI_EN	   (1u << 0)
#define PM1_CNT_SLP_EN	   (1u << 13)
#define PM1_CNT_SLP_TYP(v) (((v) >> 10) & 7u)

#endif /* VMLET_DEV_DEVICES_H */
