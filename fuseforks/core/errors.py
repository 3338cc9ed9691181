"""The project's own exceptions: every failure a user can meet has a name and a clear message."""

from __future__ import annotations


class FuseforksError(Exception):
    """Base of every error fuseforks raises on purpose."""


class StoreError(FuseforksError):
    """The event store could not do what was asked; the message names the file."""


class CorruptStoreError(StoreError):
    """The file is not a readable fuseforks store (not SQLite, damaged, or someone else's)."""


class NewerSchemaError(StoreError):
    """The store or stream was written by a newer fuseforks; nothing was changed."""


class ConcurrencyError(StoreError):
    """An append did not continue the turn's sequence (another writer got there first)."""


class StreamFormatError(FuseforksError):
    """A JSON Lines event stream has a line that cannot be read; the message names file and line."""


class RecordingFailed(FuseforksError):
    """The record could not be written (disk full, database locked, file made read-only): the
    turn stopped before its next side effect, and nothing claims it succeeded."""
