"""The API's default tenant's state, loaded in a thread while the API imports the rest of
itself.

At start-up the API imports its web framework and routes, then loads the latest
snapshot. Much of a load runs outside the interpreter's lock (Redis's answer, zstd,
numpy), so a load started before those imports overlaps them, and the two take about
two thirds of their time one after the other. The live state takes the
result at its first load (`LiveState`'s `preloaded`); a preload that failed leaves that
load to be made as usual. With ASSOCMEM_SNAPSHOT_CACHE set (`up` sets it), it decodes
the local copy of the snapshot before Redis has even loaded its data (snapshot_cache.py).
"""

from __future__ import annotations

import logging
import threading

from assocmem.workers.runtime.redis_server import wait_while_loading
from assocmem.workers.runtime.settings import Settings
from assocmem.workers.state.live import Loaded, latest_loaded
from assocmem.workers.state.snapshot_cache import SnapshotCache
from assocmem.workers.store.redis.connect import data_client
from assocmem.workers.store.redis.stores import RedisEventLog, RedisSnapshotStore

log = logging.getLogger(__name__)


class StatePreload:
    def __init__(self, settings: Settings) -> None:
        assert settings.redis_url, "a preload reads Redis"
        self.tenant = settings.tenant
        self._settings = settings
        self._loaded: Loaded | None = None
        self._thread = threading.Thread(target=self._load, name="state-preload", daemon=True)
        self._thread.start()

    def take(self) -> Loaded | None:
        """What was loaded (waiting for it), once; None if the load failed."""
        self._thread.join()
        loaded, self._loaded = self._loaded, None
        return loaded

    def _load(self) -> None:
        url = self._settings.redis_url
        directory = self._settings.snapshot_cache
        cache = SnapshotCache(directory, self.tenant) if directory else None
        try:
            early = cache.decoded() if cache else None  # snapshot_cache.py
            wait_while_loading(url)  # `up` starts the API while Redis loads its data
            with data_client(url) as client:
                store = RedisSnapshotStore(client, self._settings.ladder())
                log_ = RedisEventLog(client)
                self._loaded = latest_loaded(log_, store, self.tenant, cache, early)
        except Exception as exc:  # the first load is made as before, and says what fails then
            log.warning("preloading the state of %s failed: %s", self.tenant, exc)
