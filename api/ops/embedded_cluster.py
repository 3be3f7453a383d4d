"""`assocmem up --cluster N`: the data in a Redis Cluster of N masters with a replica each,
on loopback, beside the embedded Redis that keeps RQ's queues (RQ needs one Redis). Each
node is restarted on its own port when it dies; its nodes.conf brings it back into the
cluster, as a replica if its replica took over meanwhile."""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from assocmem.api.errors import ApiError
from assocmem.workers.runtime.redis_cluster import LocalCluster, start_cluster
from assocmem.workers.runtime.redis_server import start_redis, stored_password

PORTS_FILE = "ports.json"
NODE_RESTARTS = 3
"""Exits of one node within NODE_RESTART_WINDOW that `up` restarts; one more stops `up`."""
NODE_RESTART_WINDOW = 60.0


class EmbeddedCluster:
    def __init__(self, home: Path, masters: int, appendfsync: str, lock: int) -> None:
        self.data_dir = home / "cluster"
        self.password = stored_password(self.data_dir)
        self.appendfsync = appendfsync
        self.lock = lock
        ports_file = self.data_dir / PORTS_FILE
        known = orjson.loads(ports_file.read_bytes()) if ports_file.exists() else None
        if known is not None and len(known) != masters * 2:
            raise ApiError(
                f"{self.data_dir} holds a cluster of {len(known) // 2} masters, not {masters}:"
                f" run `up --cluster {len(known) // 2}` on it, or use another --data"
            )
        self.cluster: LocalCluster = start_cluster(
            self.data_dir,
            masters,
            1,
            password=self.password,
            appendfsync=appendfsync,
            ports=known,
            keep_fds=(lock,),
        )
        ports_file.write_bytes(orjson.dumps([n.port for n in self.cluster.nodes]))
        self.crashes: dict[int, list[float]] = {}

    @property
    def url(self) -> str:
        return self.cluster.url

    @property
    def pids(self) -> list[int]:
        return [n.pid for n in self.cluster.nodes]

    def restart_if_dead(self) -> str | None:
        """None while every node runs; a line naming the nodes restarted; ApiError when one
        keeps dying."""
        restarted = []
        for n, node in enumerate(self.cluster.nodes):
            code = node.process.poll()
            if code is None:
                continue
            now = time.monotonic()
            crashes = [t for t in self.crashes.get(n, []) if now - t < NODE_RESTART_WINDOW]
            self.crashes[n] = [*crashes, now]
            if len(self.crashes[n]) > NODE_RESTARTS:
                raise ApiError(
                    f"cluster node {n} (port {node.port}) exited {len(self.crashes[n])} times"
                    f" within {NODE_RESTART_WINDOW:.0f} s; see {node.data_dir / 'redis.log'}"
                )
            self.cluster.nodes[n] = start_redis(
                node.data_dir,
                port=node.port,
                appendfsync=self.appendfsync,
                password=self.password,
                cluster=True,
                keep_fds=(self.lock,),
                until="loaded",
            )
            restarted.append(f"{n} (port {node.port}, code {code})")
        return f"restarted cluster nodes {', '.join(restarted)}" if restarted else None

    def stop(self) -> None:
        self.cluster.stop()
