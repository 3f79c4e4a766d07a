#!/usr/bin/env python3
"""Walk docs/fields.md and run one VM per "implemented" and "differently" row.

usage: fields_walk.py VMLET TMPDIR [FIELD-SUBSTRING]

For every such row (parent rows are decided by their parent) a VM is made
from a small base (64Mi, one virtio emptyDisk, no pod interface) with that
field set to a value that satisfies the row's condition, and run with
`vmlet probe -o json`: the probe guest boots with it and its report must
match what vmlet expects. A "differently" row must produce vmlet's warning
for that field (a log line with the field's path), an "implemented" row
none for it, and neither may be refused. Rows this host cannot run are
listed with the reason (NOT_HERE). Prints one line per row; exit 1 when a
row failed.
"""
import copy
import json
import os
import re
import subprocess
import sys


ROW = re.compile(r'^\|\s*`([^`]+)`\s*\|([^|]*)\|([^|]*)\|([^|]*)\|\s*$')
T = 'spec.template.spec.'

# Values for fields whose type alone does not give a valid VM (paths
# relative to the VM; list items as []).
VALUES = {
    'spec.instancetype': {'name': 'it'},
    'spec.instancetype.name': 'it',
    'spec.instancetype.kind': 'VirtualMachineClusterInstancetype',

    'spec.preference': {'name': 'pref'},
    'spec.preference.name': 'pref',
    'spec.preference.kind': 'VirtualMachineClusterPreference',

    'spec.running': True,
    'spec.runStrategy': 'Always',
    'spec.template.metadata': {'labels': {'app': 'walk'}},
    T + 'architecture': 'amd64',
    T + 'hostname': 'walker',
    T + 'subdomain': 'sub',
    T + 'terminationGracePeriodSeconds': 5,
    T + 'domain.cpu.cores': 2,
    T + 'domain.cpu.sockets': 2,
    T + 'domain.cpu.threads': 2,
    T + 'domain.cpu.maxSockets': 4,
    T + 'domain.cpu.model': 'host-model',
    T + 'domain.cpu.features': [{'name': 'x2apic', 'policy': 'require'}],
    T + 'domain.cpu.realtime': {'mask': '0'},
    T + 'domain.memory.guest': '64Mi',
    T + 'domain.memory.maxGuest': '64Mi',
    T + 'domain.memory.reservedOverhead': {'addedOverhead': '1Mi'},
    T + 'domain.resources.requests': {'memory': '64Mi'},
    T + 'domain.resources.limits': {'memory': '64Mi', 'cpu': '1'},
    T + 'domain.resources.overcommitGuestOverhead': True,
    T + 'domain.clock.timezone': 'Etc/GMT-1',
    T + 'domain.clock.utc': {'offsetSeconds': 60},
    T + 'domain.clock.utc.offsetSeconds': 60,
    T + 'domain.clock.timer.rtc.tickPolicy': 'catchup',
    T + 'domain.clock.timer.rtc.track': 'guest',
    T + 'domain.clock.timer.pit.tickPolicy': 'delay',
    T + 'domain.machine.type': 'q35',
    T + 'domain.firmware.uuid': '11111111-2222-4333-8444-555555555555',
    T + 'domain.firmware.serial': 'walk-serial',
    T + 'domain.firmware.acpi': {'slicNameRef': 'slic'},
    T + 'domain.ioThreadsPolicy': 'shared',
    T + 'domain.ioThreads': {'supplementalPoolThreadCount': 1},
    T + 'domain.chassis': {'asset': 'a'},
    T + 'domain.devices.disks[].serial': 'walk-disk',
    T + 'domain.devices.disks[].bootOrder': 1,
    T + 'domain.devices.disks[].blockSize': {'custom': {'logical': 512, 'physical': 4096}},
    T + 'domain.devices.disks[].blockSize.custom': {'logical': 512, 'physical': 4096},
    T + 'domain.devices.disks[].blockSize.custom.logical': 512,
    T + 'domain.devices.disks[].blockSize.custom.physical': 4096,
    T + 'domain.devices.disks[].blockSize.custom.discardGranularity': 512,
    T + 'domain.devices.disks[].disk': {'bus': 'virtio'},
    T + 'domain.devices.disks[].disk.pciAddress': '0000:00:05.0',
    T + 'domain.devices.disks[].io': 'threads',
    T + 'domain.devices.disks[].tag': 'walk',
    T + 'domain.devices.disks[].name': 'd0',
    T + 'domain.devices.disks[].errorPolicy': 'report',
    T + 'domain.devices.interfaces[].name': 'default',
    T + 'domain.devices.interfaces[].macAddress': '02:00:00:00:00:01',
    T + 'domain.devices.interfaces[].pciAddress': '0000:00:07.0',
    T + 'domain.devices.interfaces[].tag': 'walk',
    T + 'networks[].pod.vmNetworkCIDR': '10.10.0.0/24',
    T + 'networks[].pod.vmIPv6NetworkCIDR': 'fd10:0:2::/120',
    T + 'volumes[].containerDisk.imagePullPolicy': 'IfNotPresent',
    T + 'volumes[].containerDisk.imagePullSecret': 'pull-secret',
    T + 'volumes[].containerDisk.path': '/disk/disk.img',
    T + 'volumes[].name': 'd0',
    T + 'volumes[].emptyDisk': {'capacity': '1Mi'},
    T + 'volumes[].emptyDisk.capacity': '2Mi',
    T + 'networks[].name': 'default',
    T + 'evictionStrategy': 'None',
    T + 'schedulerName': 'default-scheduler',
    T + 'priorityClassName': 'high',
    T + 'serviceAccountName': 'sa',
    T + 'dnsPolicy': 'None',
    T + 'dnsConfig': {'nameservers': ['192.0.2.1']},
    T + 'nodeSelector': {'disk': 'ssd'},
    T + 'tolerations': [{'key': 'k', 'operator': 'Exists'}],
    T + 'affinity': {'nodeAffinity': {}},
    T + 'topologySpreadConstraints': [{'maxSkew': 1, 'topologyKey': 'zone',
                                       'whenUnsatisfiable': 'ScheduleAnyway'}],
    T + 'livenessProbe': {'guestAgentPing': {}},
    T + 'readinessProbe': {'guestAgentPing': {}},
    T + 'domain.devices.video': {'type': 'vga'},
    T + 'accessCredentials': [{'sshPublicKey': {
        'source': {'secret': {'secretName': 'k'}},
        'propagationMethod': {'qemuGuestAgent': {'users': ['walker']}}}}],
    T + 'utilityVolumes': [{'name': 'u', 'claimName': 'c'}],
    'spec.dataVolumeTemplates': [{'metadata': {'name': 'dv'}, 'spec': {}}],
    'spec.updateVolumesStrategy': 'Migration',
}

