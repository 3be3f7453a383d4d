"""`assocmem up`: the embedded Redis, the HTTP API and the workers, started, watched and
stopped together.

The pipeline lives and dies whole: every child gets a signal when `up` dies, however it
dies (SIGKILL included), and the data directory stays locked until the last of them has
exited, so a second `up` can never run a second Redis on the same files. A child that
crashes is restarted; so is the embedded Redis, unless it keeps crashing, and then `up`
stops everything and exits non-zero with the reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from assocmem.api.errors import ApiError
from assocmem.api.ops.disk_reserve import RESERVE_FILE, DiskReserve, reserve_bytes
from assocmem.api.ops.embedded_cluster import EmbeddedCluster
from assocmem.api.ops.run_file import (
    KEY_FILE,
    RunInfo,
    lock_home,
    read_run_file,
    remove_run_file,
    write_run_file,
)
from assocmem.workers.errors import RedisLaunchError
from assocmem.workers.jobs.predecessor import predecessor_env
from assocmem.workers.runtime.child_process import LISTEN_FD, dies_with_parent
from assocmem.workers.runtime.redis_server import (
    POLL,
    RedisServer,
    start_redis,
    stored_password,
)
from assocmem.workers.runtime.settings import Settings, with_database
from assocmem.workers.store.disk_space import DiskSpace
from assocmem.workers.store.private_paths import private_directory

if TYPE_CHECKING:
    from assocmem.workers.jobs.idle_rewrite import IdleRewrite

READY_TIMEOUT = 60.0
"""Seconds the API may take to answer its health check after start."""
STOP_TIMEOUT = 10.0
"""Seconds a child may take to stop after SIGTERM before it is killed."""
REDIS_RESTARTS = 3
"""Crashes of the embedded Redis within REDIS_RESTART_WINDOW that `up` restarts; one more
and it gives up."""
REDIS_RESTART_WINDOW = 60.0
SHORT_RETRY = 5.0
"""Seconds between two starts of a Redis that exits on a full disk."""
QUICK_EXIT = 10.0
"""A child that exits by itself (not killed by a signal) this soon after its start is
restarted after a delay that doubles with each such exit in a row, up to RESTART_DELAY_MAX:
one that cannot start (a bad setting, a Redis that refuses it) was restarted at once,
again and again, each time with its CPU and a traceback."""
RESTART_DELAY_MAX = 30.0
BACKLOG = 2048
"""Connections the listening socket queues (uvicorn's own default)."""
SNAPSHOT_CACHE = "snapshot-cache"
"""Under the data directory: the local copy of the latest full snapshot (snapshot_cache.py)."""
SNAPSHOT_RUNGS = "snapshot-rungs"
"""Under the data directory: snapshots kept for as-of reads (snapshot_rungs.py)."""


class StopRequest:
    """Set from a signal handler. Not a threading.Event: a handler that sets an Event while the
    main thread waits on it deadlocks on the Event's own lock."""

    def __init__(self) -> None:
        self.is_set = False

    def set(self) -> None:
        self.is_set = True

    def wait(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while not self.is_set and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.is_set


class Child:
    """One supervised process (`assocmem serve` or `assocmem worker`), restarted if it dies."""

    def __init__(
        self,
        name: str,
        args: list[str],
        env: dict[str, str],
        log_path: Path,
        fds: tuple[int, ...],
        orphaned: int = signal.SIGTERM,
    ) -> None:
        """`fds`: the descriptors it inherits (the data directory's lock, first); `orphaned`:
        the signal it gets when `up` dies."""
        self.name, self.args, self.env, self.log_path, self.fds = name, args, env, log_path, fds
        self.orphaned = orphaned
        self.process = self._spawn()
        self.started = time.monotonic()
        self.quick_exits = 0
        self.due: float | None = None
        """When a dead child is started again (None: alive, or not yet seen dead)."""
        self.died_by = 0.0
        """Unix time by which the last child that died had died (when it was seen dead)."""

    def _spawn(self, predecessor: int | None = None) -> subprocess.Popen[bytes]:
        """`predecessor`: the pid of the process this one replaces, dead by `died_by` (a
        worker retries at once the jobs that one was running: workers/jobs/predecessor.py)."""
        env = self.env
        if predecessor is not None:
            env = {**env, **predecessor_env(predecessor, self.died_by)}
        with open(self.log_path, "ab") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "assocmem.api.cli", *self.args],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=dies_with_parent(self.orphaned),  # noqa: PLW1509 - one prctl call
                pass_fds=self.fds,
            )

    def restart_if_dead(self) -> bool:
        """Start it again if it died and its restart is due; whether it was."""
        code = self.process.poll()
        if code is None:
            return False
        now = time.monotonic()
        if self.due is None:
            delay, self.quick_exits = restart_delay(code, now - self.started, self.quick_exits)
            self.due = now + delay
            self.died_by = time.time()
        if now < self.due:
            return False
        self.process, self.started, self.due = self._spawn(self.process.pid), now, None
        return True


