"""A Redis Cluster on loopback, of the same redis-server binaries `up` runs: `masters`
masters, each with `replicas` replicas, formed with Redis's own CLUSTER commands (no
redis-cli needed). `assocmem up --cluster N` and the tests start one; a team moving to a
real cluster gives its address as `redis+cluster://` (workers/store/redis/connect.py)."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

from assocmem.workers.errors import RedisLaunchError
from assocmem.workers.runtime.redis_server import (
    CLUSTER_SLOTS,
    RedisServer,
    free_cluster_port,
    start_redis,
)

FORM_TIMEOUT = 60.0
"""Seconds the nodes may take to know each other and serve every slot."""
PORT_ATTEMPTS = 5
"""Ports tried for a node whose chosen port was taken before it bound it."""


@dataclasses.dataclass
class LocalCluster:
    nodes: list[RedisServer]
    """Masters first (in slot order), then their replicas."""
    masters: int

    @property
    def url(self) -> str:
        """`redis+cluster://` naming the first master: the client learns the rest from it."""
        first = self.nodes[0]
        credentials = f"default:{quote(first.password, safe='')}@" if first.password else ""
        return f"redis+cluster://{credentials}127.0.0.1:{first.port}"

    def stop(self) -> None:
        for node in reversed(self.nodes):
            node.stop()


def start_cluster(
    data_dir: Path,
    masters: int = 3,
    replicas: int = 1,
    password: str | None = None,
    appendfsync: str = "always",
    ports: list[int] | None = None,
    keep_fds: tuple[int, ...] = (),
) -> LocalCluster:
    """Start (or start again, on the same directories and ports) a local cluster and wait
    until every node says it is ok. `ports`: the nodes' ports of an earlier start."""
    count = masters * (1 + replicas)
    nodes: list[RedisServer] = []
    try:
        for n in range(count):
            start = functools.partial(
                start_redis,
                data_dir / f"node-{n}",
                appendfsync=appendfsync,
                password=password,
                cluster=True,
                keep_fds=keep_fds,
                until="loaded",
            )
            nodes.append(start(port=ports[n]) if ports else _on_a_free_port(start))
        _form(nodes, masters, replicas)
    except BaseException:
        for node in nodes:
            node.stop()
        raise
    return LocalCluster(nodes, masters)


def _on_a_free_port(start: Callable[..., RedisServer]) -> RedisServer:
    """A node on a port chosen now. Another process may bind that port, or its bus port,
    before the node does: the node then exits, and is started again on another port."""
    for _ in range(PORT_ATTEMPTS - 1):
        try:
            return start(port=free_cluster_port())
        except RedisLaunchError as error:
            if not _port_taken(error):
                raise
    return start(port=free_cluster_port())


def _port_taken(error: RedisLaunchError) -> bool:
    return "Address already in use" in str(error)


def _form(nodes: list[RedisServer], masters: int, replicas: int) -> None:
    """Meet, share the slots among the masters, attach the replicas: each step only where a
    node restarted on its nodes.conf has not kept it."""
    import redis

    clients = [redis.Redis(port=n.port, password=n.password, decode_responses=True) for n in nodes]
    try:
        first = clients[0]
        for node in nodes[1:]:
            first.execute_command("CLUSTER MEET", "127.0.0.1", node.port)
        share = CLUSTER_SLOTS // masters
        for m, client in enumerate(clients[:masters]):
            if int(client.cluster("info")["cluster_slots_assigned"]) < CLUSTER_SLOTS:
                low = m * share
                high = CLUSTER_SLOTS - 1 if m == masters - 1 else low + share - 1
                if not _own_slots(client):
                    client.execute_command("CLUSTER ADDSLOTSRANGE", low, high)
        ids = [c.execute_command("CLUSTER MYID") for c in clients]
        _wait(lambda: all(_known(c) >= len(nodes) for c in clients), "the nodes to meet")
        for r, client in enumerate(clients[masters:]):
            master = ids[r % masters]
            if _role(client) != "slave":
                client.execute_command("CLUSTER REPLICATE", master)
        _wait(
            lambda: all(c.cluster("info")["cluster_state"] == "ok" for c in clients),
            "every node to serve",
        )
        _wait(
            lambda: all(_replicas_up(c) >= replicas for c in clients[:masters]),
            "the replicas to catch up",
        )
    finally:
        for client in clients:
            client.close()


def _own_slots(client: object) -> bool:
    nodes = client.execute_command("CLUSTER NODES").values()  # type: ignore[attr-defined]
    return any("myself" in node["flags"] and node["slots"] for node in nodes)


def _known(client: object) -> int:
    return len(client.execute_command("CLUSTER NODES"))  # type: ignore[attr-defined]


def _role(client: object) -> str:
    return client.info("replication")["role"]  # type: ignore[attr-defined,no-any-return]


def _replicas_up(client: object) -> int:
    info = client.info("replication")  # type: ignore[attr-defined]
    return sum(
        1
        for key, value in info.items()
        if key.startswith("slave") and isinstance(value, dict) and value.get("state") == "online"
    )


def _wait(condition: object, what: str) -> None:
    deadline = time.monotonic() + FORM_TIMEOUT
    while not condition():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise RedisLaunchError(f"the local Redis Cluster did not form: waited for {what}")
        time.sleep(0.1)
