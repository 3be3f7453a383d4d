"""The data Redis's client from its URL: `redis://` (or `rediss://`, `unix://`) for one
server, `redis+cluster://` (or `rediss+cluster://`) for a Redis Cluster, whose address
names any of its nodes (redis-py's cluster client learns the others and follows slots as
they move, failovers included). Every key of a tenant carries its `{tenant}` hash tag, so
a tenant's scripts and transactions stay on one node."""

from __future__ import annotations

import time
from typing import Any

import redis
from redis.cluster import ClusterNode, RedisCluster

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}

DataClient = redis.Redis | RedisCluster


def is_cluster_url(url: str) -> bool:
    return url.split("://", 1)[0] in CLUSTER_SCHEMES


def plain_url(url: str) -> str:
    """The URL with its scheme as redis-py reads it (`redis+cluster://` -> `redis://`)."""
    scheme, rest = url.split("://", 1)
    return f"{CLUSTER_SCHEMES.get(scheme, scheme)}://{rest}"


MAX_CONNECTIONS = 10_000
"""Connections a process may open to its data Redis (per node of a cluster). redis-py's
default of 100 refused every call of an API replica once about a hundred tenants' states
each waited on their stream (bench/many_tenants.py); connections are made as needed."""


def data_client(url: str, **options: Any) -> DataClient:
    options.setdefault("max_connections", MAX_CONNECTIONS)
    if is_cluster_url(url):
        options.pop("health_check_interval", None)  # per node, set by the cluster client
        return RedisCluster.from_url(plain_url(url), **options)
    return redis.Redis.from_url(url, **options)


def is_cluster(client: object) -> bool:
    return isinstance(client, RedisCluster)


TWIN_OPTIONS = (
    "username",
    "password",
    "socket_timeout",
    "socket_connect_timeout",
    "ssl",
    "max_connections",
)


def twin(client: DataClient) -> DataClient:
    """A second client to the same Redis, sharing its connections where it can, for reads
    whose replies are parsed their own way (the log's XRANGE)."""
    if isinstance(client, RedisCluster):
        options = client.get_connection_kwargs()
        nodes = [ClusterNode(n.host, n.port) for n in client.get_nodes()]
        return RedisCluster(
            startup_nodes=nodes, **{k: options[k] for k in TWIN_OPTIONS if k in options}
        )
    return redis.Redis(connection_pool=client.connection_pool)


def keys_matching(client: DataClient, pattern: str, count: int) -> list[list[bytes]]:
    """The keys matching `pattern`, in batches (SCAN: Redis is never blocked for long); on
    a cluster, of every master."""
    if isinstance(client, RedisCluster):
        found = list(client.scan_iter(match=pattern, count=count))
        return [found[n : n + count] for n in range(0, len(found), count)]
    batches, cursor = [], 0
    while True:
        cursor, keys = client.scan(cursor, match=pattern, count=count)
        if keys:
            batches.append(keys)
        if cursor == 0:
            return batches


def node_clients(client: DataClient) -> list[redis.Redis]:
    """A client of each server: the one, or every node of a cluster, replicas included
    (the cluster client connects to replicas only when asked)."""
    if isinstance(client, RedisCluster):
        options = client.get_connection_kwargs()
        known = {n.name: client.get_redis_connection(n) for n in client.get_nodes()}
        for name, node in client.cluster_nodes().items():
            if name not in known and "fail" not in node["flags"]:
                host, port = name.rsplit(":", 1)
                known[name] = redis.Redis(
                    host=host,
                    port=int(port),
                    **{k: options[k] for k in TWIN_OPTIONS if k in options},
                )
        return list(known.values())
    return [client]


def replicas_caught_up(client: DataClient, timeout: float = 30.0) -> bool:
    """Wait until every replica has applied all its master has (INFO replication's
    offsets), up to `timeout` seconds: before a replica rewrites its AOF after deletes,
    or its files would keep what they deleted. Whether they all did."""
    deadline = time.monotonic() + timeout
    for node in node_clients(client):
        while True:
            info = node.info("replication")
            if info.get("role") != "master":
                break
            offset = int(info.get("master_repl_offset", 0))
            lagging = [
                value
                for key, value in info.items()
                if key.startswith("slave")
                and isinstance(value, dict)
                and int(value.get("offset", 0)) < offset
            ]
            if not lagging:
                break
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
    return True


def get_many(client: DataClient, keys: list[str]) -> list[bytes | None]:
    """MGET of keys that may lie in many slots: on a cluster, one MGET per node."""
    if not keys:
        return []
    if isinstance(client, RedisCluster):
        return client.mget_nonatomic(keys)  # type: ignore[no-any-return]
    return client.mget(keys)  # type: ignore[no-any-return]


def node_of(client: DataClient, key: str) -> redis.Redis:
    """A client of the one server that holds `key` (the master of its slot on a cluster)."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        if node.redis_connection is None:
            client.nodes_manager.initialize()
            node = client.get_node_from_key(key)
        return node.redis_connection  # type: ignore[return-value]
    return client


def refresh_topology(client: DataClient) -> None:
    """Have a cluster client learn the slots anew (after a failover); nothing for one Redis."""
    if isinstance(client, RedisCluster):
        try:
            client.nodes_manager.initialize()
        except redis.RedisError:
            pass  # every node still down: the next call tries again
