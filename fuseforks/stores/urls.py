"""A PostgreSQL store's URL as fuseforks takes it from a user: whether a target is one, and how
it is shown — its password never appears in a message (`DatabaseUrl` prints itself redacted).
Every command and process that accepts `--db` reads this; only `fuseforks.stores` opens it."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

SCHEMES = ("postgresql://", "postgres://")


def is_database_url(text: str) -> bool:
    """Whether `text` names a PostgreSQL database rather than a file."""
    return text.lower().startswith(SCHEMES)


def redact_url(url: str) -> str:
    """`url` with its password, from the user part or a `password=` parameter, shown as `***`;
    the rest exactly as written."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    end = min([i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0],
              default=len(rest))
    netloc, tail = rest[:end], rest[end:]
    if "@" in netloc:
        login, _, hosts = netloc.rpartition("@")
        user, colon, _password = login.partition(":")
        netloc = f"{user}:***@{hosts}" if colon else f"{user}@{hosts}"
    path, question, query = tail.partition("?")
    query = re.sub(r"(?i)(^|&)(password)=[^&#]*", r"\1\2=***", query)
    return f"{scheme}://{netloc}{path}{question}{query}"


def url_password(url: str) -> str:
    """The password `url` carries, if any (to scrub it from a driver's message, should one ever
    quote it)."""
    parts = urlsplit(url)
    found = re.search(r"(?i)(?:^|&)password=([^&]*)", parts.query)
    if found:
        return unquote(found.group(1))
    return unquote(parts.password or "")


class DatabaseUrl:
    """A PostgreSQL URL given on the command line: `str()` of it is redacted, `.url` is whole."""

    def __init__(self, url: str) -> None:
        self.url = url

    def __str__(self) -> str:
        return redact_url(self.url)

    def __repr__(self) -> str:
        return f"DatabaseUrl({redact_url(self.url)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatabaseUrl) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)