# A value for the catch-all row of a field whose earlier rows take the
# type's obvious value (that row is not the one under test then).
OTHER = {
    T + 'domain.devices.disks[].io': 'native',
    T + 'domain.clock.timer.pit.tickPolicy': 'delay',
    T + 'domain.rebootPolicy': 'Terminate',
    T + 'domain.devices.logSerialConsole': True,
    T + 'domain.devices.interfaces[].state': 'down',
}

# Rows set through a neighbour (the field alone would be refused by
# KubeVirt's admission): path to set, value.
BS = T + 'domain.devices.disks[].blockSize.custom'
SET_AT = {
    BS + '.logical': (BS, {'logical': 512, 'physical': 4096}),
    BS + '.physical': (BS, {'logical': 512, 'physical': 4096}),
    BS + '.discardGranularity': (BS, {'logical': 512, 'physical': 512,
                                      'discardGranularity': 512}),
    # KubeVirt wants at least 1Gi of guest memory for memory hotplug
    T + 'domain.memory.maxGuest': (T + 'domain.memory', {'guest': '1Gi', 'maxGuest': '2Gi'}),
    # secure boot (the default) needs SMM; the probe cannot boot signed
    T + 'domain.firmware.bootloader.efi': (T + 'domain.firmware.bootloader.efi',
                                           {'secureBoot': False}),
    T + 'domain.firmware.bootloader.efi.persistent': (T + 'domain.firmware.bootloader.efi',
                                                      {'secureBoot': False, 'persistent': True}),
    T + 'domain.devices.inputs': (T + 'domain.devices.inputs',
                                  [{'name': 'tablet', 'type': 'tablet', 'bus': 'usb'}]),
    T + 'domain.devices.sound': (T + 'domain.devices.sound', {'name': 'audio'}),
    T + 'domain.devices.watchdog': (T + 'domain.devices.watchdog',
                                    {'name': 'w', 'i6300esb': {'action': 'poweroff'}}),
    T + 'domain.cpu.dedicatedCpuPlacement': (T + 'domain.cpu',
                                             {'cores': 1, 'dedicatedCpuPlacement': True}),
    T + 'domain.cpu.isolateEmulatorThread': (T + 'domain.cpu', {
        'cores': 1, 'dedicatedCpuPlacement': True, 'isolateEmulatorThread': True}),
    T + 'domain.memory.hugepages': (T + 'domain.memory',
                                    {'guest': '64Mi', 'hugepages': {'pageSize': '2Mi'}}),
    T + 'domain.memory.hugepages.pageSize': (T + 'domain.memory',
                                             {'guest': '64Mi', 'hugepages': {'pageSize': '2Mi'}}),
}
IF = T + 'domain.devices.interfaces'
for _b, _v in (('binding', {'binding': {'name': 'passt'}}), ('bridge', {'bridge': {}}),
               ('masquerade', {'masquerade': {}}), ('passtBinding', {'passtBinding': {}})):
    SET_AT[IF + '[].' + _b] = (IF, [{'name': 'default', **_v}])
