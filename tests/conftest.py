"""Shared fixtures: a real redis-server started by assocmem's own launcher."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.cluster import RedisCluster

from assocmem.workers.runtime.redis_cluster import LocalCluster, start_cluster
from assocmem.workers.runtime.redis_server import RedisServer, serve_every_slot, start_redis
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.store.redis.connect import data_client
from tests.e2e.pipeline import ON_CLUSTER


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--redis-cluster",
        action="store_true",
        help="run every pipeline of the end-to-end tests on `up --cluster 3` (a local Redis"
        " Cluster of three masters and three replicas) instead of one embedded Redis; the"
        " tests marked single_redis are skipped",
    )


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--redis-cluster"):
        os.environ[ON_CLUSTER] = "3"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--redis-cluster"):
        return
    skip = pytest.mark.skip(reason="about the embedded single Redis (--redis-cluster given)")
    for item in items:
        if "single_redis" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    # Durability is not what the tests that share it check: no fsync before each answer
    server = start_redis(tmp_path_factory.mktemp("redis"), appendfsync="everysec")
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """Database 0 (data) and 1 (queue), refused if not empty, flushed after the test."""
    clients = [redis.Redis(port=redis_server.port, db=db) for db in (0, 1)]
    for client in clients:
        if client.dbsize():
            pytest.fail(
                f"redis database {client.connection_pool.connection_kwargs['db']} is not empty"
            )
    yield redis_server.url
    for client in clients:
        client.flushdb()
        client.close()


@pytest.fixture(scope="session")
def cluster_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A Redis Cluster of one node serving every slot: a script or a transaction whose
    keys are not all in one slot fails on it (CROSSSLOT), as on a cluster of many."""
    server = start_redis(tmp_path_factory.mktemp("cluster"), appendfsync="everysec", cluster=True)
    serve_every_slot(server)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """Three masters with a replica each, as `assocmem up --cluster 3` starts them."""
    cluster = start_cluster(
        tmp_path_factory.mktemp("cluster3"), 3, 1, password="secret", appendfsync="everysec"
    )
    yield cluster
    cluster.stop()


@pytest.fixture
def cluster3_url(local_cluster: LocalCluster, redis_url: str) -> Iterator[str]:
    """The cluster's `redis+cluster://` URL, refused if it holds keys, flushed after."""
    client = data_client(local_cluster.url)
    if client.dbsize(target_nodes=RedisCluster.PRIMARIES):
        pytest.fail("the local cluster is not empty")
    yield local_cluster.url
    client.flushdb(target_nodes=RedisCluster.PRIMARIES)
    client.close()


@pytest.fixture
def cluster_url(cluster_node: RedisServer, redis_url: str) -> Iterator[str]:
    """The cluster node's only database, refused if not empty, flushed after the test."""
    client = redis.Redis(port=cluster_node.port)
    if client.dbsize():
        pytest.fail("the cluster node's database is not empty")
    yield cluster_node.url
    client.flushdb()
    client.close()


@pytest.fixture
def settings(redis_url: str, tmp_path: Path) -> Settings:
    return Settings(
        redis_url=redis_url,
        home=tmp_path / "home",
        fold_interval=0.1,
        snapshot_every=1,
        allowed_hosts=("testserver",),  # the Host header of FastAPI's TestClient
    )


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    rt = Runtime.connect(settings)
    yield rt
    rt.close()
