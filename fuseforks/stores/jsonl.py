"""JSON Lines streams: one envelope per line — the portable form of a turn (export, import, replays/).

Reading is strict about position: a line that cannot be decoded is reported with the file and line
number. A last line cut short — a writer interrupted mid-line, the commonest damage a stream takes —
is named as such: a reader that can go on with the whole lines before it (every command that reads
turns) is told in one sentence and reads them, the cut turn ending where its record ends; anywhere
else it is an error. Never silently skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Literal

import msgspec

from fuseforks.core.errors import ConcurrencyError, FuseforksError, StreamFormatError
from fuseforks.events.codec import Envelope, TurnContexts, decode_envelope, encode_envelope
from fuseforks.events.privacy import PixelLeakError
from fuseforks.stores.store import TurnLog


def write_stream(envelopes: Iterable[Envelope], out: IO[bytes]) -> int:
    count = 0
    for envelope in envelopes:
        out.write(encode_envelope(envelope))
        out.write(b"\n")
        count += 1
    return count


OnCut = Callable[[str], None]
"""Hears, in one sentence, that a stream's last line was cut short and left out."""


def cut_last_line(path: Path, number: int, events: int) -> str:
    return (f"{path}:{number}: the last line is cut short (its writer stopped mid-line) and is "
            f"left out; the {events:,} event{'s' if events != 1 else ''} before it are read")


def read_stream(path: str | Path, on_cut: OnCut | None = None) -> list[Envelope]:
    """The stream's envelopes, in order. A last line cut short is an error, unless `on_cut` is
    given: it then hears why the line was left out, and the whole lines are returned."""
    path = Path(path)
    data = path.read_bytes()
    if data.strip() and not data.lstrip().startswith(b"{"):
        raise StreamFormatError(
            f"{path}: not a JSON Lines event stream (its first line is not a JSON object)")
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
            if last and on_cut is not None:
                on_cut(cut_last_line(path, number, len(envelopes)))
                break
            what = "truncated last line" if last else "unreadable line"
            raise StreamFormatError(f"{path}:{number}: {what}: {error}") from error
    return envelopes


ImportOutcome = Literal["imported", "skipped", "refused"]


class TurnImport(msgspec.Struct, frozen=True, kw_only=True):
    """What importing one turn of a stream did. A turn is imported whole or not at all: its new
    events are appended in one transaction, and a turn with any problem writes nothing."""

    turn_id: str
    outcome: ImportOutcome
    added: tuple[int, int] | None = None
    """First and last seq appended (`imported` only)."""
    present: tuple[int, int] | None = None
    """First and last seq of the stream that the store already held, identical."""
    reason: str = ""
    """Why the turn was refused: a gap in the stream, a conflict with the store, another writer."""


def group_turns(envelopes: Iterable[Envelope]) -> dict[str, list[Envelope]]:
    """Envelopes by turn, turns in order of first appearance, each turn's in stream order."""
    by_turn: dict[str, list[Envelope]] = {}
    for envelope in envelopes:
        by_turn.setdefault(envelope.turn_id, []).append(envelope)
    return by_turn


def first_gap(envelopes: Sequence[Envelope], after: int = 0) -> str | None:
    """Where a turn's envelopes fail to continue seq `after` one by one, said in words."""
    previous = after
    for envelope in envelopes:
        if envelope.seq != previous + 1:
            if envelope.seq <= previous:
                return (f"seq {envelope.seq} comes after seq {previous} in the stream "
                        "(out of order or repeated)")
            held = f"seq {previous} is followed by seq {envelope.seq}" if previous else \
                f"the stream starts at seq {envelope.seq}"
            return f"gap in the stream at turn {envelope.turn_id} seq {previous + 1} ({held})"
        previous = envelope.seq
    return None


def import_turn(store: TurnLog, envelopes: Sequence[Envelope]) -> TurnImport:
    """Add one turn's envelopes to `store`: events it already holds identically are skipped, the
    rest appended in one transaction; a gap or a conflicting event refuses the whole turn."""
    turn_id = envelopes[0].turn_id
    first = envelopes[0].seq
    stored = {e.seq: e for e in store.read(turn_id, after=first - 1)}
    last = store.last_seq(turn_id)
    gap = first_gap(envelopes, after=first - 1)
    if first < 1:
        gap = f"turn {turn_id} starts at seq {first} in the stream; a turn's events count from 1"
    elif gap is None and first > last + 1:
        held = f"the store holds seq 1-{last}" if last else "the store has none of this turn"
        gap = (f"gap in the stream at turn {turn_id} seq {last + 1} "
               f"(the stream starts at seq {first}; {held})")
    if gap is not None:
        return TurnImport(turn_id=turn_id, outcome="refused", reason=gap)
    overlap = [e for e in envelopes if e.seq <= last]
    for envelope in overlap:
        conflict = _conflict(stored.get(envelope.seq), envelope)
        if conflict is not None:
            return TurnImport(turn_id=turn_id, outcome="refused", reason=conflict)
    present = (overlap[0].seq, overlap[-1].seq) if overlap else None
    new = [e for e in envelopes if e.seq > last]
    if not new:
        return TurnImport(turn_id=turn_id, outcome="skipped", present=present)
    try:
        store.append(new)
    except (ConcurrencyError, PixelLeakError) as error:
        return TurnImport(turn_id=turn_id, outcome="refused", reason=str(error))
    return TurnImport(turn_id=turn_id, outcome="imported", added=(new[0].seq, new[-1].seq),
                      present=present)


def _conflict(stored: Envelope | None, incoming: Envelope) -> str | None:
    """None when both are the same event at the same time; otherwise both versions, briefly."""
    if stored is None:
        return f"conflict at seq {incoming.seq}: the store has no such event"
    if stored.at == incoming.at and stored.event == incoming.event:
        return None
    head = (f"conflict at seq {incoming.seq}: the store has {stored.kind}, "
            f"the stream has {incoming.kind}")
    if stored.kind != incoming.kind:
        return head
    mine = {"at": stored.at, **msgspec.to_builtins(stored.event)}
    theirs = {"at": incoming.at, **msgspec.to_builtins(incoming.event)}
    fields = [k for k in (*mine, *(k for k in theirs if k not in mine))
              if mine.get(k) != theirs.get(k)]
    shown = "; ".join(f"{k}: store {_brief(mine.get(k))}, stream {_brief(theirs.get(k))}"
                      for k in fields[:3])
    more = f"; and {len(fields) - 3} more" if len(fields) > 3 else ""
    return f"{head}; {shown}{more}"


def _brief(value: object, width: int = 40) -> str:
    text = msgspec.json.encode(value).decode() if value is not None else "(absent)"
    return text if len(text) <= width else text[: width - 1] + "…"


def import_turns(store: TurnLog, envelopes: Iterable[Envelope]) -> Iterator[TurnImport]:
    """Import turn by turn, in the order the stream first names them, yielding each outcome as
    soon as it is settled: a refused turn does not stop the others."""
    for turn in group_turns(envelopes).values():
        yield import_turn(store, turn)
