"""Appends through HTTP on one Redis against a local Redis Cluster (`up --cluster 3`, each
append acknowledged once a replica holds it): events per second from publishers writing
batches to many tenants, and the median time of a single keyed append, side by side in
one run (each pipeline started in turn on this machine).

    .venv/bin/python bench/cluster_appends.py ../shared/data/corpus_en.jsonl --events 40000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import urllib3
from skeleton import load_corpus

from assocmem.api.client.local import read_key_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up


def tenant_keys(url: str, operator: str, tenants: int) -> list[str]:
    keys = []
    for n in range(tenants):
        made = urllib3.request(
            "POST",
            f"{url}/v1/keys",
            json={"agent": f"bench-{n}", "tenant": f"bench{n}"},
            headers={"authorization": f"Bearer {operator}"},
        )
        keys.append(made.json()["key"])
    return keys


def batches(url: str, keys: list[str], texts: list[str], publishers: int, batch: int) -> float:
    """Events per second, `publishers` threads each sending batches to its own tenants."""
    chunks = [texts[n : n + batch] for n in range(0, len(texts), batch)]

    def publish(p: int) -> None:
        pool = urllib3.PoolManager(timeout=120.0)
        for c, chunk in enumerate(chunks[p::publishers]):
            key = keys[(p + c * publishers) % len(keys)]
            items = [{"text": t, "key": f"{p}-{c}-{n}"} for n, t in enumerate(chunk)]
            while True:
                answer = pool.request(
                    "POST",
                    f"{url}/v1/memories/batch",
                    json={"items": items},
                    headers={"authorization": f"Bearer {key}"},
                )
                if answer.status in (200, 201, 202):
                    break
                time.sleep(0.2)

    threads = [threading.Thread(target=publish, args=(p,)) for p in range(publishers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(texts) / (time.perf_counter() - started)


def singles(url: str, key: str, count: int) -> float:
    """Median milliseconds of one keyed append, one at a time."""
    pool = urllib3.PoolManager(timeout=30.0)
    took = []
    for n in range(count):
        started = time.perf_counter()
        pool.request(
            "POST",
            f"{url}/v1/memories",
            json={"text": f"billing single {n}", "key": f"single-{n}"},
            headers={"authorization": f"Bearer {key}"},
        )
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took)


def run(label: str, env: dict[str, str], texts: list[str], args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as home:
        process, banner = spawn_up(Path(home) / "data", {**UNLIMITED, **env}, timeout=180)
        try:
            url = banner_url(banner)
            keys = tenant_keys(url, read_key_file(Path(home) / "data") or "", args.tenants)
            rate = batches(url, keys, texts, args.publishers, args.batch)
            single = singles(url, keys[0], args.singles)
            print(
                f"{label:<34} {rate:9,.0f} events/s in batches of {args.batch}"
                f"   single keyed append p50 {single:5.1f} ms",
                flush=True,
            )
        finally:
            process.terminate()
            process.wait(120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--events", type=int, default=40_000)
    parser.add_argument("--tenants", type=int, default=24)
    parser.add_argument("--publishers", type=int, default=8)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--singles", type=int, default=300)
    args = parser.parse_args()
    texts = [r["text"][:2000] for r in load_corpus(args.corpus, args.events)]
    print(f"{args.events:,} commit messages, {args.tenants} tenants, {args.publishers} publishers")
    run("one Redis", {}, texts, args)
    run("cluster, 3 masters, WAIT 1 replica", {"ASSOCMEM_CLUSTER": "3"}, texts, args)


if __name__ == "__main__":
    main()
