"""Where the logins to remote MCP servers are kept: like keys, in the user's configuration folder.

One file per server URL (the OAuth resource its tokens are for), in `$FUSEFORKS_TOKENS`, else
`$XDG_CONFIG_HOME/fuseforks/tokens`, else `~/.config/fuseforks/tokens`: the folder made with
mode 0700, each file written whole under a temporary name and renamed over the old one (a
reader never sees half a file), with mode 0600. A file holds the client fuseforks registered as
(or was given), the tokens, when the access token expires (the SDK's token does not say: it
holds only the lifetime it was issued with), what discovery found (the authorization server's
endpoints, which a worker refreshing in a fresh process needs), and a scope a server asked for
in a step-up, which the next login asks for.

Nothing else of fuseforks writes these values: the record, the log, the traces and every error
message hold a marker instead (`fuseforks.events.secrets`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import msgspec

logger = logging.getLogger("fuseforks.mcp")

TOKENS_VARIABLE = "FUSEFORKS_TOKENS"
_UNSAFE = re.compile(r"[^A-Za-z0-9.-]+")


class StoredLogin(msgspec.Struct, kw_only=True):
    """A login to one server URL. The SDK's own models travel as their JSON (`client`,
    `tokens`, `authorization_server`, `protected_resource`)."""

    resource: str
    server: str = ""  # the name the server had where it was logged in to (for a person reading)
    client: dict[str, Any] | None = None
    tokens: dict[str, Any] | None = None
    expires_at: float | None = None  # seconds since the epoch; None: the server gave no lifetime
    authorization_server: dict[str, Any] | None = None
    protected_resource: dict[str, Any] | None = None
    wanted_scope: str | None = None


def token_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of the logins: `$FUSEFORKS_TOKENS`, else under the XDG configuration home."""
    env = os.environ if environ is None else environ
    if env.get(TOKENS_VARIABLE):
        return Path(env[TOKENS_VARIABLE])
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else Path.home() / ".config"
    return base / "fuseforks" / "tokens"


class TokenFiles:
    """The logins of one folder, one file per server URL."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = token_folder() if folder is None else folder

    def path(self, resource: str) -> Path:
        """`host_port-<digest>.json`: readable by a person, one per URL."""
        parts = urlsplit(resource)
        label = _UNSAFE.sub("_", parts.netloc or "server").strip("_") or "server"
        digest = hashlib.sha256(resource.encode()).hexdigest()[:16]
        return self.folder / f"{label}-{digest}.json"

    def read(self, resource: str) -> StoredLogin | None:
        """The login kept for `resource`, or None (none kept, or a file that cannot be read,
        which a new login replaces)."""
        try:
            data = self.path(resource).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as error:
            logger.warning("mcp login file unreadable: %s (%s)", self.path(resource),
                           error.strerror)
            return None
        try:
            login = msgspec.json.decode(data, type=StoredLogin)
        except msgspec.DecodeError:
            logger.warning("mcp login file damaged, ignored: %s", self.path(resource))
            return None
        return login if login.resource == resource else None

    def version(self, resource: str) -> tuple[int, int] | None:
        """What changes when the file is written again (another process refreshed, a person
        logged in again), or None when there is none."""
        try:
            status = self.path(resource).stat()
        except OSError:
            return None
        return status.st_mtime_ns, status.st_ino

    def write(self, login: StoredLogin) -> None:
        """Write the login whole: a temporary file of mode 0600 in the folder, renamed over."""
        folder = self.folder
        if not folder.exists():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            folder.chmod(0o700)  # whatever the umask made of it
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=".login-", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "wb") as file:
                os.fchmod(file.fileno(), 0o600)
                file.write(msgspec.json.encode(login))
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path(login.resource))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def delete(self, resource: str) -> bool:
        """Forget the login; False when there was none."""
        try:
            self.path(resource).unlink()
        except FileNotFoundError:
            return False
        return True
