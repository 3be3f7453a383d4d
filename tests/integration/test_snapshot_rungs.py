"""Snapshots kept on disk for as-of reads (workers/store/snapshot_rungs.py) over a real Redis: a
process connected with the same directory rebuilds from them, and what it rebuilds is
the state a fold from zero gives."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from assocmem.engine.snapshot.codec import content_hash
from assocmem.workers.jobs.fold_job import fold_and_publish
from assocmem.workers.runtime.services import Runtime
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.rebuild import Rebuild, rebuild, starting_state
from tests.stores import write


def test_a_process_with_the_same_directory_rebuilds_from_the_kept_snapshots(
    settings: Settings, tmp_path: Path
) -> None:
    kept = dataclasses.replace(
        settings,
        snapshot_rungs=tmp_path / "rungs",
        rung_events=20,
        snapshots_kept=1,
        snapshots_hourly=0,
        snapshots_daily=0,
    )
    worker = Runtime.connect(kept)
    try:
        written = []
        for batch in range(12):
            notes = [[f"topic{batch}", f"word{n % 4}", f"pair{(batch + n) % 7}"] for n in range(6)]
            written += write(worker, *notes)
            assert fold_and_publish(worker, "default", force=True)["published"]
    finally:
        worker.close()
    api = Runtime.connect(kept)
    try:
        starts = api.snapshots.starts("default")
        retained = api.snapshots.positions("default")
        upto = written[40]  # Redis keeps nothing this old
        assert retained[0] > upto
        assert starting_state(api.snapshots, "default", upto).position == max(
            p for p in starts if p <= upto
        )
        state = rebuild(api.log, api.snapshots, "default", Rebuild(upto))
        zero = rebuild(api.log, api.snapshots, "default", Rebuild(upto, from_zero=True))
        assert content_hash(state) == content_hash(zero)
    finally:
        api.close()
    alone = Runtime.connect(dataclasses.replace(kept, snapshot_rungs=None))
    try:  # without the directory: from zero, as before
        assert alone.snapshots.starts("default") == retained
    finally:
        alone.close()