SET_AT[IF + '[].ports'] = (IF, [{'name': 'default', 'masquerade': {}, 'ports': [{'port': 80}]}])
SET_AT[IF + '[].ports[].name'] = (IF, [{'name': 'default', 'masquerade': {},
                                        'ports': [{'name': 'http', 'port': 80}]}])
SET_AT[IF + '[].ports[].port'] = SET_AT[IF + '[].ports']
SET_AT[IF + '[].ports[].protocol'] = (IF, [{'name': 'default', 'masquerade': {},
                                            'ports': [{'port': 53, 'protocol': 'UDP'}]}])
SET_AT[IF + '[].portRanges'] = (IF, [{'name': 'default', 'passtBinding': {},
                                      'portRanges': [{'start': 8000, 'end': 8010,
                                                      'protocol': 'TCP'}]}])
NW = T + 'networks'
SET_AT[NW + '[].multus'] = (NW, [{'name': 'default', 'multus': {'networkName': 'blue'}}])
SET_AT[NW + '[].multus.networkName'] = SET_AT[NW + '[].multus']
SET_AT[NW + '[].multus.default'] = (NW, [{'name': 'default',
                                          'multus': {'networkName': 'blue', 'default': True}}])
for _f in ('containerDisk.image', 'dataVolume.name', 'persistentVolumeClaim.claimName'):
    SET_AT[T + 'volumes[].' + _f] = None  # made by CONTEXT
CI = '#cloud-config\n'
CI64 = 'I2Nsb3VkLWNvbmZpZwo='
NET = 'version: 2\n'
for _k in ('cloudInitNoCloud', 'cloudInitConfigDrive'):
    for _f, _v in (('userData', {'userData': CI}), ('userDataBase64', {'userDataBase64': CI64}),
                   ('networkData', {'userData': CI, 'networkData': NET}),
                   ('networkDataBase64', {'userData': CI, 'networkDataBase64': 'dmVyc2lvbjogMgo='})):
        SET_AT['%svolumes[].%s.%s' % (T, _k, _f)] = ('%svolumes[].%s' % (T, _k), _v)
for _f in ('path', 'type'):
    SET_AT[T + 'volumes[].hostDisk.' + _f] = None  # made by CONTEXT (DiskOrCreate at a path)

# Rows whose field needs more of the VM than the one field (a volume of
# its own, a matching disk, a network): extra edits applied after the set.
def _pvc(vm, src, args=None):
    vol(vm)[0] = {'name': 'd0', **src}
    return args or []


def claim(w):
    """a 1 MiB file for a claim or DataVolume: --volume d0=FILE"""
    f = os.path.join(w, 'claim.img')
    with open(f, 'wb') as o:
        o.truncate(1 << 20)
    return ['--volume', 'd0=' + f]


def image_root(w):
    """--disk-root for the containerDisk of volume d0: its one file in /disk"""
    d = os.path.join(w, 'root', 'd0', 'disk')  # DIR/VOLUME-NAME/disk/
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'disk.img'), 'wb') as o:
        o.truncate(1 << 20)
    return ['--disk-root', os.path.join(w, 'root')]


def vol(vm):
    return vm['spec']['template']['spec']['volumes']


