"""What the commands share about files: opening recorded turns from what a user points at (a
store — an SQLite file or a PostgreSQL URL — opened read-only, or a JSON Lines stream: either way
a `Record`), choosing a turn by a prefix of its id, and checking the stores and files a command
will write before anything is written.

Every failure here is a `click.ClickException` of one line that names the file or the URL (its
password shown as `***`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from fuseforks.core.errors import FuseforksError
from fuseforks.events.codec import Envelope
from fuseforks.stores.filesystem import on_read_only_mount, write_refusal
from fuseforks.stores.open import inspect_store, is_sqlite_file, open_record
from fuseforks.stores.store import Record
from fuseforks.stores.urls import DatabaseUrl, is_database_url

_LISTED = 10
"""Candidates an ambiguous prefix names at most."""


def is_store_file(path: Path) -> bool:
    """Whether `path` holds an SQLite database (else it is read as a JSON Lines stream)."""
    try:
        return is_sqlite_file(path)
    except OSError as error:
        raise click.ClickException(f"{path}: cannot read it ({error.strerror})") from None


Location = Path | DatabaseUrl
"""A store or stream as the command line gives it: a file, or a PostgreSQL database."""


class SourceType(click.ParamType):
    """A PostgreSQL URL (`postgresql://…`, `postgres://…`), or else a file, checked as
    `click.Path(exists=exists, dir_okay=False)` checks it (with its messages)."""

    def __init__(self, *, exists: bool = True, name: str = "source") -> None:
        self.name = name
        self._path = click.Path(exists=exists, dir_okay=False, path_type=Path)

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Location:
        if isinstance(value, DatabaseUrl):
            return value
        if isinstance(value, str) and is_database_url(value):
            return DatabaseUrl(str(value))
        converted = self._path.convert(value, param, ctx)
        assert isinstance(converted, Path)
        return converted


SOURCE = SourceType()
"""The type of a SOURCE argument: a store (file or URL) or a stream, read without writing."""
STORE = SourceType(exists=False, name="store")
"""The type of a store a command writes to: a URL, or a file (created if missing)."""


@contextmanager
def open_source(path: Location) -> Iterator[Record]:
    """A store or stream for reading; anything fuseforks cannot read is a one-line error, and
    what a reader must be told about the record (a stream's cut last line) a warning."""
    try:
        with open_record(path) as record:
            for notice in record.notices():
                warn(notice)
            yield record
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    except OSError as error:
        raise click.ClickException(f"{path}: cannot read it ({error.strerror})") from error


def warn(text: str) -> None:
    """One line on stderr about something a command went on after."""
    click.echo(f"warning: {text}", err=True)


def chosen_turns(record: Record, given: str | None = None) -> dict[str, list[Envelope]]:
    """Every turn of `record` by id, oldest first, or the one turn that `given` (an id or a
    unique prefix) names."""
    ids = [t.turn_id for t in record.turns()] if given is None else [resolve_turn(record, given)]
    return {turn_id: record.read(turn_id) for turn_id in ids}


def resolve_turn(record: Record, given: str) -> str:
    """The turn whose id is `given`, or else the only one whose id begins with it."""
    ids = [t.turn_id for t in record.turns()]
    if given in ids:
        return given
    matches = [turn_id for turn_id in ids if turn_id.startswith(given)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise click.ClickException(
            f"{record.name}: no turn {given!r} (fuseforks turns {record.name} lists them)")
    raise click.ClickException(
        f"{record.name}: turn {given!r} is ambiguous: {len(matches)} turns begin with it: "
        + _listing(matches))


def resolve_digest(record: Record, given: str) -> str | None:
    """The one image digest that begins with `given` (lowercase hex); None when no image of the
    record has such a digest."""
    matches = record.digests(given)
    if len(matches) > 1:
        raise click.ClickException(
            f"{record.name}: digest {given!r} is ambiguous: {len(matches)} images begin with "
            "it: " + _listing(matches))
    return matches[0] if matches else None


def _listing(names: list[str]) -> str:
    shown = ", ".join(names[:_LISTED])
    return shown + (f" and {len(names) - _LISTED} more" if len(names) > _LISTED else "")


def load_turns(source: Location, turn_id: str | None = None) -> dict[str, list[Envelope]]:
    """Turns of `source` by id, in stored order (`turn_id`: one turn, by id or unique prefix)."""
    with open_source(source) as opened:
        return chosen_turns(opened, turn_id)


# --- files a command writes: checked before anything is written ---------------------------------


STREAM_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
"""What a JSON Lines stream's file name ends with: never made an SQLite store by mistake."""


def check_store_target(path: Location) -> None:
    """Fail unless a store can be opened for writing at `path`: an existing file must be a
    fuseforks store (or empty) this user can write, beside which SQLite can keep its write-ahead
    log; a new one needs a writable directory. A database must be reachable and hold a fuseforks
    store or no table at all. A path named like a JSON Lines stream is no store's. Nothing is
    created or changed."""
    if isinstance(path, Path) and path.suffix.lower() in STREAM_SUFFIXES:
        raise click.ClickException(
            f"{path}: named like a JSON Lines stream, not a store (an SQLite file or a "
            "PostgreSQL URL); fuseforks export writes streams")
    try:
        if isinstance(path, DatabaseUrl):
            inspect_store(path)
        elif path.exists():
            if path.is_dir():
                raise click.ClickException(f"{path}: a directory, not a store")
            inspect_store(path)
            if not os.access(path, os.W_OK):
                raise click.ClickException(f"{path}: cannot write the store ({write_refusal(path)})")
            if not os.access(path.parent, os.W_OK | os.X_OK):
                raise click.ClickException(
                    f"{path}: cannot write the store: its directory {path.parent} is not "
                    f"writable ({write_refusal(path.parent)}), and SQLite keeps its write-ahead "
                    "log beside the store")
        else:
            _check_new(path, "store")
    except FuseforksError as error:
        raise click.ClickException(str(error)) from error
    except OSError as error:
        raise click.ClickException(f"{path}: cannot use it ({error.strerror})") from error


def check_file_target(path: Path, what: str) -> None:
    """Fail unless `path` (the `what`, e.g. "log") can be appended to or created; nothing is
    created or changed."""
    try:
        if path.exists():
            if path.is_dir():
                raise click.ClickException(f"{path}: a directory, not a {what} file")
            if not os.access(path, os.W_OK):
                raise click.ClickException(f"{path}: cannot write the {what} ({write_refusal(path)})")
        else:
            _check_new(path, what)
    except OSError as error:
        raise click.ClickException(f"{path}: cannot use it ({error.strerror})") from error


def _check_new(path: Path, what: str) -> None:
    parent = path.parent
    if not parent.exists():
        raise click.ClickException(f"{path}: cannot create the {what}: no directory {parent}")
    if not parent.is_dir():
        raise click.ClickException(
            f"{path}: cannot create the {what}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        where = "is on a read-only file system" if on_read_only_mount(parent) else "is not writable"
        raise click.ClickException(f"{path}: cannot create the {what}: directory {parent} {where}")
