"""Instructions per read through HTTP, both ends counted by callgrind: the tail of the whole request.

bench/work.py counts the engine's part of a read; this counts everything in user
space that a read through HTTP costs. The API replica (`assocmem serve`) runs
under callgrind with a dump each time httptools starts parsing a request, so a
dump holds one request from its parse to the next one's: uvicorn, routing,
validation, extraction of the query, recall, the response, and whatever the
replica's background threads did meanwhile. The client (`Client`, urllib3) runs
under callgrind too, with a marker call after each request. Not counted: the
kernel's part (loopback TCP, waking the processes), about the same for every
request.

    .venv/bin/python bench/http_work.py ../shared/data/corpus_en.jsonl --notes 50000 --reads 100

It writes --notes commits through HTTP to a pipeline of its own, as bench/recall.py
does, then starts a second API replica under valgrind on the same Redis
(loading 50,000 memories uninstrumented takes some minutes) and sends it, from a
client under valgrind, a row of health checks and, per query model, recall.py's
warm-up and queries at each depth. Each request takes 2 to 5 seconds under
callgrind: about 25 minutes per query model at --reads 100 (--modes).
Needs valgrind (Debian package `valgrind`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import orjson
from recall import DEPTHS, queries, wait_for_snapshot, wait_until_served, write_all
from skeleton import load_corpus
from work import WARM_UP, callgrind_parser, instructions, require_corpus_and_valgrind

from assocmem.api.client import Client
from assocmem.api.client.local import read_key_file
from assocmem.api.ops.run_file import read_run_file
from assocmem.api.ops.spawn import UNLIMITED, banner_url, spawn_up
from assocmem.workers.runtime.redis_server import free_port

HEALTH_CHECKS = 50
SERVER_MARKER = "llhttp_execute"
"""httptools' parser entry: entered once per request that arrives in one piece."""
SPLIT_PARSE_BELOW = 1_000_000
"""Instructions under which a server dump is the second parse of a request, not a request."""
CLIENT_MARKER = "getppid"
START_TIMEOUT = 1800.0
"""Seconds the replica under valgrind may take to load the state and answer."""


def build(args: argparse.Namespace, client: Client, redis_url: str) -> dict:
    rows = load_corpus(args.corpus, args.notes)
    written = write_all(client, rows, args.batch)
    wait_until_served(client, written[-1]["position"])
    wait_for_snapshot(redis_url, written[-1]["position"])
    now = max(float(r["ts"]) for r in rows)
    plan: list[dict] = []
    for mode in args.modes:
        texts = [text for _, text in queries(rows, written, args.reads, mode, args.seed)]
        plan.append({"mode": mode, "kind": "warm-up", "texts": texts[:WARM_UP]})
        if not any(row["kind"] == "health" for row in plan):
            plan.append({"mode": "-", "kind": "health", "texts": [""] * HEALTH_CHECKS})
        plan += [{"mode": mode, "kind": depth, "texts": texts} for depth in DEPTHS]
    return {"now": now, "rows": plan}


def send(client: Client, kind: str, text: str, now: float) -> None:
    if kind == "health":
        client.health()
    else:
        depth = "deep" if kind == "warm-up" else kind
        client.read(text, depth=depth, now=now, record_access=False, auto_time=False)


def run_client(url: str, workdir: Path) -> None:
    """The client under callgrind: one marker call before the first request and after each."""
    plan = orjson.loads((workdir / "plan.json").read_bytes())
    with Client(url, timeout=600) as client:
        client.health()  # the connection is open before counting starts
        (workdir / "client-loaded").touch()
        while not (workdir / "counting").exists():
            time.sleep(0.2)
        os.getppid()
        for row in plan["rows"]:
            for text in row["texts"]:
                send(client, row["kind"], text, plan["now"])
                os.getppid()
        client.health()  # its parse closes the server's dump of the last request


def callgrind(out: Path, marker: str, command: list[str]) -> list[str]:
    return [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--dump-before={marker}",
        "--dump-line=no",
        f"--callgrind-out-file={out}",
        *command,
    ]


def dumps(prefix: Path) -> list[Path]:
    return sorted(prefix.parent.glob(prefix.name + ".*"), key=lambda p: int(p.suffix[1:]))


def instrument(pid: int) -> None:
    subprocess.run(["callgrind_control", "--instr=on", str(pid)], check=True, capture_output=True)


