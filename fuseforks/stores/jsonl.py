"""JSON Lines streams: one envelope per line — the portable form of a turn (export, import, replays/).

Reading is strict about position: a line that cannot be decoded is reported with the file and line
number, and a truncated last line (a writer interrupted mid-line) is named as such rather than being
silently skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import IO

import msgspec

from fuseforks.core.errors import FuseforksError, StreamFormatError
from fuseforks.events.codec import Envelope, TurnContexts, decode_envelope, encode_envelope
from fuseforks.stores.store import EventStore


def write_stream(envelopes: Iterable[Envelope], out: IO[bytes]) -> int:
    count = 0
    for envelope in envelopes:
        out.write(encode_envelope(envelope))
        out.write(b"\n")
        count += 1
    return count


def read_stream(path: str | Path) -> list[Envelope]:
    path = Path(path)
    data = path.read_bytes()
    lines = data.split(b"\n")
    complete = data.endswith(b"\n")
    envelopes: list[Envelope] = []
    contexts = TurnContexts()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            envelopes.append(decode_envelope(line, contexts))
        except (msgspec.DecodeError, msgspec.ValidationError, FuseforksError) as error:
            last = number == len(lines) and not complete
            what = "truncated last line" if last else "unreadable line"
            raise StreamFormatError(f"{path}:{number}: {what}: {error}") from error
    return envelopes


def export_turn(store: EventStore, turn_id: str, path: str | Path) -> int:
    envelopes = store.read(turn_id)
    if not envelopes:
        raise FuseforksError(f"no turn {turn_id!r} in the store")
    with open(path, "wb") as out:
        return write_stream(envelopes, out)


def import_stream(store: EventStore, path: str | Path) -> dict[str, int]:
    """Append every turn of a stream to `store`; returns events imported per turn."""
    by_turn: dict[str, list[Envelope]] = {}
    for envelope in read_stream(path):
        by_turn.setdefault(envelope.turn_id, []).append(envelope)
    for envelopes in by_turn.values():
        store.append(envelopes)
    return {turn_id: len(envelopes) for turn_id, envelopes in by_turn.items()}