def stop_together(children: list[Child]) -> None:
    """SIGTERM to each at once, then a wait for all: they stop side by side (the API's stop
    alone takes most of a second), each killed if not gone STOP_TIMEOUT after its signal."""
    running = [child.process for child in children if child.process.poll() is None]
    for process in running:
        process.terminate()
    deadline = time.monotonic() + STOP_TIMEOUT
    for process in running:
        try:
            process.wait(max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def restart_delay(code: int, lived: float, quick_exits: int) -> tuple[float, int]:
    """Seconds to wait before a restart of a child that exited with `code` after `lived`
    seconds, and its count of quick exits in a row (`quick_exits` before this one)."""
    if code < 0 or lived >= QUICK_EXIT:  # killed from outside, or it ran a while: at once
        return 0.0, 0
    return min(2.0**quick_exits, RESTART_DELAY_MAX), quick_exits + 1


class EmbeddedRedis:
    """The pipeline's own redis-server: password-protected, restarted when it crashes."""

    def __init__(self, home: Path, settings: Settings, lock: int) -> None:
        self.data_dir = home / "redis"
        self.appendfsync = settings.appendfsync
        self.lock = lock
        self.password = stored_password(self.data_dir)
        self.crashes: list[float] = []
        self.disk = DiskSpace([home], settings.min_free_mb)
        self.reserve = DiskReserve(home / RESERVE_FILE, reserve_bytes(settings.min_free_mb))
        self.short = self.disk.shortage() is not None
        if not self.short:
            self.reserve.keep()
        self.next_try = 0.0
        # Not waited for here: `up` starts the API meanwhile (run_pipeline)
        self.server = self._start(None, until="spawned")

    def _start(
        self, port: int | None, until: Literal["spawned", "loaded"] = "loaded"
    ) -> RedisServer:
        return start_redis(
            self.data_dir,
            port=port,
            appendfsync="everysec" if self.short else self.appendfsync,
            password=self.password,
            keep_fds=(self.lock,),
            until=until,
        )

    def restart_if_dead(self) -> str | None:
        """None while it runs; a line saying it was restarted; ApiError when it keeps dying
        on a disk with room. On a full disk it is restarted on the room kept back for it
        (api/ops/disk_reserve.py), and tried again every SHORT_RETRY seconds, never given
        up on: writes wait for room, and reads go on once it is back."""
        code = self.server.process.poll()
        if code is None:
            return None
        now = time.monotonic()
        self.short = self.disk.shortage() is not None
        if self.short:
            if now < self.next_try:
                return None
            self.next_try = now + SHORT_RETRY
            released = self.reserve.release()
        else:
            self.crashes = [t for t in self.crashes if now - t < REDIS_RESTART_WINDOW] + [now]
            if len(self.crashes) > REDIS_RESTARTS:
                raise ApiError(
                    f"the embedded redis-server exited {len(self.crashes)} times within"
                    f" {REDIS_RESTART_WINDOW:.0f} s (last code {code});"
                    f" see {self.data_dir / 'redis.log'}"
                )
        try:
            self.server = self._start(self.server.port)
        except (OSError, RedisLaunchError) as exc:
            if not self.short:
                raise
            return f"embedded redis-server exited on a full disk and cannot start yet: {exc}"
        if self.short:
            room = "on the room kept back for it" if released else "on what room there is"
            return f"embedded redis-server exited on a full disk (code {code}); restarted {room}"
        return f"embedded redis-server exited with code {code}; restarted"

    def disk_short(self, short: bool) -> None:
        """While its disk is short of room, Redis syncs its AOF every second rather than at
        every write: with `always`, an AOF write that fails makes Redis exit (the write is
        applied and cannot be kept); with `everysec` it refuses writes (MISCONF) and writes
        its buffer once there is room again. The API refuses appends long before that."""
        self.short = short
        if not short:
            self.reserve.keep()
        if self.appendfsync != "always":
            return
        from redis import Redis, RedisError

        client = Redis(port=self.server.port, password=self.password, socket_timeout=5.0)
        with contextlib.suppress(RedisError), client:  # down: restart_if_dead says so
            client.config_set("appendfsync", "everysec" if short else "always")

    def idle_rewrite(self, quiet: float) -> IdleRewrite | None:
        """Its AOF rewritten once it has stood still `quiet` seconds (0: never)."""
        if not quiet:
            return None
        from redis import Redis

        from assocmem.workers.jobs.idle_rewrite import IdleRewrite

        client = Redis(port=self.server.port, password=self.password, socket_timeout=5.0)
        return IdleRewrite(client, quiet)

    def stop(self) -> None:
        self.server.stop()


def run_pipeline(
    settings: Settings,
    workers: int = 1,
    echo: Callable[[str], None] = print,
    cluster_masters: int = 0,
) -> None:
    """`cluster_masters`: keep the data in a local Redis Cluster of that many masters, with a
    replica each (api/ops/embedded_cluster.py); the embedded Redis keeps RQ's queues."""
    home = settings.home.resolve()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)  # an existing one is left as it is
    lock = lock_home(home)
    if lock is None:
        running = read_run_file(home)
        where = (
            f" at {running.url} (pid {running.up_pid})" if running else " (starting or stopping)"
        )
        raise ApiError(f"a pipeline already runs from {home}{where}", 409)
    stop = StopRequest()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    if cluster_masters and settings.redis_url:
        raise ApiError("--cluster starts a Redis Cluster of its own: unset REDIS_URL", 2)
    listener = _listening_socket(settings.host, settings.port)
    redis: EmbeddedRedis | None = None
    cluster: EmbeddedCluster | None = None
    try:
        redis = EmbeddedRedis(home, settings, lock) if not settings.redis_url else None
        if redis and cluster_masters:
            echo(f"starting a local Redis Cluster: {cluster_masters} masters, a replica each")
            cluster = EmbeddedCluster(home, cluster_masters, settings.appendfsync, lock)
    except BaseException:
        if redis:
            redis.stop()
        listener.close()
        raise
    if cluster and redis:
        queue = with_database(redis.server.url, 1)
        # a write is acknowledged once a replica has it: a failover loses none
        settings = dataclasses.replace(
            settings, redis_url=cluster.url, queue_url=queue, write_replicas=1
        )
    elif redis:
        settings = settings.with_redis(redis.server.url)
    children: list[Child] = []
    try:
        port = listener.getsockname()[1]
        url = f"http://{settings.host}:{port}"
        env = _child_env(settings, home, port, own_redis=redis is not None)
        logs = private_directory(home / "logs")
        # The API imports (and decodes its copy of the snapshot) while Redis starts and loads
        # its data (seconds at a million events); it waits for the load before it reads.
        api_env = env | {LISTEN_FD: str(listener.fileno())}
        # Killed when `up` dies, as the workers below: its stop waits for the requests in
        # flight and its threads (0.8-1 s beside a Redis of its own, longer under a read).
        children.append(
            Child(
                "api",
                ["serve"],
                api_env,
                logs / "api.log",
                (lock, listener.fileno()),
                signal.SIGKILL,
            )
        )
        if redis:
            redis.server.wait_answering()
            redis.server.wait_loaded()
        # Imported here, not at the top: Redis and the API are started first
        from assocmem.api.ops.operator_key import ensure_operator_key

        if ensure_operator_key(settings, home):
            echo(f"made an operator API key: {home / KEY_FILE} (the CLI uses it)")
        # The API starts alone: on two cores, three interpreters importing at once made it
        # serve later; the workers' first jobs can wait that second.
        _wait_healthy(url, children[0], stop)
        # A worker stops on SIGTERM only once its job is done (RQ's warm stop): a replay of a
        # million events is a minute, and the data directory stays locked till then. So
        # when `up` dies, workers are killed, as `stop` would after STOP_TIMEOUT; the job is
        # then one of a killed worker (workers/runtime/worker.py). The cron stops at once.
        children += [
            Child(f"worker-{i}", ["worker"], env, logs / f"worker-{i}.log", (lock,), signal.SIGKILL)
            for i in range(workers)
        ]
        children.append(Child("cron", ["cron"], env, logs / "cron.log", (lock,)))
        _record(home, url, children, redis, settings, cluster)
        echo(f"assocmem serving {url}  (data: {home}, logs: {logs}; Ctrl-C stops)")
        _watch(home, url, children, redis, settings, stop, echo, cluster)
    finally:
        stop_together(children)
        if cluster:
            cluster.stop()
        if redis:
            redis.stop()
        listener.close()
        remove_run_file(home)
        os.close(lock)


