# -*- coding: utf-8 -*-
# A connection for hal's integration tests only: `docker exec` into a test
# machine (tests/integration/rig/machine.rs), as community.docker's docker
# connection does; ansible-core ships none, and the tests run offline.

from __future__ import absolute_import, division, print_function
__metaclass__ = type

DOCUMENTATION = r'''
name: hal_machine
short_description: docker exec into one of hal's test machines
description:
  - Runs commands in a running container with C(docker exec); copies files through its stdin.
author:
  - the hal authors (@hal-authors)
options:
  remote_addr:
    description: The container.
    vars:
      - name: inventory_hostname
      - name: ansible_host
'''

import subprocess

from ansible.plugins.connection import ConnectionBase


class Connection(ConnectionBase):
    transport = 'hal_machine'
    has_pipelining = True

    def _connect(self):
        self._connected = True
        return self

    def _exec(self, args, in_data=None):
        name = self.get_option('remote_addr')
        p = subprocess.Popen(['docker', 'exec', '-i', name] + args,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = p.communicate(in_data)
        return p.returncode, out, err

    def exec_command(self, cmd, in_data=None, sudoable=False):
        super(Connection, self).exec_command(cmd, in_data=in_data, sudoable=sudoable)
        return self._exec(['/bin/sh', '-c', cmd], in_data)

    def put_file(self, in_path, out_path):
        super(Connection, self).put_file(in_path, out_path)
        with open(in_path, 'rb') as f:
            rc, out, err = self._exec(['/bin/sh', '-c', 'cat > "$1"', 'sh', out_path], f.read())
        if rc != 0:
            raise OSError('put %s: %s' % (out_path, err))

    def fetch_file(self, in_path, out_path):
        super(Connection, self).fetch_file(in_path, out_path)
        rc, out, err = self._exec(['cat', in_path])
        if rc != 0:
            raise OSError('fetch %s: %s' % (in_path, err))
        with open(out_path, 'wb') as f:
            f.write(out)

    def close(self):
        self._connected = False
