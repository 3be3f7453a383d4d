"""Errors raised by the workers.

StoreError                  root: something went wrong talking to Redis or its data
 +-- StoreUnavailable       Redis cannot be reached
 +-- RedisLaunchError       the embedded redis-server could not be started
 +-- SettingError           a setting has a bad value
"""

from __future__ import annotations


class StoreError(Exception):
    """Something went wrong talking to Redis or with what it holds."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached."""


class RedisLaunchError(StoreError):
    """The embedded redis-server could not be started."""


class SettingError(StoreError):
    """A setting has a bad value; the message names the key and the value."""