def _listening_socket(host: str, port: int) -> socket.socket:
    """A socket listening on `host`:`port` (0: a free port), for the API to inherit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        if exc.errno == errno.EADDRINUSE:
            raise ApiError(
                f"port {port} on {host} is in use by another program: stop it, or pass"
                " --port (0 picks a free one)"
            ) from None
        raise ApiError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    listener.listen(BACKLOG)
    listener.set_inheritable(True)
    return listener


def _watched(settings: Settings, home: Path, redis: EmbeddedRedis | None) -> list[Path]:
    """The directories whose disks the pipeline writes to: its Redis's, if its own, and the
    snapshot copies' (as its children's settings name them)."""
    env = _child_env(settings, home, 0, own_redis=redis is not None)
    paths = [Path(p) for p in env["ASSOCMEM_DISK_PATHS"].split(os.pathsep) if p]
    paths += [Path(env[n]) for n in ("ASSOCMEM_SNAPSHOT_CACHE", "ASSOCMEM_SNAPSHOT_RUNGS")]
    return [p for p in dict.fromkeys(paths) if str(p) != "."]


def _child_env(settings: Settings, home: Path, port: int, own_redis: bool) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "REDIS_URL": settings.redis_url or "",
            "ASSOCMEM_HOME": str(home),
            "ASSOCMEM_TENANT": settings.tenant,
            "ASSOCMEM_PORT": str(port),
            "ASSOCMEM_FOLD_INTERVAL": str(settings.fold_interval),
            "ASSOCMEM_WRITE_REPLICAS": str(settings.write_replicas),
        }
    )
    if settings.queue_url:
        env["ASSOCMEM_QUEUE_URL"] = settings.queue_url
    # The API decodes this copy of the latest snapshot while Redis loads (set empty: none)
    env.setdefault("ASSOCMEM_SNAPSHOT_CACHE", str(home / SNAPSHOT_CACHE))
    # Every process rebuilding as_of states starts from these too (set empty: none kept)
    env.setdefault("ASSOCMEM_SNAPSHOT_RUNGS", str(home / SNAPSHOT_RUNGS))
    # Appends wait while these disks are short of room (workers/store/disk_space.py): its
    # own Redis keeps its AOF in the data directory
    env.setdefault("ASSOCMEM_DISK_PATHS", str(home) if own_redis else "")
    return env


def _wait_healthy(url: str, api: Child, stop: StopRequest) -> None:
    """Until the API is ready. READY_TIMEOUT bounds the wait for its first answer; while it
    answers that it is loading its state (longer at millions of events), it is waited for."""
    import urllib3  # not at the top: see workers/runtime/redis_server.py

    deadline = time.monotonic() + READY_TIMEOUT
    while not stop.is_set:
        if api.process.poll() is not None:
            raise ApiError(f"the API exited with code {api.process.returncode}; see {api.log_path}")
        try:
            answer = urllib3.request("GET", f"{url}/readyz", timeout=1.0, retries=False)
            if answer.status == 200:
                return
            if answer.status == 503 and answer.json().get("status") == "loading":
                deadline = time.monotonic() + READY_TIMEOUT
        except (urllib3.exceptions.HTTPError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise ApiError(
                f"the API did not answer at {url} within {READY_TIMEOUT:.0f} s; see {api.log_path}"
            )
        time.sleep(POLL)


def _record(
    home: Path,
    url: str,
    children: list[Child],
    redis: EmbeddedRedis | None,
    settings: Settings,
    cluster: EmbeddedCluster | None = None,
) -> None:
    info = RunInfo(
        url=url,
        up_pid=os.getpid(),
        api_pid=children[0].process.pid,
        worker_pids=[c.process.pid for c in children if c.name.startswith("worker")],
        cron_pid=children[-1].process.pid,
        redis_pid=redis.server.pid if redis else None,
        redis_url=settings.redis_url or "",
        cluster_pids=cluster.pids if cluster else [],
        queue_url=settings.queue_url,
    )
    write_run_file(home, info)


def _watch(
    home: Path,
    url: str,
    children: list[Child],
    redis: EmbeddedRedis | None,
    settings: Settings,
    stop: StopRequest,
    echo: Callable[[str], None],
    cluster: EmbeddedCluster | None = None,
) -> None:
    from redis import RedisError

    rewrite = redis.idle_rewrite(settings.aof_rewrite_quiet) if redis else None
    disk = DiskSpace(_watched(settings, home, redis), settings.min_free_mb)
    short: str | None = None
    while not stop.wait(0.5):
        restarted = [c.name for c in children if c.restart_if_dead()]
        said = redis.restart_if_dead() if redis else None
        said_of_nodes = cluster.restart_if_dead() if cluster else None
        if said_of_nodes:
            echo(said_of_nodes)
            _record(home, url, children, redis, settings, cluster)
        now_short = disk.shortage()
        if (now_short is None) != (short is None) or said:
            if redis:
                redis.disk_short(now_short is not None)
            if (now_short is None) != (short is None):
                echo(f"disk low: {now_short}" if now_short else "disk: room again, writes go on")
        short = now_short
        if rewrite is not None and not said and short is None:  # a rewrite needs room too
            with contextlib.suppress(RedisError):  # it is down: restart_if_dead says so
                rewrite.check()
        if said:
            echo(said)
        if restarted:
            echo(f"restarted {', '.join(restarted)} (see {home / 'logs'})")
        if said or restarted:
            _record(home, url, children, redis, settings, cluster)
