"""Errors raised by the workers.

StoreError                  root: something went wrong talking to Redis or its data
 +-- StoreUnavailable       Redis cannot be reached
 |    +-- DiskLow            too little room left on the disk the stores write to
 +-- RedisLaunchError       the embedded redis-server could not be started
 +-- SettingError           a setting has a bad value
ApplicationError            root: a command or query cannot be carried out as asked
 +-- InvalidRequest         a value of the request is wrong
 +-- UnknownMemory          ids that name no memory of the tenant
 +-- UnknownConcept         a concept no event of the tenant ever named
 +-- UnknownJob             a job id no queue of the pipeline holds
 +-- PositionAhead          a read asked to wait for a position the log does not hold
 +-- KeyConflict            an idempotency key sent again with another body
 +-- NotAllowed             the caller's key lacks the permission the command needs
 +-- RateLimited            the caller's key is over its request or event rate
"""

from __future__ import annotations


class StoreError(Exception):
    """Something went wrong talking to Redis or with what it holds."""


class StoreUnavailable(StoreError):
    """Redis cannot be reached."""


class DiskLow(StoreUnavailable):
    """Free space on a disk the pipeline writes to is below ASSOCMEM_MIN_FREE_MB: writes wait
    for room (a 507), reads go on. The message names the directory and the bytes left."""

    retry_after = 30


class RedisLaunchError(StoreError):
    """The embedded redis-server could not be started."""


class SettingError(StoreError):
    """A setting has a bad value; the message names the key and the value."""


class ApplicationError(Exception):
    """A command or query cannot be carried out as asked (the HTTP app maps each to a status)."""


class InvalidRequest(ApplicationError):
    """A value of the request is wrong; the message names the field, the value and what was expected."""


class UnknownMemory(ApplicationError):
    """Ids that name no memory of the tenant."""


class UnknownConcept(ApplicationError):
    """A concept no event of the tenant ever named (a link audit's, most often mistyped)."""


class UnknownJob(ApplicationError):
    """A job id that no queue of the pipeline holds (finished jobs are kept a while)."""


class PositionAhead(ApplicationError):
    """A read's `after` is past the end of the log: not a position this log handed out."""


class KeyConflict(ApplicationError):
    """An idempotency key sent again with another body."""


class Superseded(ApplicationError):
    """A change of a memory a newer version has replaced: the newest is the one to change."""


class LastOperatorKey(ApplicationError):
    """The revocation of the last operator key, which would leave nobody to manage keys."""


class NotAllowed(ApplicationError):
    """The caller's credential does not carry the permission the command needs."""


class RateLimited(ApplicationError):
    """The caller's key is over its request or event rate; `retry_after` is in seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after
