"""Many tenants through several API replicas over one Redis: `--tenants` tenants of
`--memories` commit messages each, written through the replicas in turn, then read
through another replica than the one that wrote them. Reports the first read of a cold
tenant (its state loaded from its snapshot and log), the read p50 once warm, and the
memory a warm tenant costs a replica (RSS grown over the tenants it warmed).

    .venv/bin/python bench/many_tenants.py ../shared/data/corpus_en.jsonl --tenants 1000 --memories 1000
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import urllib3
from recall import rss_mb
from skeleton import load_corpus

from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up
from assocmem.workers.runtime.redis_server import free_port


def serve(redis_url: str, home: Path, n: int) -> tuple[subprocess.Popen[bytes], str]:
    """Another API replica over the same Redis."""
    port = free_port()
    env = {**os.environ, **UNLIMITED, "REDIS_URL": redis_url, "ASSOCMEM_HOME": str(home)}
    log = open(home / f"replica-{n}.log", "wb")  # noqa: SIM115 - the child's
    process = subprocess.Popen(
        [sys.executable, "-m", "assocmem.api.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if urllib3.request("GET", f"{url}/healthz", retries=False).status == 200:
                return process, url
        except urllib3.exceptions.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"replica {n} did not answer")


def call(url: str, key: str, method: str, path: str, body: object) -> urllib3.BaseHTTPResponse:
    while True:
        answer = urllib3.request(
            method,
            f"{url}{path}",
            json=body,
            headers={"authorization": f"Bearer {key}"},
            timeout=300.0,
        )
        if answer.status != 503:
            return answer
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("corpus", type=Path, help="corpus_en.jsonl (one JSON commit per line)")
    parser.add_argument("--tenants", type=int, default=1000)
    parser.add_argument("--memories", type=int, default=1000, help="per tenant")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--reads", type=int, default=300, help="warm reads timed")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rows = load_corpus(args.corpus, args.memories * 4)
    texts = [r["text"][:2000] for r in rows]
    questions = [t.splitlines()[0][:200] for t in texts if t.strip()]
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as home:
        data = Path(home) / "data"
        up, banner = spawn_up(data, UNLIMITED)
        replicas: list[subprocess.Popen[bytes]] = []
        try:
            info = read_run_file(data)
            assert info is not None
            operator = read_key_file(data) or ""
            urls = [banner_url(banner)]
            for n in range(1, args.replicas):
                process, url = serve(info.redis_url, Path(home), n)
                replicas.append(process)
                urls.append(url)
            pids = [info.api_pid, *(p.pid for p in replicas)]
            keys = []
            for t in range(args.tenants):
                made = call(
                    urls[0], operator, "POST", "/v1/keys", {"agent": "bench", "tenant": f"t{t}"}
                )
                keys.append(made.json()["key"])
            started = time.perf_counter()
            for t, key in enumerate(keys):  # tenant t written through replica t % replicas
                picked = rng.sample(texts, args.memories)
                for s in range(0, len(picked), 1000):
                    items = [{"text": x} for x in picked[s : s + 1000]]
                    call(urls[t % len(urls)], key, "POST", "/v1/memories/batch", {"items": items})
                if (t + 1) % 100 == 0:
                    rate = (t + 1) * args.memories / (time.perf_counter() - started)
                    print(f"  {t + 1} tenants written ({rate:,.0f} memories/s)", flush=True)
            print(f"written {args.tenants * args.memories:,} memories", flush=True)
            time.sleep(10)  # the workers fold and publish the tenants' snapshots meanwhile
            rss_before = [rss_mb(pid) for pid in pids]
            cold, warm = [], []
            for t, key in enumerate(keys):  # through the next replica: it never served t
                url = urls[(t + 1) % len(urls)]
                body = {"text": rng.choice(questions), "record_access": False}
                began = time.perf_counter()
                call(url, key, "POST", "/v1/read", body)
                cold.append((time.perf_counter() - began) * 1000)
            for _ in range(args.reads):
                t = rng.randrange(args.tenants)
                body = {"text": rng.choice(questions), "record_access": False}
                began = time.perf_counter()
                call(urls[(t + 1) % len(urls)], keys[t], "POST", "/v1/read", body)
                warm.append((time.perf_counter() - began) * 1000)
            rss_after = [rss_mb(pid) for pid in pids]
            grown = sum(rss_after) - sum(rss_before)
            print(
                f"{args.tenants} tenants x {args.memories} memories, {len(urls)} API replicas:\n"
                f"  first read of a cold tenant: p50 {statistics.median(cold):.0f} ms,"
                f" p95 {sorted(cold)[int(len(cold) * 0.95)]:.0f} ms\n"
                f"  read once warm: p50 {statistics.median(warm):.1f} ms,"
                f" p95 {sorted(warm)[int(len(warm) * 0.95)]:.1f} ms\n"
                f"  replicas' RSS {', '.join(f'{r:.0f}' for r in rss_before)} MB ->"
                f" {', '.join(f'{r:.0f}' for r in rss_after)} MB:"
                f" {grown / args.tenants:.2f} MB per tenant warmed"
            )
        finally:
            for process in replicas:
                process.terminate()
                process.wait(60)
            up.terminate()
            up.wait(120)


if __name__ == "__main__":
    main()