def devs(vm):
    return vm['spec']['template']['spec']['domain']['devices']


def _cdrom(vm):
    """disk d0 as a CD-ROM drive (its emptyDisk the medium); the row's
    field is set on it after"""
    devs(vm)['disks'][0] = {'name': 'd0', 'cdrom': {}}
    return []


CONTEXT = {
    'cdrom': lambda vm, w: _cdrom(vm),
    T + 'volumes[].containerDisk': lambda vm, w: _pvc(vm, {'containerDisk': {'image': 'walk-img'}},
                                                      image_root(w)),
    T + 'volumes[].hostDisk': lambda vm, w: _pvc(vm, {'hostDisk': {
        'path': os.path.join(w, 'host.img'), 'type': 'DiskOrCreate', 'capacity': '1Mi'}}),
    T + 'volumes[].persistentVolumeClaim': lambda vm, w: _pvc(vm, {
        'persistentVolumeClaim': {'claimName': 'c'}}, claim(w)),
    T + 'volumes[].dataVolume': lambda vm, w: _pvc(vm, {'dataVolume': {'name': 'dv'}}, claim(w)),
    T + 'volumes[].cloudInitNoCloud': lambda vm, w: _pvc(vm, {
        'cloudInitNoCloud': {'userData': '#cloud-config\n'}}),
    T + 'volumes[].cloudInitConfigDrive': lambda vm, w: _pvc(vm, {
        'cloudInitConfigDrive': {'userData': '#cloud-config\n'}}),
    T + 'domain.devices.interfaces': lambda vm, w: net(vm),
    T + 'networks': lambda vm, w: net(vm),
    'spec.instancetype': lambda vm, w: cluster(vm, w, 'instancetype'),
    T + 'dnsPolicy': lambda vm, w: dns_none(vm),
    'spec.preference': lambda vm, w: cluster(vm, w, 'preference'),
    T + 'domain.devices.autoattachPodInterface': lambda vm, w: net(vm, True),
    T + 'domain.devices.networkInterfaceMultiqueue': lambda vm, w: net(vm, True),
}


def cluster(vm, w, what):
    """an instancetype (which then gives the memory) or a preference, as a
    second file: -f FILE"""
    f = os.path.join(w, 'cluster-%s.yaml' % what)
    if what == 'instancetype':
        vm['spec']['instancetype'] = {'name': 'it'}
        del vm['spec']['template']['spec']['domain']['memory']
        obj = {'apiVersion': 'instancetype.kubevirt.io/v1beta1',
               'kind': 'VirtualMachineClusterInstancetype', 'metadata': {'name': 'it'},
               'spec': {'cpu': {'guest': 1}, 'memory': {'guest': '64Mi'}}}
    else:
        vm['spec']['preference'] = {'name': 'pref'}
        obj = {'apiVersion': 'instancetype.kubevirt.io/v1beta1',
               'kind': 'VirtualMachineClusterPreference', 'metadata': {'name': 'pref'},
               'spec': {'devices': {'preferredDiskBus': 'virtio'}}}
    with open(f, 'w') as o:
        json.dump(obj, o, indent=1)
    return ['-f', f]


def dns_none(vm):
    """dnsPolicy None wants a dnsConfig"""
    sp = vm['spec']['template']['spec']
    sp['dnsPolicy'] = 'None'
    sp['dnsConfig'] = {'nameservers': ['192.0.2.1']}
    return []


def net(vm, auto=False):
    """the pod network (passt for an unprivileged vmlet)"""
    if auto:
        devs(vm)['autoattachPodInterface'] = True
    else:
        devs(vm)['interfaces'] = [{'name': 'default', 'masquerade': {}}]
        vm['spec']['template']['spec']['networks'] = [{'name': 'default', 'pod': {}}]
    return []


# Where a field's value lives in a source the base VM does not have: the
# row sets it on that source (CONTEXT makes it).
SOURCE_OF = [
    ('spec.instancetype.', 'spec.instancetype'),
    ('spec.preference.', 'spec.preference'),
    (T + 'volumes[].containerDisk.', T + 'volumes[].containerDisk'),
    (T + 'volumes[].hostDisk.', T + 'volumes[].hostDisk'),
    (T + 'volumes[].persistentVolumeClaim.', T + 'volumes[].persistentVolumeClaim'),
    (T + 'volumes[].dataVolume.', T + 'volumes[].dataVolume'),
    (T + 'volumes[].cloudInitNoCloud.', T + 'volumes[].cloudInitNoCloud'),
    (T + 'volumes[].cloudInitConfigDrive.', T + 'volumes[].cloudInitConfigDrive'),
    (T + 'domain.devices.interfaces[].', T + 'domain.devices.interfaces'),
    (T + 'networks[].', T + 'networks'),
    (T + 'domain.devices.disks[].cdrom', 'cdrom'),
]

