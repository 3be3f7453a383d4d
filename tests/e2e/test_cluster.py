"""`assocmem up --cluster 3`: the data in a local Redis Cluster of three masters with a
replica each. The README's walk through gives the same answers; a restart finds the same
state; a master killed while eight publishers append loses no acknowledged write and
doubles none."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from pathlib import Path

import orjson
import pytest
import urllib3

from assocmem.api.ops.run_file import read_run_file
from assocmem.workers.store.redis.connect import data_client
from assocmem.workers.store.redis.keys import log_key
from tests.e2e.pipeline import Pipeline, cli, cli_json, walk_through

CLUSTER = {"ASSOCMEM_CLUSTER": "3"}


def test_the_walk_through_answers_the_same_on_a_cluster_and_after_a_restart(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data", CLUSTER)
    try:
        info = read_run_file(up.home)
        assert info is not None and len(info.cluster_pids) == 6
        assert info.redis_url.startswith("redis+cluster://")
        ids = walk_through(up.url)
        read = cli(
            "read", "--concepts", "a", "--no-record", "--after", ids["feedback"], url=up.url
        ).stdout
        assert "expanded: b (1.57282), c (1.18377)" in read
        assert f"association {ids['b c note']}  0.471  b c note" in read
        assert "via a -> b  weight 3 (written 2, taught 1, ppmi 0.88)" in read
        assert f"association {ids['c d note']}  0.249  c d note" in read
        before = cli_json("state", url=up.url)
    finally:
        up.stop()
    again = Pipeline(tmp_path / "data", CLUSTER)
    try:
        after = cli_json("state", url=again.url)
        assert (after["position"], after["hash"]) == (before["position"], before["hash"])
        # an erasure on every node: the log, and each node's AOF (replicas' too) rewritten
        cli("write", "zanzibar ledger of alice", "--user", "alice", url=again.url)
        done = cli_json("forget", "--user", "alice", "--yes", url=again.url)
        assert done["state"] == "finished" and done["result"]["memories"] == 1, done
        found = cli_json("read", "--concepts", "zanzibar", "--user", "alice", url=again.url)
        assert found["items"] == []
        files = list((tmp_path / "data" / "cluster").rglob("appendonlydir/*"))
        assert len({f.parent for f in files}) == 6
        assert not [f for f in files if b"zanzibar" in f.read_bytes()], "no node keeps it"
    finally:
        again.stop()


PUBLISHERS = 8
EVENTS = 150


@pytest.mark.slow
def test_a_master_killed_under_eight_publishers_loses_and_doubles_no_acknowledged_write(
    tmp_path: Path,
) -> None:
    up = Pipeline(tmp_path / "data", CLUSTER)
    try:
        keys = []
        for n in range(PUBLISHERS):  # a tenant each: their logs lie on every master
            made = urllib3.request(
                "POST",
                f"{up.url}/v1/keys",
                json={"agent": f"publisher-{n}", "tenant": f"t{n}"},
                headers={"authorization": f"Bearer {up.key}"},
            )
            assert made.status == 201, made.data
            keys.append(made.json()["key"])
        acknowledged: list[set[str]] = [set() for _ in range(PUBLISHERS)]
        acked_at: list[float] = []
        lock = threading.Lock()

        def publish(n: int) -> None:
            pool = urllib3.PoolManager(timeout=30.0, retries=False)
            for i in range(EVENTS):
                key = f"p{n}-{i}"
                body = {"text": f"billing event {i} of publisher {n}", "key": key}
                while True:  # as the clients do: send again, the same key, until acknowledged
                    try:
                        answer = pool.request(
                            "POST",
                            f"{up.url}/v1/memories",
                            json=body,
                            headers={"authorization": f"Bearer {keys[n]}"},
                        )
                        if answer.status == 202:
                            break
                        assert answer.status == 503, answer.data
                    except urllib3.exceptions.HTTPError:
                        pass
                    time.sleep(0.1)
                with lock:
                    acknowledged[n].add(key)
                    acked_at.append(time.monotonic())

        threads = [threading.Thread(target=publish, args=(n,)) for n in range(PUBLISHERS)]
        for thread in threads:
            thread.start()
        while sum(map(len, acknowledged)) < PUBLISHERS * EVENTS // 4:
            time.sleep(0.05)
        info = read_run_file(up.home)
        assert info is not None
        client = data_client(info.redis_url)
        master = client.get_node_from_key(log_key("t0"))
        victim = next(
            pid for pid, port in _node_ports(info.cluster_pids).items() if port == master.port
        )
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        for thread in threads:
            thread.join(300)
        assert not any(t.is_alive() for t in threads), "every publisher finished"

        client = data_client(info.redis_url)  # the cluster as it is now
        stored = [Counter(_keys_in_log(client, f"t{n}")) for n in range(PUBLISHERS)]
        total = sum(map(len, acknowledged))
        lost = sum(len(acknowledged[n] - set(stored[n])) for n in range(PUBLISHERS))
        doubled = sum(c - 1 for s in stored for c in s.values() if c > 1)
        after_kill = sorted(t for t in acked_at if t >= killed_at)
        gaps = [b - a for a, b in zip([killed_at, *after_kill], after_kill, strict=False)]
        print(
            f"acknowledged {total}, lost {lost}, doubled {doubled};"
            f" longest time without an acknowledged write after the kill {max(gaps):.1f} s"
        )
        assert total == PUBLISHERS * EVENTS
        assert lost == 0 and doubled == 0
        client.close()
    finally:
        up.stop()


def _node_ports(pids: list[int]) -> dict[int, int]:
    """Each node's port, from its command line (`redis-server 127.0.0.1:PORT [cluster]`)."""
    ports = {}
    for pid in pids:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode()
        ports[pid] = int(command.split(":")[-1].split()[0])
    return ports


def _keys_in_log(client: object, tenant: str) -> list[str]:
    rows = client.xrange(log_key(tenant))  # type: ignore[attr-defined]
    return [orjson.loads(fields[b"e"])["key"] for _, fields in rows]
