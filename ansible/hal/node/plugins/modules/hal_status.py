#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: the hal authors
# MIT or Apache-2.0 (see the repository's Cargo.toml)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
---
module: hal_status
short_description: The state of a node's hal modules, as facts
version_added: "0.1.0"
description:
  - Runs C(hal status --json) on the managed node and returns its modules as the fact C(hal_modules)
    (and C(hal_status), the whole document). It changes nothing.
  - A module that is not active is not a failure here; an engine hal cannot reach is
    (hal's exit code 6), and so is a name that matches no module (exit 4).
options:
  name:
    description: The modules to read (names, patterns, C(MODULE/SERVICE)); every module when empty.
    type: list
    elements: str
    default: []
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
  - Supports check mode (it changes nothing either way).
author:
  - the hal authors (@hal-authors)
'''

EXAMPLES = r'''
- name: Read the node's modules
  hal.node.hal_status:

- name: Fail when a module wanted up is not active
  ansible.builtin.assert:
    that: item.state == 'active'
  loop: "{{ hal_modules | selectattr('desired', 'equalto', 'up') | list }}"
  loop_control:
    label: "{{ item.name }}"
'''

RETURN = r'''
ansible_facts:
  description: C(hal_modules), hal's status entries, and C(hal_status), the whole document.
  returned: always
  type: dict
  contains:
    hal_modules:
      description: One entry per module, as C(hal status --json) prints them.
      type: list
      elements: dict
    hal_status:
      description: The whole C(hal status --json) document.
      type: dict
exit_code:
  description: hal's exit code (0 all active, 3 some not). Not C(rc), which Ansible reads as the task's failure.
  returned: always
  type: int
  sample: 3
'''

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.hal.node.plugins.module_utils.hal import COMMON_OPTIONS, fail, global_args, run


def main():
    spec = dict(name=dict(type='list', elements='str', default=[]))
    spec.update(COMMON_OPTIONS)
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    args = global_args(module) + ['status'] + list(module.params['name'])
    rc, doc, err = run(module, args)
    if rc not in (0, 3) or not isinstance(doc, dict) or 'modules' not in doc:
        fail(module, args, rc, doc, err)
    facts = dict(hal_modules=doc['modules'], hal_status=doc)
    module.exit_json(changed=False, ansible_facts=facts, exit_code=rc)


if __name__ == '__main__':
    main()
