"""Prometheus metrics of one API process, at /metrics (an operator key: the labels name every
tenant). Counted here: requests refused by reason, read latency by depth. Read from the
application when scraped: events appended by type, and from the stores: each tenant's log,
fold lag (events and seconds), snapshot age and size, dead letters, and failed jobs; and
free space on the disks written to."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from assocmem.workers.app.pipeline_stats import LAG_COUNT_CAP, failed_jobs, tenant_stats

READ_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)


class Metrics:
    def __init__(self, application: Any) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.refused = Counter(
            "assocmem_refused_requests",
            "Requests answered with a 4xx or 5xx problem, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.read_seconds = Histogram(
            "assocmem_read_seconds",
            "Reads and chains answered, by depth (chain for a chain).",
            ["depth"],
            buckets=READ_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_PipelineCollector(application))

    def render(self) -> bytes:
        return generate_latest(self.registry)


GAUGES = {
    "log_events": "Entries in the tenant's log, archived ones included.",
    "fold_lag_events": f"Entries no snapshot holds yet (counted up to {LAG_COUNT_CAP}).",
    "fold_lag_seconds": "How long the oldest entry no snapshot holds has waited.",
    "snapshot_age_seconds": "Since the newest entry of the latest snapshot was appended.",
    "snapshot_bytes": "Size of the latest snapshot (a delta is smaller than its base).",
    "dead_letters": "Entries the fold rejected.",
}
"""Per tenant, read from the stores when scraped."""


class _PipelineCollector(Collector):
    def __init__(self, application: Any) -> None:
        self.application = application

    def describe(self) -> Iterator[Any]:
        """What `collect` yields, without its values: the registry asks this when the API
        starts, which must not need Redis (an API started before its Redis serves 503s)."""
        yield from _families().values()

    def collect(self) -> Iterator[Any]:
        families = _families()
        for event_type, count in sorted(self.application.appended.items()):
            families["appended"].add_metric([event_type], count)
        runtime = self.application.runtime
        for stats in tenant_stats(runtime):
            values = {
                "log_events": stats.log_events,
                "fold_lag_events": stats.lag_events,
                "fold_lag_seconds": stats.lag_seconds,
                "snapshot_age_seconds": stats.snapshot_age_seconds,
                "snapshot_bytes": stats.snapshot_bytes,
                "dead_letters": stats.dead_letters,
            }
            for name, value in values.items():
                if value is not None:
                    families[name].add_metric([stats.tenant], value)
        for queue, count in sorted(failed_jobs(runtime).items()):
            families["failed_jobs"].add_metric([queue], count)
        families["live_tenants"].add_metric([], self.application.live_tenants())
        families["tenants_let_go"].add_metric([], self.application.evicted)
        for room in runtime.disk.rooms():
            families["disk_free"].add_metric([str(room.path)], room.free)
        families["writes_refused"].add_metric([], int(runtime.disk.shortage() is not None))
        yield from families.values()


def _families() -> dict[str, Any]:
    families: dict[str, Any] = {
        "appended": CounterMetricFamily(
            "assocmem_appended_events",
            "Events this API process appended, by type (duplicates not counted).",
            labels=["type"],
        )
    }
    for name, text in GAUGES.items():
        families[name] = GaugeMetricFamily(f"assocmem_{name}", text, labels=["tenant"])
    families["failed_jobs"] = GaugeMetricFamily(
        "assocmem_failed_jobs", "Jobs failed for good, by queue.", labels=["queue"]
    )
    families["live_tenants"] = GaugeMetricFamily(
        "assocmem_live_tenants", "Tenants whose live state this API process holds."
    )
    families["tenants_let_go"] = CounterMetricFamily(
        "assocmem_tenant_states_let_go",
        "Tenant states let go for ASSOCMEM_TENANT_STATE_MB, least recently used first.",
    )
    families["disk_free"] = GaugeMetricFamily(
        "assocmem_disk_free_bytes",
        "Free bytes on the disk of each directory the pipeline writes to.",
        labels=["path"],
    )
    families["writes_refused"] = GaugeMetricFamily(
        "assocmem_disk_writes_refused",
        "1 while a disk is below ASSOCMEM_MIN_FREE_MB and appends get a 507, else 0.",
    )
    return families
