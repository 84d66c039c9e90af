#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: the hal authors
# MIT or Apache-2.0 (see the repository's Cargo.toml)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: hal_module
short_description: Start, stop or restart hal modules on a node
version_added: "0.1.0"
description:
  - Runs C(hal start), C(hal stop) or C(hal restart) on the managed node for the named modules
    (Docker Compose stacks under the services root, systemd units named in hal's config).
  - C(changed) is hal's own account (its C(--json) result says per module whether it started,
    stopped, restarted or recreated anything), not a guess.
  - In check mode hal runs with C(--dry-run) and says what it would do; nothing is touched.
  - hal is node-local; Ansible reaches the nodes, hal acts on each one.
options:
  name:
    description:
      - The modules, as hal takes them. One name, a list, or a shell pattern such as C(mail*)
        (hal expands it; it is never given to a shell). C(MODULE/SERVICE) acts on one service of a stack.
    type: list
    elements: str
    required: true
  state:
    description:
      - C(started) starts what is not active (a no-op, C(changed=false), when it is).
      - C(stopped) stops what is not inactive.
      - C(restarted) always restarts, and is always C(changed).
    type: str
    choices: [started, stopped, restarted]
    default: started
  timeout:
    description:
      - For C(started) and C(restarted), how long to wait for active; for C(stopped), the grace
        period before SIGKILL. A duration such as C(90s) or C(5m). hal's default when not set.
    type: str
  pull:
    description:
      - The image pull policy of a start or restart. hal's config decides when not set.
    type: str
    choices: [always, missing, never]
  hal_path:
    description: The hal binary (a name on the node's PATH, or a path).
    type: str
    default: hal
  config:
    description: hal's config file (C(--config)); hal's default when not set.
    type: path
  services_dir:
    description: The services root (C(--services-dir)); hal's config decides when not set.
    type: path
notes:
  - Needs hal on the managed node; uses only what Ansible ships.
  - Supports check mode and diff mode; the diff is each module's state before and after.
author:
  - the hal authors (@hal-authors)
'''

EXAMPLES = r'''
- name: Start the mail stack and the notifier unit
  hal.node.hal_module:
    name: [mailu, notifier]
    state: started
    pull: missing

- name: Stop every stack whose name starts with test-
  hal.node.hal_module:
    name: "test-*"
    state: stopped
    timeout: 30s

- name: Restart one service of a stack
  hal.node.hal_module:
    name: web/worker
    state: restarted
'''

RETURN = r'''
modules:
  description: hal's result per module (its C(--json) entries), in the order given.
  returned: always
  type: list
  elements: dict
  sample:
    - name: web
      kind: stack
      action: start
      ok: true
      state: active
      changed: true
rc:
  description: hal's exit code.
  returned: always
  type: int
  sample: 0
cmd:
  description: The command that ran.
  returned: always
  type: list
  elements: str
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.hal.node.plugins.module_utils.hal import COMMON_OPTIONS, fail, global_args, run

VERBS = {'started': 'start', 'stopped': 'stop', 'restarted': 'restart'}
AFTER = {'start': 'active', 'recreate': 'active', 'restart': 'active', 'stop': 'inactive'}


def verb_args(module, base):
    p = module.params
    verb = VERBS[p['state']]
    args = base + [verb]
    if module.check_mode:
        args.append('--dry-run')
    if p['pull'] and verb != 'stop':
        args += ['--pull', p['pull']]
    if p['timeout']:
        args += ['--timeout', p['timeout']]
    return args + list(p['name'])


def states_before(module, base):
    """Each module's state before the verb, for the diff (read only when a diff is asked for)."""
    rc, doc, err = run(module, base + ['status'] + list(module.params['name']))
    if not isinstance(doc, dict) or 'modules' not in doc:
        return {}
    return dict((m['name'] if not m.get('service') else '%s/%s' % (m['name'], m['service']), m['state'])
                for m in doc['modules'])


def label(m):
    return m['name'] if not m.get('service') else '%s/%s' % (m['name'], m['service'])


def as_text(states):
    return ''.join('%s: %s\n' % (k, states[k]) for k in sorted(states))


def main():
    spec = dict(
        name=dict(type='list', elements='str', required=True),
        state=dict(type='str', default='started', choices=list(VERBS)),
        timeout=dict(type='str'),
        pull=dict(type='str', choices=['always', 'missing', 'never']),
    )
    spec.update(COMMON_OPTIONS)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    base = global_args(module)
    before = states_before(module, base) if module._diff else {}
    args = verb_args(module, base)
    rc, doc, err = run(module, args)
    if not isinstance(doc, dict) or 'modules' not in doc:
        fail(module, args, rc, doc, err)
    modules = doc['modules']
    if module.check_mode:
        changed = any(m.get('would', 'none') != 'none' for m in modules)
        after = dict((label(m), AFTER.get(m.get('would'), m.get('state'))) for m in modules)
    else:
        changed = any(m.get('changed') for m in modules)
        after = dict((label(m), m.get('state') or 'failed') for m in modules)
    result = dict(changed=changed, modules=modules, rc=rc, cmd=args)
    if module._diff:
        result['diff'] = dict(before=as_text(before), after=as_text(after))
    failed = [m for m in modules if not m.get('ok')]
    if failed:
        msg = '; '.join('%s: %s' % (label(m), m.get('error') or 'failed') for m in failed)
        module.fail_json(msg=msg, **result)
    module.exit_json(**result)


if __name__ == '__main__':
    main()
