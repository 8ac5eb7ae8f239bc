"""Harnesses that start real services on this machine, for the tests and the benchmarks.

- `raylocal.run_local_cluster`: a multi-node Ray cluster of `ray start` processes;
- `seaweed.run_seaweedfs`: a SeaweedFS S3 server (a private zoo) on loopback ports;
- `ports.free_ports`: free loopback ports for both.

No command of the platform uses them; they live in the package (not under tests/) so that
`benchmarks/` and a user trying `--executor ray` or a zoo on a laptop can start the same ones.
"""
