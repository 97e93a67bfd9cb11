"""The testbed beyond one machine: testbed files, OpenSSH connections, the SSH testbed, and
what runs on its hosts (the agent, hostrun)."""