# Rows this host cannot run, with why (checked as listed, never silently).
NOT_HERE = {
    'spec.dataVolumeTemplates': 'its volume is read from a PVC path on the host (no CDI)',
    T + 'domain.firmware.kernelBoot': 'vmlet probe boots its own guest in place of the kernel: '
                                      'tests/sh/boot_tiny_guest.sh boots one from kernelBoot',
    T + 'domain.firmware.bootloader.efi.secureBoot':
        'vmlet probe refuses secure boot: its probe guest is unsigned (tests/sh/ovmf_vm.sh)',
    T + 'domain.firmware.acpi': 'its tables come from a Secret volume, which vmlet refuses '
                                '(volumes[].secret)',
    T + 'networks[].multus': 'a Multus network is a tap vmlet is given (--tap NAME=TAP, '
                             'root): tests/sh/net_*.sh',
    T + 'domain.cpu.realtime': 'KubeVirt wants dedicatedCpuPlacement with it (host CPU pinning: '
                               'tests/sh/fields_run.sh)',
    'spec.instancetype.inferFromVolume': 'needs a PVC or DataVolume object with labels '
                                         '(tests/conformance)',
    'spec.instancetype.inferFromVolumeFailurePolicy': 'with inferFromVolume (tests/conformance)',
    'spec.instancetype.revisionName': 'needs a ControllerRevision object (tests/conformance)',
    'spec.preference.inferFromVolume': 'needs a PVC or DataVolume object with labels '
                                       '(tests/conformance)',
    'spec.preference.inferFromVolumeFailurePolicy': 'with inferFromVolume (tests/conformance)',
    'spec.preference.revisionName': 'needs a ControllerRevision object (tests/conformance)',
}


def kvm_has_hyperv():
    """KVM_CHECK_EXTENSION(KVM_CAP_HYPERV = 44) on /dev/kvm (kvm-pvm: 0)"""
    import fcntl
    try:
        with open('/dev/kvm', 'rb') as f:
            return fcntl.ioctl(f.fileno(), 0xAE03, 44) > 0
    except OSError:
        return False


def host_cannot(field):
    """why this host cannot run field's row, or None"""
    hv = (field == T + 'domain.features.hyperv' or field.startswith(T + 'domain.features.hyperv.')
          or field.startswith(T + 'domain.features.hypervPassthrough')
          or field.startswith(T + 'domain.clock.timer.hyperv'))
    if hv and not kvm_has_hyperv():
        return ('the host\'s KVM has no Hyper-V emulation (vmlet refuses: '
                'tests/sh/hyperv_refused.sh; tests/nested scenario hyperv runs it)')
    if field.startswith(T + 'domain.memory.hugepages'):
        free = 0
        for line in open('/proc/meminfo'):
            if line.startswith('HugePages_Free:'):
                free = int(line.split()[1])
        if free < 32:
            return 'needs 32 free 2 MiB huge pages (the host has %d)' % free
    if field.startswith(T + 'domain.cpu.isolateEmulatorThread') and len(os.sched_getaffinity(0)) < 2:
        return 'needs two host CPUs'
    netf = (field.startswith(T + 'domain.devices.interfaces') or field.startswith(T + 'networks')
            or field.endswith('autoattachPodInterface') or field.endswith('networkInterfaceMultiqueue'))
    passt = any(os.access(os.path.join(d, 'passt'), os.X_OK)
                for d in os.environ.get('PATH', '').split(':'))
    if netf and os.geteuid() != 0 and not passt:
        return 'the pod network needs passt or root'
    return None


def rows(path):
    out = []
    for n, line in enumerate(open(path), 1):
        m = ROW.match(line.rstrip('\n')) if line.startswith('| `') else None
        if m:
            f, when, treat, text = (s.strip() for s in m.groups())
            out.append((f, when, treat, text, n))
    return out


