# -*- coding: utf-8 -*-
# Copyright: the hal authors
# MIT or Apache-2.0 (see the repository's Cargo.toml)
"""Runs hal on the managed node and reads its JSON document (shared by hal_module and hal_status)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json


def global_args(module):
    """The command line before the verb: the binary, --json, and the node's settings."""
    p = module.params
    hal = module.get_bin_path(p['hal_path'], required=True)
    args = [hal, '--json']
    if p.get('config'):
        args += ['--config', p['config']]
    if p.get('services_dir'):
        args += ['--services-dir', p['services_dir']]
    return args


def run(module, args):
    """Runs hal; returns (exit code, its document or None, stderr)."""
    rc, out, err = module.run_command(args, environ_update={'NO_COLOR': '1', 'HAL_YES': '1'})
    try:
        doc = json.loads(out) if out.strip() else None
    except ValueError:
        doc = None
    return rc, doc, err


def fail(module, args, rc, doc, err, **extra):
    """Fails the task with hal's own message and exit code."""
    msg = None
    if isinstance(doc, dict) and isinstance(doc.get('error'), dict):
        msg = doc['error'].get('message')
        rc = doc['error'].get('exit_code', rc)
    if not msg:
        msg = (err or '').strip() or 'hal exited with code %d' % rc
    module.fail_json(msg=msg, rc=rc, cmd=args, stderr=err, **extra)


COMMON_OPTIONS = dict(
    hal_path=dict(type='str', default='hal'),
    config=dict(type='path'),
    services_dir=dict(type='path'),
)
