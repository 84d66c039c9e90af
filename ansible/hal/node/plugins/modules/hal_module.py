#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: the hal authors
# MIT or Apache-2.0 (see the repository's Cargo.toml)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: hal_module
short_description: Start, stop, restart or update hal modules on a node
version_added: "0.1.0"
description:
  - Runs C(hal start), C(hal stop), C(hal restart) or C(hal update) on the managed node for the
    named modules (Docker Compose stacks under the services root, systemd units named in hal's config).
  - C(changed) is hal's own account (its C(--json) result says per module whether it started,
    stopped, restarted or recreated anything), not a guess.
  - In check mode hal runs with C(--dry-run) and says what it would do; nothing is touched.
    For C(state=updated), check mode runs C(hal update --check), which asks each image's registry
    and pulls nothing.
  - hal is node-local; Ansible reaches the nodes, hal acts on each one.
options:
  name:
    description:
      - The modules, as hal takes them. One name, a list, or a shell pattern such as C(mail*)
        (hal expands it; it is never given to a shell). C(MODULE/SERVICE) acts on one service of a stack,
        except with C(state=updated), which takes whole modules only (hal refuses a service, exit 2).
    type: list
    elements: str
    required: true
  state:
    description:
      - C(started) starts what is not active (a no-op, C(changed=false), when it is).
      - C(stopped) stops what is not inactive.
      - C(restarted) always restarts, and is always C(changed).
      - C(updated) runs C(hal update), which pulls each service's image, recreates only the services
        whose image changed, and waits for the module to be active (healthchecks included);
        C(changed) is true when something was recreated. An update that does not become active
        within C(timeout) is rolled back onto the previous images by hal and the task fails with
        hal's message. With C(serial) in the play, a bad image stops at the first node.
    type: str
    choices: [started, stopped, restarted, updated]
    default: started
  timeout:
    description:
      - For C(started), C(restarted) and C(updated), how long to wait for active (an update not
        active by then is rolled back); for C(stopped), the grace period before SIGKILL. A duration such as C(90s) or C(5m). hal's default when not set.
    type: str
  pull:
    description:
      - The image pull policy of a start or restart. hal's config decides when not set.
        Not used by C(updated), which always asks the registry.
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
  - Supports check mode and diff mode; the diff is each module's state before and after. In
    check mode the diff's after also has a line per service that would change,
    C(MODULE/SERVICE: ACTION (WHAT: DETAIL; ...)), the plan C(hal plan) says (hal's C(--dry-run)
    and C(update --check) give it, as C(plan) in each entry).
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

# In a play with serial: 1, a rolling update: one node at a time; a node whose
# new images do not become active is rolled back by hal, the task fails there
# and the play stops before the next node.
- name: The mail stack runs its newest images
  hal.node.hal_module:
    name: mailu
    state: updated
    timeout: 3m
'''

RETURN = r'''
modules:
  description:
    - hal's result per module (its C(--json) entries), in the order given.
    - For C(state=updated) each entry also has C(rolled_back), C(skipped), C(from) and C(to)
      (each changed service's image before and after) and C(services); under check mode
      C(update_available).
    - Under check mode each entry of C(started) and C(restarted) (and of C(updated)) also has
      C(plan), each service's action and reasons as C(hal plan) says them.
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

VERBS = {'started': 'start', 'stopped': 'stop', 'restarted': 'restart', 'updated': 'update'}
AFTER = {'start': 'active', 'recreate': 'active', 'restart': 'active', 'stop': 'inactive'}


def verb_args(module, base):
    p = module.params
    verb = VERBS[p['state']]
    args = base + [verb]
    if module.check_mode:
        args.append('--check' if verb == 'update' else '--dry-run')
    if p['pull'] and verb not in ('stop', 'update'):
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


def images(modules, key):
    """Each service's image before (C(from)) or after (C(to)) an update, for the diff."""
    out = {}
    for m in modules:
        for s in m.get('services') or []:
            out['%s/%s' % (m['name'], s.get('service'))] = s.get(key) or s.get('from') or '?'
    return out


def planned(modules):
    """Each service that would change, as the plan says it (the C(plan) of a dry run's
    entry, C(hal plan --json)'s entry for the module): its action and reasons."""
    out = {}
    for m in modules:
        for s in (m.get('plan') or {}).get('services') or []:
            if s.get('action') in (None, 'keep'):
                continue
            why = '; '.join('%s: %s' % (r.get('what'), r.get('detail')) for r in s.get('reasons') or [])
            said = s['action'] if not why else '%s (%s)' % (s['action'], why)
            out['%s/%s' % (m['name'], s.get('service'))] = said
    return out


def outcome(module, modules):
    """C(changed) and the diff's after, as hal said them."""
    update = module.params['state'] == 'updated'
    if update and module.check_mode:
        return any(m.get('update_available') for m in modules), images(modules, 'to')
    if update:
        return any(m.get('changed') for m in modules), images(modules, 'to')
    if module.check_mode:
        changed = any(m.get('would', 'none') != 'none' for m in modules)
        return changed, dict((label(m), AFTER.get(m.get('would'), m.get('state'))) for m in modules)
    changed = any(m.get('changed') for m in modules)
    return changed, dict((label(m), m.get('state') or 'failed') for m in modules)


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
    reads = module._diff and module.params['state'] != 'updated'
    before = states_before(module, base) if reads else {}
    args = verb_args(module, base)
    rc, doc, err = run(module, args)
    if not isinstance(doc, dict) or 'modules' not in doc:
        fail(module, args, rc, doc, err)
    modules = doc['modules']
    changed, after = outcome(module, modules)
    if module.check_mode:
        after.update(planned(modules))
    if module.params['state'] == 'updated':
        before = images(modules, 'from')
    result = dict(changed=changed, modules=modules, rc=rc, cmd=args)
    if module._diff:
        result['diff'] = dict(before=as_text(before), after=as_text(after))
    failed = [m for m in modules if not m.get('ok')]
    if failed:
        msg = '; '.join('%s: %s' % (label(m), m.get('error') or 'failed') for m in failed)
        module.fail_json(msg=msg, **result)
    # Not failed, whatever rc says (Ansible fails a result whose rc is not 0):
    # under check mode hal update exits 3 when an update is available.
    module.exit_json(failed=False, **result)


if __name__ == '__main__':
    main()
