"""Every Redis key name assocmem uses. Tenant keys carry the hash tag {tenant}."""

from __future__ import annotations

import re
import zlib

PREFIX = "am"
FOLD_QUEUE = "assocmem-fold"
MAINTENANCE_QUEUE = "assocmem-maintenance"
REPLAY_QUEUE = "assocmem-replay"
QUEUES = (FOLD_QUEUE, MAINTENANCE_QUEUE, REPLAY_QUEUE)
"""Standard RQ queues (rq-dashboard and `rq info` see them), worked in this order."""
RATES_PREFIX = f"{PREFIX}:rate"
"""The prefix of the per-key rate counters (`limits` names the rest)."""
TENANT_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
TENANT_WORDS = "1 to 64 letters, digits, '_' or '-'"
_TENANT = re.compile(TENANT_PATTERN)


def check_tenant(tenant: str) -> str:
    if not _TENANT.match(tenant):
        raise ValueError(f"tenant {tenant!r} is malformed: expected {TENANT_WORDS}")
    return tenant


def log_key(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:log"


def dead_letter_key(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:dead"


def idempotency_key(tenant: str, key: str) -> str:
    """Where an idempotency key was kept before buckets (workers/store/redis/append.lua still reads it)."""
    return f"{PREFIX}:{{{tenant}}}:idem:{key}"


def seen_key(tenant: str, key: str, generation: int) -> str:
    """The bucket workers/store/redis/append.lua keeps an idempotency key in during
    `generation` (Redis's time divided by the TTL): a hash per generation, one of 65,536 by
    a checksum of the key: few enough that a million keys are not a million Redis keys,
    enough that each bucket stays a compact listpack (Redis's default: up to 128 fields)
    up to millions of keys a week."""
    return f"{seen_keys_prefix(tenant)}{zlib.crc32(key.encode()) & 0xFFFF:04x}:{generation}"


def seen_keys_prefix(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:seen:"


def seen_keys_state_key(tenant: str) -> str:
    """Since when (Unix seconds) the tenant's idempotency keys are kept in buckets."""
    return f"{PREFIX}:{{{tenant}}}:seen_state"


def acked_key(tenant: str) -> str:
    """Counts the appends acknowledged after WAIT: each one's own write to the tenant's slot."""
    return f"{PREFIX}:{{{tenant}}}:acked"


def fold_wanted_key(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:fold_wanted"


def fold_due_key(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:fold_due"


def snapshot_key(tenant: str, position: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:snap:{position}"


def latest_snapshot_key(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:snap_latest"


def snapshot_ladder_key(tenant: str) -> str:
    """A list of published snapshot positions, oldest first."""
    return f"{PREFIX}:{{{tenant}}}:snap_ladder"


def archive_manifest_key(tenant: str) -> str:
    """A list of archive segment records, oldest first (workers/store/archive.py)."""
    return f"{PREFIX}:{{{tenant}}}:archive"


def archive_meta_key(tenant: str) -> str:
    """A hash: `upto`, the last archived position, and `count`, the entries archived."""
    return f"{PREFIX}:{{{tenant}}}:archive_meta"


def archive_segment_key(tenant: str, first: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:segment:{first}"


def snapshot_bases_key(tenant: str) -> str:
    """A hash: delta snapshot position -> the position of its base."""
    return f"{PREFIX}:{{{tenant}}}:snap_bases"


def snapshot_digests_key(tenant: str) -> str:
    """A hash: full snapshot position -> the SHA-256 of its bytes, which a local copy of it
    is checked against (workers/state/snapshot_cache.py)."""
    return f"{PREFIX}:{{{tenant}}}:snap_digests"


def snapshot_folded_key(tenant: str) -> str:
    """A hash: snapshot position -> the log entries folded into it (the ladder's strides)."""
    return f"{PREFIX}:{{{tenant}}}:snap_folded"


def tenants_key() -> str:
    return f"{PREFIX}:tenants"


def cron_lease_key() -> str:
    """Held by the one cron that fires (workers/jobs/cron.py)."""
    return f"{PREFIX}:cron:lease"


def cron_last_key() -> str:
    """Unix time of the last scheduled night the cron fired."""
    return f"{PREFIX}:cron:last"


def fold_job_id(tenant: str) -> str:
    return f"fold-{tenant}"


def api_key_key(digest: str) -> str:
    """One API key's record, under the SHA-256 of its secret (the secret is never stored)."""
    return f"{PREFIX}:apikey:{digest}"


def api_key_ids_key() -> str:
    """A hash: API key id -> the digest its record is stored under (listing, revoking)."""
    return f"{PREFIX}:apikeys"


def epoch_key(tenant: str) -> str:
    """Raised by each rewrite of the tenant's history (an erasure)."""
    return f"{PREFIX}:{{{tenant}}}:epoch"


def rewrite_key(tenant: str) -> str:
    """The log being rewritten without an erased subject's entries, renamed over the log."""
    return f"{PREFIX}:{{{tenant}}}:log_rewrite"


def rewriting_key(tenant: str) -> str:
    """Set while an erasure rewrites the tenant's history: archive runs wait for it."""
    return f"{PREFIX}:{{{tenant}}}:rewriting"


def tenant_pattern(tenant: str) -> str:
    """Every key of the tenant, for SCAN (a tenant name has no glob characters)."""
    return f"{PREFIX}:{{{tenant}}}:*"


def idempotency_pattern(tenant: str) -> str:
    return f"{PREFIX}:{{{tenant}}}:idem:*"


def seen_keys_pattern(tenant: str) -> str:
    return f"{seen_keys_prefix(tenant)}*"
