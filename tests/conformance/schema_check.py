#!/usr/bin/env python3
"""schema_check: does `vmlet resolve` output stay inside KubeVirt's API schema?

usage: schema_check.py [FILE.json ...]   (no file: stdin)

Each input is the JSON that `vmlet resolve -o json` prints: one object, or a
`List` (`--list`) of the VirtualMachine, the VirtualMachineInstance and the
ControllerRevisions. Every key of every object must be a field the schema
(spec/schema/swagger.json) defines at that place, every value must have the
schema's type, every enum value must be one of the enum's. A
ControllerRevision's own top level (apps/v1, not in KubeVirt's schema) is
checked by hand, the object it holds against its kind's schema.

This reads the swagger itself, independently of the C table vmlet is built
with, so it also catches a table that went wrong. Prints one line per
problem; exit 0 when there are none.
"""
import json
import os
import sys

SWAGGER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'spec', 'schema',
                       'swagger.json')
META = 'k8s.io.apimachinery.pkg.apis.meta.v1.'
KINDS = {
    'VirtualMachine': 'v1.VirtualMachine',
    'VirtualMachineInstance': 'v1.VirtualMachineInstance',
    'VirtualMachineInstancetype': 'v1beta1.VirtualMachineInstancetype',
    'VirtualMachineClusterInstancetype': 'v1beta1.VirtualMachineClusterInstancetype',
    'VirtualMachinePreference': 'v1beta1.VirtualMachinePreference',
    'VirtualMachineClusterPreference': 'v1beta1.VirtualMachineClusterPreference',
}
_defs = None


def defs():
    global _defs
    if _defs is None:
        with open(SWAGGER) as f:
            _defs = json.load(f)['definitions']
    return _defs


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return (isinstance(v, (int, float))) and not isinstance(v, bool)


def scalar(v, t, fmt):
    """None when v fits the swagger type t (a name or a list of names), else what it should be"""
    names = t if isinstance(t, list) else [t]
    for n in names:
        if n == 'string' and isinstance(v, str):
            return None
        if n == 'boolean' and isinstance(v, bool):
            return None
        if n == 'integer' and is_int(v):
            if fmt == 'int32' and not -2**31 <= v < 2**31:
                return 'a 32-bit integer'
            return None
        if n == 'number' and is_num(v):
            return None
        if n == 'null' and v is None:
            return None
    return ' or '.join(names)


def check_ref(v, ref, path):
    name = ref.split('/')[-1]
    d = defs().get(name)
    if d is None:
        yield f'{path}: the schema has no {name}'
        return
    if 'properties' in d:
        yield from check_object(v, name, path)
    elif d.get('type') == 'object':
        if not isinstance(v, dict):
            yield f'{path}: {v!r} is not an object'
        elif v and name not in ('k8s.io.apimachinery.pkg.runtime.RawExtension', META + 'FieldsV1'):
            yield f'{path}: {name} has no fields, got {sorted(v)}'
    elif d.get('format') == 'int-or-string':
        if not (isinstance(v, str) or is_int(v)):
            yield f'{path}: {v!r} is not an integer or a string ({name})'
    else:  # Quantity, Time, Duration
        want = scalar(v, d.get('type'), d.get('format'))
        if want:
            yield f'{path}: {v!r} is not {want} ({name})'


def check_value(v, p, path):
    if v is None:
        return
    if '$ref' in p:
        yield from check_ref(v, p['$ref'], path)
        return
    t = p.get('type')
    if t == 'array':
        if not isinstance(v, list):
            yield f'{path}: {v!r} is not a list'
            return
        for i, e in enumerate(v):
            yield from check_value(e, p.get('items') or {}, f'{path}[{i}]')
    elif t == 'object':
        if not isinstance(v, dict):
            yield f'{path}: {v!r} is not an object'
            return
        for k, e in v.items():
            yield from check_value(e, p.get('additionalProperties') or {}, f'{path}.{k}')
    elif t is not None:
        want = scalar(v, t, p.get('format'))
        if want:
            yield f'{path}: {v!r} is not {want}'
        elif 'enum' in p and v not in p['enum']:
            yield f'{path}: {v!r} is not one of {p["enum"]}'


def check_object(v, name, path):
    if not isinstance(v, dict):
        yield f'{path}: {v!r} is not an object ({name})'
        return
    props = defs()[name].get('properties') or {}
    for k, e in v.items():
        if k not in props:
            yield f'{path}.{k}: not a field of {name} in KubeVirt\'s schema'
        else:
            yield from check_value(e, props[k], f'{path}.{k}')


def check_revision(cr, path):
    top = {'apiVersion': str, 'kind': str, 'metadata': dict, 'data': dict, 'revision': int}
    for k, e in cr.items():
        if k not in top:
            yield f'{path}.{k}: not a field of an apps/v1 ControllerRevision'
        elif not isinstance(e, top[k]):
            yield f'{path}.{k}: {e!r} is not {top[k].__name__}'
    yield from check_object(cr.get('metadata') or {}, META + 'ObjectMeta', f'{path}.metadata')
    data = cr.get('data') or {}
    name = KINDS.get(data.get('kind'))
    if name is None or not name.startswith('v1beta1.'):
        yield f'{path}.data: holds {data.get("kind")!r}, not an instancetype or preference'
    else:
        yield from check_object(data, name, f'{path}.data')


def problems(item, path=None):
    """every problem of one output object (a List's items are checked one by one)"""
    kind = item.get('kind') if isinstance(item, dict) else None
    path = path or kind or '(object)'
    if kind == 'List':
        for i, e in enumerate(item.get('items') or []):
            yield from problems(e, f'items[{i}]({e.get("kind") if isinstance(e, dict) else "?"})')
    elif kind == 'ControllerRevision':
        yield from check_revision(item, path)
    elif kind in KINDS:
        yield from check_object(item, KINDS[kind], path)
    else:
        yield f'{path}: kind {kind!r} is not one vmlet prints'


def main(argv):
    texts = [open(f).read() for f in argv] if argv else [sys.stdin.read()]
    bad = 0
    for t in texts:
        for p in problems(json.loads(t)):
            print(p)
            bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
