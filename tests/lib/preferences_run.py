#!/usr/bin/env python3
"""Run one VM per preference of KubeVirt's common-instancetypes.

usage: preferences_run.py VMLET TMPDIR PROBE-ELF [--markdown] [NAME-SUBSTRING]

For each of the 57 preferences of tests/data/common-instancetypes a VM
with that preference, the smallest u1 instancetype that meets its
requirements, one volume (emptyDisk) and the pod interface KubeVirt
attaches by default is run with `vmlet run --kernel PROBE-ELF` (the probe
guest as a direct kernel). A VM that starts must reach its guest (the
probe's end marker on the console) and the guest must see what the
preference asks for: the instancetype's vCPUs, the disk on the preferred
bus (SATA without one, KubeVirt's amd64 default), the NIC model, a TPM.

EXCEPT lists the preferences that may not start, each with the error they
must be refused with and the reason: another architecture, what vmlet
refuses by design, what this host's KVM cannot do. A preference outside
the list that fails, or one inside it that starts (or fails otherwise),
fails the run. Where the host has no Hyper-V emulation, the windows.*
preferences are also run with their Hyper-V features switched off in the
VM (KubeVirt merges a preference's Hyper-V features one by one, and its
timers only when the VM has none), so the rest of what they ask for
(e1000e, TPM, SATA, EFI) is still started and checked.

Prints one row per VM (a Markdown table with --markdown); exit 1 when a
row failed.
"""
import fcntl
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import yaml

DATA = 'tests/data/common-instancetypes'
KVM_CHECK_EXTENSION = 0xAE03
KVM_CAP_HYPERV = 44

ARCH = 'spec.template.spec.architecture: vmlet runs amd64 \\(x86_64\\) guests only'
SECEX = 'spec.template.spec.domain.launchSecurity: vmlet cannot run encrypted guests'
NIC = 'interfaces\\[0\\].model: model "%s" is not supported'
HYPERV = "features.hyperv: this host's KVM has no Hyper-V emulation"

# name -> (error ERE, reason): preferences that are refused on every host
EXCEPT = {}
for _p in ('fedora.arm64', 'rhel.9.arm64', 'rhel.10.arm64'):
    EXCEPT[_p] = (ARCH, 'arm64 guest: KubeVirt schedules it on an arm64 node; vmlet runs amd64 only')
for _p in ('fedora.s390x', 'rhel.9.s390x', 'rhel.10.s390x'):
    EXCEPT[_p] = (ARCH, 's390x guest: KubeVirt schedules it on an s390x node; vmlet runs amd64 only')
for _p in ('fedora.s390x.secex', 'rhel.9.s390x.secex', 'rhel.10.s390x.secex'):
    EXCEPT[_p] = (SECEX, 's390x Secure Execution (launchSecurity): another architecture, '
                  'and vmlet runs no encrypted guest')
EXCEPT['legacy'] = (NIC % 'e1000', 'NIC model e1000: not implemented, by decision (docs/networking.md)')
EXCEPT['windows.2k8'] = (NIC % 'e1000', 'NIC model e1000: not implemented, by decision (docs/networking.md)')
EXCEPT['windows.2k3'] = (NIC % 'rtl8139', 'NIC model rtl8139: not implemented, by decision '
                         '(docs/networking.md)')
HYPERV_WHY = "Hyper-V enlightenments: this host's KVM has none (kvm-pvm, docs/hosts.md)"

PCI_DISK = {'sata': '8086:2922', 'virtio': '1af4:1042'}
PCI_NIC = {'e1000e': '8086:10d3', 'virtio': '1af4:1041'}


def quantity(s):
    m = re.fullmatch(r'([0-9.]+)(Mi|Gi)', str(s))
    return float(m.group(1)) * (1024 if m.group(2) == 'Gi' else 1)


def host_has_hyperv():
    try:
        with open('/dev/kvm', 'rb') as f:
            return fcntl.ioctl(f.fileno(), KVM_CHECK_EXTENSION, KVM_CAP_HYPERV) > 0
    except OSError:
        return False


def pick_instancetype(its, pref):
    """The smallest u1 instancetype meeting the preference's requirements."""
    req = pref['spec'].get('requirements') or {}
    cpu = req.get('cpu', {}).get('guest', 1)
    mem = quantity(req.get('memory', {}).get('guest', '128Mi'))
    for it in its:
        if it['spec']['cpu']['guest'] >= cpu and quantity(it['spec']['memory']['guest']) >= mem:
            return it
    raise SystemExit('no u1 instancetype for ' + pref['metadata']['name'])


def no_hyperv_domain(spec):
    """Domain lines that switch off the preference's Hyper-V features and timer."""
    feats = spec.get('features', {}).get('preferredHyperv') or {}
    off = ', '.join('%s: {enabled: false}' % f for f in sorted(feats))
    timer = dict(spec.get('clock', {}).get('preferredTimer') or {})
    timer.pop('hyperv', None)
    return ('        features: {hyperv: {%s}}\n        clock: {timer: %s}\n'
            % (off, yaml.safe_dump(timer, default_flow_style=True).strip()))


def manifest(name, it, pref, domain=''):
    return ('apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n'
            'metadata: {name: %s, namespace: default}\nspec:\n'
            '  instancetype: {name: %s}\n  preference: {name: %s}\n'
            '  runStrategy: Once\n  template:\n    spec:\n      domain:\n'
            '%s        devices: {}\n      volumes:\n'
            '      - {name: rootdisk, emptyDisk: {capacity: 1Mi}}\n') % (name, it, pref, domain)


