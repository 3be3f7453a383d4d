"""What idempotency keys cost Redis: `--events` short keyed events appended through the
log's Lua script (batches of 1,000, every key new, as clients send them), then Redis's
memory, its keys, the script's time per batch and how long a restart takes to load the
data (its AOF rewritten first, as a running pipeline's is).

    .venv/bin/python bench/idempotency.py --events 1000000

Another version compares by running with its checkout's packages first on the path.
About a minute per million events.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import redis
from cold_start import redis_load  # bench/ is on sys.path when a script here runs

from assocmem.engine.events.envelope import Event
from assocmem.workers.runtime.redis_server import start_redis
from assocmem.workers.store.redis.stores import RedisEventLog

BATCH = 1000
DATA = {"text": "a short note", "concepts": ["short", "note"], "importance": 3, "extractor": "t"}


def keyed_batch() -> list[Event]:
    return [
        Event(
            "memory.written", "default", "bench", 1.0, DATA, key=uuid.uuid4().hex, fingerprint="-"
        )
        for _ in range(BATCH)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="assocmem-idem-") as directory:
        home = Path(directory)
        server = start_redis(home / "redis")  # where cold_start.redis_load reads its log
        try:
            client = redis.Redis.from_url(server.url)
            log = RedisEventLog(client)
            client.config_resetstat()
            seconds = []
            for done in range(0, args.events, BATCH):
                events = keyed_batch()
                began = time.perf_counter()
                log.append("default", events)
                seconds.append(time.perf_counter() - began)
                if (done + BATCH) % 200_000 == 0:
                    print(f"  {done + BATCH:,} events", flush=True)
            script = client.info("commandstats")["cmdstat_evalsha"]["usec_per_call"] / 1000
            memory = client.info("memory")["used_memory"] / 2**20
            print(
                f"{args.events:,} keyed events: {client.dbsize():,} Redis keys, {memory:,.0f} MB;"
                f" a batch of {BATCH:,}: script {script:.2f} ms in Redis,"
                f" append {statistics.median(seconds) * 1000:.2f} ms (median)"
            )
            log.compact()  # as a running pipeline's AOF is rewritten
            client.close()
        finally:
            server.stop(120)
        for n in range(2):
            server = start_redis(home / "redis")
            server.stop(120)
            print(f"restart {n + 1}: Redis: {redis_load(home)}")


if __name__ == "__main__":
    main()
