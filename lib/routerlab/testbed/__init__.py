"""The testbed: what a measurement asks of one (:mod:`.interface`), the namespace testbed on
this machine, its settings, capabilities, shell and clean-up; the generators, probes, user
namespaces, housekeeping threads and host changes."""
