"""A link's weight over time, written and taught stacked, as a PNG or SVG (matplotlib)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def plot_link(audit: dict[str, Any], path: Path) -> None:
    """Draw `audit` (the JSON of /v1/audit/link) into `path`; its suffix picks the format."""
    import matplotlib

    matplotlib.use("Agg")  # no screen: draw into a file
    import matplotlib.pyplot as plt

    changes = audit["changes"]
    times = [datetime.fromtimestamp(c["ts"], UTC) for c in changes]
    written = [c["count"] for c in changes]
    taught = [max(0.0, c["learned"]) for c in changes]
    figure, axes = plt.subplots(figsize=(8, 4), layout="constrained")
    axes.stackplot(times, written, taught, labels=["written", "taught"], step="post")
    axes.step(times, [c["weight"] for c in changes], where="post", color="black", label="weight")
    axes.set_title(f"{audit['source']} -- {audit['target']}")
    axes.set_ylabel("weight")
    axes.legend(loc="upper left")
    figure.autofmt_xdate()
    figure.savefig(path)
    plt.close(figure)
