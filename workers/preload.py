"""The API's default tenant's state, loaded in a thread while the API imports the rest of
itself.

At start-up the API imports its web framework and routes (half a second and more here),
then loads the latest snapshot (about a second at 50,000 memories). Much of a load runs
outside the interpreter's lock (Redis's answer, zstd, numpy), so a load started before
those imports overlaps them: importing the API and loading 50,000 memories took
1.25-1.46 s so, against 1.89-2.12 s one after the other. The live state takes the
result at its first load (`LiveState`'s `preloaded`); a preload that failed leaves that
load to be made as usual.
"""

from __future__ import annotations

import logging
import threading

import redis

from .live_state import Loaded, latest_loaded
from .redis_server import wait_while_loading
from .redis_stores import RedisEventLog, RedisSnapshotStore
from .settings import Settings

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
        try:
            wait_while_loading(url)  # `up` starts the API while Redis loads its data
            with redis.Redis.from_url(url) as client:
                store = RedisSnapshotStore(client, self._settings.ladder())
                self._loaded = latest_loaded(RedisEventLog(client), store, self.tenant)
        except Exception as exc:  # the first load is made as before, and says what fails then
            log.warning("preloading the state of %s failed: %s", self.tenant, exc)
