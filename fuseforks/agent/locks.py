"""`ConversationLocks`: turns of one conversation run one after another, and the book of locks
holds a conversation only while one of its turns runs or waits.

A lock kept per conversation id for ever grows with every conversation an agent has seen, and
every `run()` without a conversation starts a new one: a long-lived agent (a worker, a server)
would keep one lock per turn it ever ran. Counting who holds or waits on a lock lets the last one
out drop it; a later turn of the same conversation makes a new one, which is the same as the old
one would have been — nobody held it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = anyio.Lock(fast_acquire=True)
        self.users = 0
        """Turns holding the lock or waiting for it."""


class ConversationLocks:
    """One lock per conversation with a turn running or waiting; none for the others."""

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    @asynccontextmanager
    async def hold(self, conversation_id: str) -> AsyncIterator[None]:
        """Hold `conversation_id`'s lock for the block (waiting for turns ahead of it)."""
        entry = self._entries.get(conversation_id)
        if entry is None:
            entry = self._entries[conversation_id] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:  # also when cancelled while waiting
            entry.users -= 1
            if not entry.users:
                del self._entries[conversation_id]

    def __len__(self) -> int:
        """Conversations with a turn holding or waiting for their lock."""
        return len(self._entries)
