"""Every exception fuseforks raises for a user or a program to catch, in one tree.

Each derives from `FuseforksError` and is importable from `fuseforks`:

    FuseforksError
    ├── StoreError                 the event store could not do what was asked
    │   ├── CorruptStoreError      not a readable fuseforks store
    │   ├── NewerSchemaError       written by a newer fuseforks
    │   └── ConcurrencyError       an append did not continue the turn's sequence
    ├── StreamFormatError          a JSON Lines stream has a line that cannot be read
    ├── RecordingFailed            the record could not be written; the turn stopped
    ├── PixelLeakError             an event would have carried image data
    ├── UnknownName                a wire or village language fuseforks does not know
    ├── ConfigError                an MCP server configuration cannot be used
    ├── McpUnavailable             no MCP server could answer for a resource or a prompt
    ├── MissingKey                 no API key for a wire that needs one
    ├── BusError                   the message bus could not be reached or refused
    │   └── LeaseLost              another relay took over the relay's lease
    ├── HandedBack                 a turn stopped without an end, for another process
    ├── PrefixDiverged             a record today's engine does not re-drive alike
    ├── NothingToTakeOver          no unended record to take over
    ├── ClusterError               a local server of `fuseforks cluster` could not start
    ├── SessionClosed              a gateway call ended after its client's session
    └── WireError                  a model call failed (fields safe to log)
        ├── WireRejected           a 4xx the provider would refuse again
        ├── WireRetryable          429, 5xx or a transport failure
        ├── WireUnavailable        retries exhausted
        └── WireGarbage            a 2xx whose body is not the wire's shape

The engine's decisions (resend without images, give up, report) depend only on the `WireError`
classes and their fields: the wires raise them from each provider's error body, replay raises
them from the record. `UnknownName` and `ConfigError` are also `ValueError`s, as bad arguments
are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # names.py raises `UnknownName`: only its types are needed here
    from fuseforks.core.names import RefusalKind, WireName


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


class PixelLeakError(FuseforksError):
    """An event would have carried image data or base64 into the store or the log."""


class UnknownName(FuseforksError, ValueError):
    """A wire or village language fuseforks does not know; the message lists the known ones."""


class ConfigError(FuseforksError, ValueError):
    """The configuration cannot be used; the message names the server and the field."""


class McpUnavailable(FuseforksError):
    """No MCP server could answer a request for a resource or a prompt (none offers it, or the
    one that does is down); the message says why, in one line."""


class MissingKey(FuseforksError):
    """No API key for a provider that needs one; the message names the variables to set."""


class BusError(FuseforksError):
    """The message bus could not be reached or refused an operation."""


class LeaseLost(ConcurrencyError):
    """A lease this process held — a turn's, the relay's — was taken over after it ran out: the
    writes it makes under its old epoch are refused (a turn's appends, the relay's position),
    and it does nothing more under it (`fuseforks.stores.leases`)."""


class HandedBack(FuseforksError):
    """The turn was stopped without an end, for another process to take over."""


class PrefixDiverged(FuseforksError):
    """Today's engine does not re-drive a recorded prefix to the same events: the turn cannot be
    taken over (its record was made by an engine that decided differently)."""


class NothingToTakeOver(FuseforksError):
    """The record is empty, does not start with `TurnStarted`, has a gap, or has already ended."""


class ClusterError(FuseforksError):
    """A local server of `fuseforks cluster` or of the demo (PostgreSQL, NATS, a worker, the
    provider simulator) could not be set up or started; the message says what to do."""


class SessionClosed(FuseforksError):
    """A gateway tool call finished after its client's session had ended: its result goes to
    nobody, and is not recorded."""


class WireError(FuseforksError):
    """A model call failed. Base of every provider-call failure; fields are safe to log (no keys,
    no image data)."""

    def __init__(
        self,
        *,
        wire: WireName,
        status: int | None,
        error_class: str,
        error_type: str = "",
        code: str = "",
        message: str = "",
    ) -> None:
        self.wire = wire
        self.status = status
        self.error_class = error_class
        self.error_type = error_type
        self.code = code
        self.message = message
        super().__init__(self._describe())

    def _describe(self) -> str:
        parts = [f"backend={self.wire}", f"status={self.status if self.status is not None else '-'}"]
        parts.append(f"class={self.error_class}")
        if self.error_type:
            parts.append(f"type={self.error_type}")
        if self.code:
            parts.append(f"code={self.code}")
        text = f"{type(self).__name__}: " + " ".join(parts)
        return f"{text}: {self.message}" if self.message else text


class WireRejected(WireError):
    """A 4xx the provider will refuse again if resent unchanged: never retried at the HTTP layer.

    `refusal` says what the refusal is about (`RefusalKind`): `image` — the images themselves
    could not be processed; `placement` — images are not accepted where they were put (inside a
    tool result); `parameter` — a parameter, the model or the request's shape; `other` — anything
    else, a refusal that names nothing among them included. The wires read it off the provider's
    error body (`fuseforks/wires/errors.py`); the openai-compat JPEG fallback sets `image` on an
    unexplained second 400.

    `images_rejected` (read-only) is true for `image` and `placement`. The constructor still
    takes `images_rejected=True`, meaning `refusal="image"`, as records written before the refusal
    kinds existed are replayed that way.
    """

    def __init__(self, *, refusal: RefusalKind = "other", images_rejected: bool = False,
                 **fields: Any) -> None:
        if images_rejected and refusal == "other":
            refusal = "image"
        elif images_rejected and refusal not in _ABOUT_IMAGES:
            raise ValueError(f"images_rejected=True contradicts refusal={refusal!r}")
        self.refusal: RefusalKind = refusal
        self.attempts = 1  # requests sent before the refusal (set by the client)
        super().__init__(**fields)

    @property
    def images_rejected(self) -> bool:
        """The refusal is about the tool images: what they are, or where they sit."""
        return self.refusal in _ABOUT_IMAGES


_ABOUT_IMAGES: frozenset[RefusalKind] = frozenset({"image", "placement"})


class WireRetryable(WireError):
    """429, 5xx or a transport failure: worth another attempt after a delay."""

    def __init__(self, *, retry_after: float | None = None, **fields: Any) -> None:
        self.retry_after = retry_after
        super().__init__(**fields)


class WireUnavailable(WireError):
    """Retries exhausted; `attempts` says how many requests were sent."""

    def __init__(self, *, attempts: int, **fields: Any) -> None:
        self.attempts = attempts
        super().__init__(**fields)

    def _describe(self) -> str:
        return f"{super()._describe()} (gave up after {self.attempts} attempts)"


class WireGarbage(WireError):
    """A 2xx whose body is not the response shape the wire expects."""