def schema_types(swagger):
    defs = json.load(open(swagger))['definitions']
    types = {}

    def walk(typ, prefix, stack):
        for key, prop in defs[typ].get('properties', {}).items():
            p = prefix + key
            ref = None
            for q in (prop, prop.get('items', {})):
                if isinstance(q, dict) and '$ref' in q:
                    ref = q['$ref'].rsplit('/', 1)[-1]
            t = prop.get('type') or ('object' if ref else 'string')
            types[p] = (t, (prop.get('items') or {}).get('type'))
            if ref and ref.startswith('v1.') and ref in defs and ref not in stack \
                    and not ref.startswith('v1.Object'):
                walk(ref, p + ('[].' if t == 'array' else '.'), stack + [ref])

    walk('v1.VirtualMachineSpec', 'spec.', ['v1.VirtualMachineSpec'])
    return types


def matches(when, value):
    """value satisfies the row condition when (docs/fields.md)."""
    m = re.match(r'^(?:\.([A-Za-z0-9]+)\s*)?(!=|=)\s*(.+)$', when)
    key, op, vals = m.group(1), m.group(2), [v.strip() for v in m.group(3).split(',')]
    v = value.get(key) if key and isinstance(value, dict) else (None if key else value)
    text = '' if v is None else (str(v).lower() if isinstance(v, bool) else str(v))
    return (text in vals) != (op == '!=')


def value_for(field, when, types, earlier=()):
    """A value that sets field and satisfies when (and none of the
    conditions of the field's earlier rows); None: cannot make one."""
    v = value_for1(field, when, types)
    if v is not None and not when and any(matches(w, v) for w in earlier):
        v = OTHER.get(field, (not v) if isinstance(v, bool) else None)
    return OTHER.get(field) if v is None else v


def value_for1(field, when, types):
    if when:
        m = re.match(r'^(?:\.([A-Za-z0-9]+)\s*)?(!=|=)\s*(.+)$', when)
        key, op, vals = m.group(1), m.group(2), [v.strip() for v in m.group(3).split(',')]
        if op == '!=':
            return None
        v = vals[0]
        v = {'true': True, 'false': False}.get(v, v)
        if key:
            return {key: v}
        return v
    if field in VALUES:
        return copy.deepcopy(VALUES[field])
    t, item = types.get(field, ('string', None))
    if t == 'boolean':
        return True
    if t == 'object':
        return {}
    if t in ('integer', 'number'):
        return 1
    if t == 'array':
        return [{}] if item is None else []
    return None


def base(name):
    return {
        'apiVersion': 'kubevirt.io/v1', 'kind': 'VirtualMachine',
        'metadata': {'name': name, 'namespace': 'default'},
        'spec': {'runStrategy': 'Always', 'template': {'spec': {
            'domain': {'memory': {'guest': '64Mi'}, 'devices': {
                'autoattachPodInterface': False,
                'disks': [{'name': 'd0', 'disk': {'bus': 'virtio'}}]}},
            'volumes': [{'name': 'd0', 'emptyDisk': {'capacity': '1Mi'}}]}}}}


def set_path(vm, field, value):
    """Set field (list items as [], the first item) in vm."""
    parts = re.findall(r'[^.\[\]]+|\[\]', field)
    cur = vm
    for i, p in enumerate(parts):
        last = i == len(parts) - 1
        nxt = parts[i + 1] if not last else None
        if p == '[]':
            continue
        if last:
            cur[p] = value
            return
        if nxt == '[]':
            lst = cur.setdefault(p, [])
            if not lst:
                lst.append({})
            cur = lst[0]
        else:
            if not isinstance(cur.get(p), dict):
                cur[p] = {}
            cur = cur[p]


def user_path(field):
    return field.replace('[]', '[0]')


DIAG = re.compile(r'^(.*?):(\d+):(\d+): (warning: )?([^ :]+): (.*)$')


def parse_logs(stderr):
    """vmlet's diagnostics, JSON log lines or FILE:LINE:COL text lines, as
    dicts with level, field and msg."""
    logs = []
    for line in stderr.splitlines():
        if line.startswith('{'):
            try:
                logs.append(json.loads(line))
            except ValueError:
                pass
            continue
        m = DIAG.match(line)
        if m:
            logs.append({'level': 'warning' if m.group(4) else 'error', 'field': m.group(5),
                         'msg': m.group(6), 'source': '%s:%s:%s' % m.group(1, 2, 3)})
    return logs


