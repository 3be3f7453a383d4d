"""Settings, read once at the edge from a mapping (os.environ in production, a dict in tests)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from assocmem.workers.errors import SettingError
from assocmem.workers.store.ports import DEFAULT_LADDER, Ladder
from assocmem.workers.store.redis.keys import check_tenant

T = TypeVar("T")

DEFAULT_HOME = ".assocmem"
"""Data directory of the embedded Redis and the run file, relative to the working directory."""
DEFAULT_PORT = 8765
DEFAULT_FOLD_INTERVAL = 0.25
"""Seconds between a worker's checks for tenants with new events (or a snapshot due): what
a snapshot lags behind the log, beside the fold itself (two Redis round trips a
check, however many tenants). A second between checks more than doubled the fold lag's
p99 under a steady stream of writes (bench/fold_lag.py; figures in bench/README.md)."""
DEFAULT_SNAPSHOTS_KEPT = 4
"""The newest snapshots kept per tenant, beside the newest of each hour and day
(`stores.Ladder`); a kept delta's bases are kept too."""
DEFAULT_RUNG_EVENTS = 10_000
"""Events folded between two snapshots kept on disk for as-of reads (workers/store/snapshot_rungs.py):
a rebuild folds at most about this many after the one it starts from, a fraction of a
second. Rungs further apart cost less disk and slower as-of reads (bench/as_of.py; figures
in bench/README.md)."""
DEFAULT_RUNGS_KEPT = 128
"""The most kept per tenant, thinned evenly past it: a million events keeps all of them."""
DEFAULT_DISK_BUDGET = 1024**3
"""The rungs of every tenant together and the copy of the newest snapshot: what a million
commit messages keep within it, and the as-of reads it gives, are in bench/README.md."""
DEFAULT_APPENDFSYNC = "always"
"""The embedded Redis fsyncs its AOF before it answers a write: an acknowledged event
survives Redis's death (a `kill -9` of `up` takes Redis with it) and the machine's.
Under `everysec`, Redis answers writes it has not yet handed to the kernel while a
previous fsync is still running (a disk stalled, as under memory pressure, when processes
get killed), and a kill then lost acknowledged appends. It costs a fsync per round of
Redis's event loop: single appends through HTTP are a little slower, and reads too (each
counts against its key's rate in Redis); batched appends and the fold lag are not
(figures in bench/README.md)."""
DEFAULT_SNAPSHOT_EVERY = 1000
"""Events after the latest snapshot that make the workers publish the next one."""
DEFAULT_SNAPSHOT_AFTER = 60.0
"""Seconds a folded event may wait for a snapshot when fewer than SNAPSHOT_EVERY came."""
DEFAULT_SNAPSHOT_SHARE = 0.25
"""The largest share of a worker's time that publishing takes while events stream in: past
SNAPSHOT_EVERY events, the next snapshot waits until the worker has spent (1 - share) /
share times the last publish's time on other work. At 50,000 memories a delta takes tens
of milliseconds to a few tenths of a second; one every 1,000 events of a burst was more
than half of a worker's time."""
DEFAULT_IDEMPOTENCY_TTL = 7 * 24 * 3600
"""Seconds an idempotency key is remembered at least (at most twice as long: see
workers/store/redis/append.lua)."""
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
"""Bytes of one request body: a batch of 1,000 commit messages is about 1 MB. A larger body
is refused (413) from its Content-Length, or as soon as it grows past the limit."""
DEFAULT_HEADER_TIMEOUT = 10.0
"""Seconds a connection may take to send a request's headers before it is closed."""
DEFAULT_BODY_TIMEOUT = 30.0
"""Seconds a request may take to send its body once its headers are in."""
DEFAULT_MAX_CONNECTIONS = 200
"""Requests in flight one API process answers at once; more get 503. Idle connections do
not count (api/http/in_flight.py)."""
DEFAULT_READ_TIMEOUT = 10.0
"""Seconds a read or a chain may take before the API answers 503 (the work goes on in its
thread, the connection is freed)."""
DEFAULT_KEY_REQUESTS = 500
"""Requests per second one API key may send, across every replica (0: no limit)."""
DEFAULT_KEY_EVENTS = 25_000
"""Events per second one API key may append, across every replica (0: no limit); at least
a full batch (1,000), so a batch always fits."""
DEFAULT_KEY_FAILURES = 30
"""Requests with an unknown or revoked key one peer (address) may send in a minute, across
every replica, before its requests are refused with a 429 for the rest of it (0: no limit):
guessing keys costs time, and a valid key from another peer is never slowed."""
DEFAULT_TENANT_STATE_MB = 4096
"""A replica keeps the states of the tenants it served up to this (estimated as
workers/state/live.py says): about 800 tenants of 1,000 memories, or 2.5 million memories
in one tenant."""
DEFAULT_MIN_FREE_MB = 500
"""Free space (MB) below which writes are refused on every watched disk: above the size of
a snapshot at a million memories (258 MB), so a publish that passed the check cannot fill
what is left (workers/store/disk_space.py)."""
DEFAULT_EXTRACTION_HELPERS = max(0, min(4, (os.cpu_count() or 1) - 1))
"""Processes an API process sends parts of a large batch's concept extraction to: one fewer
than the cores, at most 4 (0: every text is extracted in the API process)."""
DEFAULT_RETENTION_DAYS = 30.0
"""Log entries older than this (and in a snapshot) move to compressed archive segments."""
DEFAULT_CONSOLIDATE_AT = "02:30"
"""Local time (ASSOCMEM_TZ) of the nightly sleep consolidation of every tenant."""
CONSOLIDATION_OFF = "off"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclasses.dataclass(frozen=True, slots=True)
class ConsolidationSettings:
    """The nightly consolidation: when it runs and the rule it decides by (engine/events/consolidation.py)."""

    at: str = DEFAULT_CONSOLIDATE_AT
    """A time of day, HH:MM, a cron expression (five fields; a sixth names seconds), or
    `off` (CONSOLIDATION_OFF): no night is scheduled, `assocmem consolidate` still runs."""
    window_days: float = 90.0
    written_half_life_days: float | None = None
    """None: never (the default; see engine/events/consolidation.py)."""
    taught_half_life_days: float | None = None
    min_cooccurrence: int = 2
    vocabulary_cap: int = 500_000
    merge_duplicates: bool = True

    def cron(self) -> str | None:
        """The schedule as a cron expression; None when nightly consolidation is off."""
        if self.at == CONSOLIDATION_OFF:
            return None
        if ":" in self.at:
            hour, minute = self.at.split(":")
            return f"{int(minute)} {int(hour)} * * *"
        return self.at

    def rule_values(self) -> dict[str, Any]:
        values = dataclasses.asdict(self)
        del values["at"]
        return values


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    redis_url: str | None = None
    """Data Redis; None starts the embedded server."""
    queue_url: str | None = None
    """RQ's Redis; None means database 1 of the data server."""
    home: Path = Path(DEFAULT_HOME)
    tenant: str = "default"
    snapshot_cache: Path | None = None
    """Directory of the local copy of `tenant`'s newest full snapshot (workers/state/snapshot_cache.py);
    None: no copy."""
    snapshot_rungs: Path | None = None
    """Directory of the snapshots kept on disk for as-of reads (workers/store/snapshot_rungs.py);
    None: none kept."""
    rung_events: int = DEFAULT_RUNG_EVENTS
    """Events folded between two of them (0: none kept)."""
    rungs_kept: int = DEFAULT_RUNGS_KEPT
    """At most this many per tenant, thinned evenly over the log."""
    disk_budget: int = DEFAULT_DISK_BUDGET
    """Bytes the snapshots kept on local disk (the rungs, every tenant's together, and the
    copy of the newest) may take; past it the oldest rungs are compressed, then the rungs
    thin out evenly (0: no bound)."""
    appendfsync: str = DEFAULT_APPENDFSYNC
    aof_rewrite_quiet: float = 60.0
    """Seconds the embedded Redis's AOF must stay still before `up` has it rewritten
    (workers/jobs/idle_rewrite.py); 0: never (Redis still rewrites it by itself)."""
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    fold_interval: float = DEFAULT_FOLD_INTERVAL
    snapshots_kept: int = DEFAULT_SNAPSHOTS_KEPT
    snapshots_hourly: int = 24
    """Hours back for which the newest snapshot of each hour is kept."""
    snapshots_daily: int = 30
    """Days back for which the newest snapshot of each day is kept."""
    snapshots_stride: int = DEFAULT_LADDER.stride
    """Events folded apart for which the newest snapshot of each run is kept (0: none)."""
    snapshots_strides: int = DEFAULT_LADDER.strides
    """Runs back for which it is kept."""
    snapshot_every: int = DEFAULT_SNAPSHOT_EVERY
    snapshot_after: float = DEFAULT_SNAPSHOT_AFTER
    snapshot_share: float = DEFAULT_SNAPSHOT_SHARE
    idempotency_ttl: int = DEFAULT_IDEMPOTENCY_TTL
    timezone: str = "UTC"
    """IANA zone that time expressions ("yesterday", "上周") and activity days are read in."""
    allowed_hosts: tuple[str, ...] = ()
    """Host headers the API answers (besides the bound address and loopback names)."""
    max_body: int = DEFAULT_MAX_BODY_BYTES
    header_timeout: float = DEFAULT_HEADER_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    read_timeout: float = DEFAULT_READ_TIMEOUT
    consolidation: ConsolidationSettings = ConsolidationSettings()
    retention_days: float = DEFAULT_RETENTION_DAYS
    key_requests: int = DEFAULT_KEY_REQUESTS
    key_events: int = DEFAULT_KEY_EVENTS
    key_failures: int = DEFAULT_KEY_FAILURES
    extraction_helpers: int = DEFAULT_EXTRACTION_HELPERS
    tenant_state_mb: int = DEFAULT_TENANT_STATE_MB
    """Memory the live states of tenants may hold in one process before the least recently
    used are let go (0: no bound)."""
    write_replicas: int = 0
    """Replicas an append must reach before it is acknowledged (WAIT; `up --cluster`: 1)."""
    min_free_mb: int = DEFAULT_MIN_FREE_MB
    """Writes are refused while a watched disk has less free (0: never)."""
    disk_paths: tuple[Path, ...] = ()
    """Directories whose disks are watched besides the snapshot copies' (`up`: its data
    directory, where its Redis keeps the AOF)."""

    def watched_paths(self) -> tuple[Path, ...]:
        """Every directory whose disk must keep `min_free_mb` free for writes to go on."""
        named = (*self.disk_paths, self.snapshot_rungs, self.snapshot_cache)
        return tuple(dict.fromkeys(p for p in named if p is not None))

    def hosts(self) -> tuple[str, ...]:
        """Every Host header the API answers: the bound address, loopback, the configured ones."""
        return tuple(dict.fromkeys((self.host, *LOOPBACK_HOSTS, *self.allowed_hosts)))

    def ladder(self) -> Ladder:
        return Ladder(
            self.snapshots_kept,
            self.snapshots_hourly,
            self.snapshots_daily,
            self.snapshots_stride,
            self.snapshots_strides,
        )

    def with_redis(self, redis_url: str) -> Settings:
        return dataclasses.replace(self, redis_url=redis_url)

    def resolved_queue_url(self) -> str:
        if self.queue_url:
            return self.queue_url
        if not self.redis_url:
            raise SettingError("REDIS_URL is not set and no embedded Redis is running")
        if self.redis_url.split("://", 1)[0].endswith("+cluster"):
            raise SettingError(
                f"REDIS_URL {self.redis_url.split('@')[-1]!r} is a Redis Cluster and"
                " ASSOCMEM_QUEUE_URL is not set: RQ's queues need one Redis of their own"
                " (a plain redis:// URL)"
            )
        return with_database(self.redis_url, 1)


