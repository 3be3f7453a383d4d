"""A link's weight over time, written and taught stacked, as a PNG or SVG (matplotlib)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any


def plot_link(audit: dict[str, Any], path: Path) -> None:
    """Draw `audit` (the JSON of /v1/audit/link) into `path`; its suffix picks the format."""
    import matplotlib

    matplotlib.use("Agg")  # no screen: draw into a file
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    times, written, taught, weights = steps(audit["changes"])
    figure, axes = plt.subplots(figsize=(8, 4), layout="constrained")
    axes.stackplot(times, written, taught, labels=["written", "taught"], step="post")
    axes.step(times, weights, where="post", color="black", label="weight")
    axes.set_title(f"{audit['source']} -- {audit['target']}")
    axes.set_ylabel("weight")
    axes.legend(loc="upper left")
    locator = mdates.AutoDateLocator()
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    axes.set_xlabel("UTC")
    figure.savefig(path)
    plt.close(figure)


def steps(
    changes: list[dict[str, Any]],
) -> tuple[list[datetime], list[float], list[float], list[float]]:
    """Times, written counts, taught deltas (none below 0) and weights, one point a change,
    and the last held a twentieth of the span after it: a step drawn from the last point
    has no width, and a consolidation that took a link to 0 did not show."""
    times = [datetime.fromtimestamp(c["ts"], UTC) for c in changes]
    written = [c["count"] for c in changes]
    taught = [max(0.0, c["learned"]) for c in changes]
    weights = [c["weight"] for c in changes]
    if changes:
        span = times[-1] - times[0] if len(times) > 1 else timedelta(minutes=1)
        times.append(times[-1] + max(span / 20, timedelta(seconds=1)))
        for values in (written, taught, weights):
            values.append(values[-1])
    return times, written, taught, weights