def get_path(vm, field):
    cur = vm
    for p in re.findall(r'[^.\[\]]+|\[\]', field):
        if p == '[]':
            if not isinstance(cur, list) or not cur:
                return None
            cur = cur[0]
        elif isinstance(cur, dict) and p in cur:
            cur = cur[p]
        else:
            return None
    return cur


def run(vmlet, tmpd, i, vm, args):
    f = os.path.join(tmpd, 'walk%d.yaml' % i)
    with open(f, 'w') as o:
        json.dump(vm, o, indent=1)  # JSON is YAML: vmlet reads it as such
    p = subprocess.run([vmlet, 'probe', '-o', 'json', '-f', f] + args, capture_output=True,
                       text=True, timeout=120)
    logs = parse_logs(p.stderr)
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        rep = None
    return p.returncode, rep, logs, p.stderr, f


def main(argv):
    vmlet, tmpd = argv[1], argv[2]
    only = argv[3] if len(argv) > 3 else None
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.join(here, '..', '..')
    types = schema_types(os.path.join(top, 'spec', 'schema', 'swagger.json'))
    seen, failed, ran, listed = set(), 0, 0, 0
    conds = {}
    for i, (field, when, treat, text, n) in enumerate(rows(os.path.join(top, 'docs', 'fields.md'))):
        earlier = conds.setdefault(field, [])
        if when:
            earlier.append(when)
            earlier = earlier[:-1]
        if treat not in ('implemented', 'differently') or (only and only not in field):
            continue
        key = (field, when)
        if key in seen:
            continue
        seen.add(key)
        why = next((w for k, w in NOT_HERE.items() if field == k or field.startswith(k + '.')
                    or field.startswith(k + '[')), None) or host_cannot(field)
        if why:
            print('not here: %s%s (%s): %s' % (field, ' ' + when if when else '', treat, why))
            listed += 1
            continue
        value = value_for(field, when, types, earlier)
        if field in SET_AT and not when:
            value = True  # set through its neighbour below
        if value is None and field not in VALUES:
            print('not here: %s%s (%s): no value satisfies "%s" on its own' %
                  (field, ' ' + when if when else '', treat, when or 'the row'))
            listed += 1
            continue
        if value is None:
            print('not here: %s (%s): a value only the resolution sets' % (field, treat))
            listed += 1
            continue
        vm = base('walk%d' % i)
        src = next((s for pre, s in SOURCE_OF if field.startswith(pre)), None)
        args = []
        if src in CONTEXT:
            args += CONTEXT[src](vm, tmpd)
        if field == 'spec.running':
            del vm['spec']['runStrategy']
        if field in CONTEXT:
            args += CONTEXT[field](vm, tmpd)
        elif field in SET_AT:
            if SET_AT[field]:
                set_path(vm, *SET_AT[field])
        elif get_path(vm, field) is None or field in VALUES or when:
            set_path(vm, field, value)
        # else: the base VM sets it already (template, domain, disks...)
        rc, rep, logs, err, f = run(vmlet, tmpd, i, vm, args)
        ran += 1
        up = user_path(field)
        warned = [l for l in logs if l.get('field') == up and l.get('level') == 'warning']
        refused = [l for l in logs if l.get('field', '').startswith(up) and l.get('level') == 'error']
        problems = []
        if rc != 0 or not rep or rep.get('match') is not True:
            problems.append('probe exit %d, match %s: %s' % (
                rc, rep and rep.get('match'),
                ' | '.join(l for l in err.splitlines() if 'error' in l)[-300:]))
        if refused:
            problems.append('refused: %s' % refused[0].get('msg'))
        if treat == 'differently' and not warned:
            problems.append('no warning for %s' % up)
        if treat == 'implemented' and warned:
            problems.append('warned: %s' % warned[0].get('msg'))
        label = '%s%s (%s)' % (field, ' ' + when if when else '', treat)
        if problems:
            failed += 1
            print('FAIL: %s [docs/fields.md:%d, %s]: %s' % (label, n, f, '; '.join(problems)))
        else:
            print('ok: %s: ran%s' % (label, ', warned' if warned else ''))
    print('fields walk: %d rows run, %d listed as not runnable here, %d failed' %
          (ran, listed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