def measure(plan: dict, redis_url: str, workdir: Path) -> tuple[list[int], list[int]]:
    """Instructions per request in the plan's order: (server's, client's)."""
    (workdir / "plan.json").write_bytes(orjson.dumps(plan))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "ASSOCMEM_URL"} | {"REDIS_URL": redis_url}
    server_command = [sys.executable, "-m", "assocmem.api.cli", "serve", "--port", str(port)]
    server_out, client_out = workdir / "server.out", workdir / "client.out"
    url = f"http://127.0.0.1:{port}"
    start = time.perf_counter()
    with subprocess.Popen(
        callgrind(server_out, SERVER_MARKER, server_command), env=env, stderr=subprocess.DEVNULL
    ) as server:
        try:
            wait_for_replica(url, server, start)
            wait_until_idle(server.pid)
            print(
                f"replica under valgrind loaded and idle after {time.perf_counter() - start:.0f} s"
            )
            client_command = [sys.executable, __file__, "--client", url, str(workdir)]
            with subprocess.Popen(
                callgrind(client_out, CLIENT_MARKER, client_command), stderr=subprocess.DEVNULL
            ) as client:
                while not (workdir / "client-loaded").exists():
                    if client.poll() is not None:
                        raise SystemExit(
                            f"the client under valgrind exited with {client.returncode}"
                        )
                    time.sleep(1.0)
                before = len(dumps(server_out))
                instrument(server.pid)
                instrument(client.pid)
                (workdir / "counting").touch()
                print("counting")
                if client.wait() != 0:
                    raise SystemExit(f"the client under valgrind exited with {client.returncode}")
        finally:
            server.terminate()
            server.wait(timeout=120)
    print(f"callgrind run: {time.perf_counter() - start:.0f} s")
    requests = sum(len(row["texts"]) for row in plan["rows"])
    # Server: request k (1-based, counted from `before`) is in the dump its successor's parse
    # starts. Client: callgrind.out.1 runs up to the first marker, callgrind.out.<k + 1> is k.
    server_counts = join_split_parses([instructions(d) for d in dumps(server_out)[before + 1 :]])
    client_counts = [instructions(d) for d in dumps(client_out)[1 : 1 + requests]]
    if len(server_counts) != requests or len(client_counts) != requests:
        raise SystemExit(
            f"{len(server_counts)} server and {len(client_counts)} client dumps for {requests}"
            " requests: a marker was not hit once per request"
        )
    return server_counts, client_counts


def join_split_parses(counts: list[int]) -> list[int]:
    """One count per request: urllib3 sends a POST's headers and body in two writes, and when
    the server reads them apart httptools is entered twice. The dump between the two parses
    (0.3-0.8 M instructions; no whole request is under 1.1 M) belongs to the request the next
    dump closes."""
    joined, carried = [], 0
    for count in counts:
        if count < SPLIT_PARSE_BELOW:
            carried += count
            continue
        joined.append(count + carried)
        carried = 0
    return joined


def wait_for_replica(url: str, server: subprocess.Popen, start: float) -> None:
    with Client(url, timeout=60) as client:
        while time.perf_counter() - start < START_TIMEOUT:
            if server.poll() is not None:
                raise SystemExit(f"the replica under valgrind exited with {server.returncode}")
            try:
                if client.health().get("served_position"):
                    return
            except Exception:  # not listening yet
                pass
            time.sleep(5.0)
    raise SystemExit(f"the replica under valgrind did not answer within {START_TIMEOUT:.0f} s")


def wait_until_idle(pid: int, interval: float = 3.0) -> None:
    """Until the process uses under half a core: the replica answers health checks before a
    background thread has loaded its dictionaries (a core's worth under valgrind for a minute
    or more), and that work is no request's. Idle, it still wakes 12 times a second (uvicorn's
    tick, the tail and access threads), which this VM charges as 10-25% of a core."""
    ticks_per_second = os.sysconf("SC_CLK_TCK")
    previous = cpu_ticks(pid)
    while True:
        time.sleep(interval)
        ticks = cpu_ticks(pid)
        if ticks - previous < 0.5 * interval * ticks_per_second:
            return
        previous = ticks


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def report(plan: dict, server: list[int], client: list[int]) -> None:
    at = 0
    for row in plan["rows"]:
        size = len(row["texts"])
        s = np.array(server[at : at + size], dtype=np.float64) / 1e6
        c = np.array(client[at : at + size], dtype=np.float64) / 1e6
        at += size
        if row["kind"] == "warm-up":
            continue
        total = s + c
        p50, p95 = np.percentile(total, 50), np.percentile(total, 95)
        print(
            f"{row['mode']:<14} {row['kind']:<8} M instructions per request:"
            f" server p50 {np.percentile(s, 50):6.2f} p95 {np.percentile(s, 95):6.2f};"
            f" client p50 {np.percentile(c, 50):5.2f} p95 {np.percentile(c, 95):5.2f};"
            f" both p50 {p50:6.2f} p95 {p95:6.2f} max {total.max():6.2f}  p95/p50 {p95 / p50:4.2f}"
        )


def main() -> None:
    parser = callgrind_parser(__doc__)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--client", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        run_client(args.client[0], Path(args.client[1]))
        return
    require_corpus_and_valgrind(parser, args)
    with tempfile.TemporaryDirectory(prefix="assocmem-http-work-") as home:
        process, banner = spawn_up(Path(home) / "data", UNLIMITED)
        os.environ["ASSOCMEM_API_KEY"] = (
            read_key_file(Path(home) / "data") or ""
        )  # the clients send it
        try:
            info = read_run_file(Path(home) / "data")
            if info is None or not info.redis_url:
                raise SystemExit("the pipeline wrote no run file with its Redis URL")
            with Client(banner_url(banner), timeout=600) as client:
                plan = build(args, client, info.redis_url)
            server, client_counts = measure(plan, info.redis_url, Path(home))
            report(plan, server, client_counts)
        finally:
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