def expected(pref, it):
    """What the guest must see: (vcpus, disk bus, NIC model, a TPM that answered
    TPM2_Startup and GetRandom: the probe's tpm= line)."""
    dev = pref['spec'].get('devices') or {}
    return (it['spec']['cpu']['guest'], dev.get('preferredDiskBus', 'sata'),
            dev.get('preferredInterfaceModel', 'virtio'), 'preferredTPM' in dev)


def run_vm(vmlet, tmpd, elf, row):
    d = os.path.join(tmpd, row['id'])
    os.makedirs(d, exist_ok=True)
    y = os.path.join(d, 'vm.yaml')
    with open(y, 'w') as f:
        f.write(manifest('p-' + row['id'].replace('.', '-'), row['it'], row['pref'], row['domain']))
    con = os.path.join(d, 'console')
    try:
        p = subprocess.run(['nice', '-n', '10', vmlet, 'run', '-f', y, '-f', DATA, '--kernel', elf,
                            '--console', 'file:' + con], capture_output=True, text=True, timeout=180)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = 'timeout', ''
    out = open(con).read() if os.path.exists(con) else ''
    row['rc'], row['err'], row['out'] = rc, err, out
    return row


def error_line(err):
    for line in err.splitlines():
        m = re.search(r'"level":"error".*"msg":"(.*)"\}$', line)
        if m:
            return m.group(1)
        if not line.startswith('{'):
            return line
    return ''


def judge(row):
    """Sets row['ok'] and row['what']."""
    seen = re.findall(r'^pci=\S+ (\S+)', row['out'], re.M)
    started = row['rc'] == 0 and 'VMLET-PROBE-END' in row['out']
    if row['expect'] is not None:
        ere, why = row['expect']
        bad = started or not re.search(ere, row['err'])
        row['ok'] = not bad
        row['what'] = ('refused: ' + why) if not bad else (
            'STARTED though listed' if started else 'failed otherwise: ' + error_line(row['err'])[:200])
        return
    if not started:
        row['ok'], row['what'] = False, 'FAILED (exit %s): %s' % (row['rc'], error_line(row['err'])[:300])
        return
    vcpus, disk, nic, tpm = row['want']
    got = re.search(r'^vcpus=(\d+)', row['out'], re.M)
    missing = []
    if not got or int(got.group(1)) != vcpus:
        missing.append('vcpus=%d' % vcpus)
    if PCI_DISK.get(disk) not in seen:
        missing.append('a %s disk' % disk)
    if PCI_NIC.get(nic) not in seen:
        missing.append('a %s NIC' % nic)
    if tpm and not re.search(r'^tpm=(crb|tis) 0x0 0x0 ', row['out'], re.M):
        missing.append('a TPM')
    row['ok'] = not missing
    row['what'] = ('started: %d vCPU, %s disk, %s NIC%s' % (vcpus, disk, nic, ', TPM' if tpm else '')
                   if not missing else 'started, but the guest lacks ' + ', '.join(missing))


def rows_for(prefs, its, hyperv, only):
    rows = []
    for pref in prefs:
        name = pref['metadata']['name']
        if only and only not in name:
            continue
        it = pick_instancetype(its, pref)
        has_hv = bool((pref['spec'].get('features') or {}).get('preferredHyperv'))
        expect = EXCEPT.get(name)
        if expect is None and has_hv and not hyperv:
            expect = (HYPERV, HYPERV_WHY)
        base = {'pref': name, 'it': it['metadata']['name'], 'want': expected(pref, it)}
        rows.append(dict(base, id=name, domain='', expect=expect, label=name))
        if has_hv and not hyperv and name not in EXCEPT:
            rows.append(dict(base, id=name + '.nohv', domain=no_hyperv_domain(pref['spec']),
                             expect=None, label=name + ' (Hyper-V off)'))
    return rows


def main():
    args = [a for a in sys.argv[1:] if a != '--markdown']
    md = '--markdown' in sys.argv
    vmlet, tmpd, elf = args[:3]
    only = args[3] if len(args) > 3 else ''
    its = [i for i in yaml.safe_load_all(open(DATA + '/instancetypes.yaml'))
           if i and i['metadata']['name'].startswith('u1.')]
    its.sort(key=lambda i: (i['spec']['cpu']['guest'], quantity(i['spec']['memory']['guest'])))
    prefs = [p for p in yaml.safe_load_all(open(DATA + '/preferences.yaml')) if p]
    if len(prefs) != 57:
        raise SystemExit('expected 57 preferences in %s, found %d' % (DATA, len(prefs)))
    hyperv = host_has_hyperv()
    rows = rows_for(prefs, its, hyperv, only)
    with ThreadPoolExecutor(max_workers=2) as ex:
        rows = list(ex.map(lambda r: run_vm(vmlet, tmpd, elf, r), rows))
    for r in rows:
        judge(r)
    if md:
        print('| preference | instancetype | result |\n|---|---|---|')
    for r in rows:
        if md:
            print('| `%s` | %s | %s |' % (r['label'], r['it'], r['what']))
        else:
            print('%s: %s + %s: %s' % ('ok' if r['ok'] else 'FAIL', r['label'], r['it'], r['what']))
    n_start = sum(1 for r in rows if r['expect'] is None and r['ok'])
    print('# host Hyper-V: %s; %d VMs, %d started as expected, %d refused as listed, %d failed'
          % ('yes' if hyperv else 'no', len(rows), n_start,
             sum(1 for r in rows if r['expect'] is not None and r['ok']),
             sum(1 for r in rows if not r['ok'])))
    return 0 if all(r['ok'] for r in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