def load_settings(env: Mapping[str, str], **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "redis_url": env.get("REDIS_URL") or None,
        "queue_url": env.get("ASSOCMEM_QUEUE_URL") or None,
        "home": Path(env.get("ASSOCMEM_HOME", DEFAULT_HOME)),
        "tenant": _read(env, "ASSOCMEM_TENANT", "default", check_tenant),
        "snapshot_cache": Path(cache) if (cache := env.get("ASSOCMEM_SNAPSHOT_CACHE")) else None,
        "snapshot_rungs": Path(rungs) if (rungs := env.get("ASSOCMEM_SNAPSHOT_RUNGS")) else None,
        "rung_events": _read(env, "ASSOCMEM_RUNG_EVENTS", DEFAULT_RUNG_EVENTS, _whole),
        "rungs_kept": _read(env, "ASSOCMEM_RUNGS_KEPT", DEFAULT_RUNGS_KEPT, _at_least_two),
        "disk_budget": _read(env, "ASSOCMEM_DISK_BUDGET", DEFAULT_DISK_BUDGET, _size),
        "appendfsync": _read(env, "ASSOCMEM_APPENDFSYNC", DEFAULT_APPENDFSYNC, _appendfsync),
        "aof_rewrite_quiet": _read(env, "ASSOCMEM_AOF_REWRITE_QUIET", 60.0, _seconds),
        "port": _read(env, "ASSOCMEM_PORT", DEFAULT_PORT, _port),
        "fold_interval": _read(
            env, "ASSOCMEM_FOLD_INTERVAL", DEFAULT_FOLD_INTERVAL, _positive_float
        ),
        "snapshots_kept": _read(
            env, "ASSOCMEM_SNAPSHOTS_KEPT", DEFAULT_SNAPSHOTS_KEPT, _positive_int
        ),
        "snapshots_hourly": _read(env, "ASSOCMEM_SNAPSHOTS_HOURLY", 24, _whole),
        "snapshots_daily": _read(env, "ASSOCMEM_SNAPSHOTS_DAILY", 30, _whole),
        "snapshots_stride": _read(env, "ASSOCMEM_SNAPSHOTS_STRIDE", DEFAULT_LADDER.stride, _whole),
        "snapshots_strides": _read(
            env, "ASSOCMEM_SNAPSHOTS_STRIDES", DEFAULT_LADDER.strides, _whole
        ),
        "snapshot_every": _read(
            env, "ASSOCMEM_SNAPSHOT_EVERY", DEFAULT_SNAPSHOT_EVERY, _positive_int
        ),
        "snapshot_after": _read(
            env, "ASSOCMEM_SNAPSHOT_AFTER", DEFAULT_SNAPSHOT_AFTER, _positive_float
        ),
        "snapshot_share": _read(env, "ASSOCMEM_SNAPSHOT_SHARE", DEFAULT_SNAPSHOT_SHARE, _share),
        "timezone": _read(env, "ASSOCMEM_TZ", "UTC", _timezone),
        "allowed_hosts": _read(env, "ASSOCMEM_ALLOWED_HOSTS", (), _hosts),
        "max_body": _read(env, "ASSOCMEM_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES, _positive_int),
        "header_timeout": _read(
            env, "ASSOCMEM_HEADER_TIMEOUT", DEFAULT_HEADER_TIMEOUT, _positive_float
        ),
        "body_timeout": _read(env, "ASSOCMEM_BODY_TIMEOUT", DEFAULT_BODY_TIMEOUT, _positive_float),
        "max_connections": _read(
            env, "ASSOCMEM_MAX_CONNECTIONS", DEFAULT_MAX_CONNECTIONS, _positive_int
        ),
        "read_timeout": _read(env, "ASSOCMEM_READ_TIMEOUT", DEFAULT_READ_TIMEOUT, _positive_float),
        "consolidation": _consolidation(env),
        "retention_days": _read(env, "ASSOCMEM_RETENTION_DAYS", DEFAULT_RETENTION_DAYS, _days),
        "key_requests": _read(env, "ASSOCMEM_KEY_REQUESTS", DEFAULT_KEY_REQUESTS, _rate(1)),
        "key_events": _read(env, "ASSOCMEM_KEY_EVENTS", DEFAULT_KEY_EVENTS, _rate(1000)),
        "key_failures": _read(env, "ASSOCMEM_KEY_FAILURES", DEFAULT_KEY_FAILURES, _rate(1)),
        "extraction_helpers": _read(
            env, "ASSOCMEM_EXTRACTION_HELPERS", DEFAULT_EXTRACTION_HELPERS, _whole
        ),
        "min_free_mb": _read(env, "ASSOCMEM_MIN_FREE_MB", DEFAULT_MIN_FREE_MB, _whole),
        "write_replicas": _read(env, "ASSOCMEM_WRITE_REPLICAS", 0, _whole),
        "tenant_state_mb": _read(env, "ASSOCMEM_TENANT_STATE_MB", DEFAULT_TENANT_STATE_MB, _whole),
        "disk_paths": tuple(
            Path(p) for p in env.get("ASSOCMEM_DISK_PATHS", "").split(os.pathsep) if p.strip()
        ),
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**values)


def _consolidation(env: Mapping[str, str]) -> ConsolidationSettings:
    default = ConsolidationSettings()
    return ConsolidationSettings(
        at=_read(env, "ASSOCMEM_CONSOLIDATE_AT", default.at, _schedule),
        window_days=_read(env, "ASSOCMEM_RECENT_DAYS", default.window_days, _days),
        written_half_life_days=_read(
            env, "ASSOCMEM_WRITTEN_HALF_LIFE_DAYS", default.written_half_life_days, _days_or_never
        ),
        taught_half_life_days=_read(
            env, "ASSOCMEM_TAUGHT_HALF_LIFE_DAYS", default.taught_half_life_days, _days_or_never
        ),
        min_cooccurrence=_read(env, "ASSOCMEM_MIN_COOCCURRENCE", default.min_cooccurrence, _whole),
        vocabulary_cap=_read(env, "ASSOCMEM_VOCABULARY_CAP", default.vocabulary_cap, _whole),
        merge_duplicates=_read(
            env, "ASSOCMEM_MERGE_DUPLICATES", default.merge_duplicates, _boolean
        ),
    )


def _schedule(raw: str) -> str:
    from croniter import croniter

    if raw.strip().lower() == CONSOLIDATION_OFF:
        return CONSOLIDATION_OFF
    if ":" in raw:
        hour, _, minute = raw.partition(":")
        if hour.isdigit() and minute.isdigit() and int(hour) < 24 and int(minute) < 60:
            return raw
        raise ValueError("expected a time of day HH:MM (24-hour), e.g. 02:30")
    if not croniter.is_valid(raw) or len(raw.split()) not in (5, 6):
        raise ValueError(
            "expected HH:MM, a cron expression of five fields (a sixth for seconds),"
            " e.g. '30 2 * * *', or 'off'"
        )
    return raw


def _days(raw: str) -> float:
    value = float(raw)
    if not 0 < value <= 36_500:
        raise ValueError("expected a number of days above 0, at most 36500")
    return value


def _days_or_never(raw: str) -> float | None:
    if raw.strip().lower() == "never":
        return None
    try:
        return _days(raw)
    except ValueError as exc:
        raise ValueError(f"{exc}, or never") from exc


def _whole(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError("expected a whole number of 0 or more")
    return value


def _boolean(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _read(env: Mapping[str, str], name: str, default: T, parse: Callable[[str], T]) -> T:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse(raw)
    except ValueError as exc:
        raise SettingError(f"{name}={raw!r} is invalid: {exc}") from exc


def _hosts(raw: str) -> tuple[str, ...]:
    hosts = tuple(h.strip().lower() for h in raw.split(",") if h.strip())
    if not hosts:
        raise ValueError("expected host names separated by commas, or * for any")
    return hosts


def _appendfsync(raw: str) -> str:
    if raw not in ("everysec", "always"):
        raise ValueError("expected 'everysec' or 'always'")
    return raw


def _timezone(raw: str) -> str:
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(raw)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(
            "expected an IANA time zone such as Europe/Paris or Asia/Shanghai"
        ) from exc
    return raw


def _port(raw: str) -> int:
    port = int(raw)
    if not 0 <= port <= 65535:
        raise ValueError("expected a port 0 to 65535")
    return port


def _positive_float(raw: str) -> float:
    value = float(raw)
    if value <= 0:
        raise ValueError("expected a number above 0")
    return value


def _seconds(raw: str) -> float:
    value = float(raw)
    if not 0 <= value < float("inf"):
        raise ValueError("expected a number of seconds, 0 or more")
    return value


def _share(raw: str) -> float:
    value = float(raw)
    if not 0 < value <= 1:
        raise ValueError("expected a share above 0, at most 1 (1: no limit)")
    return value


def _positive_int(raw: str) -> int:
    value = int(raw)
    if value < 1:
        raise ValueError("expected a whole number of 1 or more")
    return value


def _rate(least: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        value = int(raw)
        if value != 0 and value < least:
            raise ValueError(f"expected 0 (no limit) or a whole number of {least} or more")
        return value

    return parse


def with_database(url: str, database: int) -> str:
    """`url` naming database `database` of its Redis."""
    base, _, last = url.rstrip("/").rpartition("/")
    if base.count("/") >= 2 and last.isdigit():
        return f"{base}/{database}"
    return f"{url.rstrip('/')}/{database}"


_UNITS = {"": 1024**2, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def _size(raw: str) -> int:
    """Bytes from `4G`, `500M`, `500MB` or `0`; a bare number is megabytes."""
    text = raw.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1:] if text[-1:] in _UNITS and not text[-1:].isdigit() else ""
    number = float(text[: len(text) - len(unit)])
    if number < 0:
        raise ValueError("expected a size of 0 or more, such as 4G or 500M")
    return int(number * _UNITS[unit])


def _at_least_two(raw: str) -> int:
    value = int(raw)
    if value < 2:
        raise ValueError("expected a whole number of 2 or more (the first and the last are kept)")
    return value
