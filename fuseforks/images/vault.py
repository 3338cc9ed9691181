"""The turn's in-memory image store, addressed by SHA-256 digest.

Images live for one turn only. Every round re-sends the images still in the message list, so the
expensive parts — base64 and the JSON string that carries it — are computed once per image per
turn and cached here; an adapter splices the cached JSON fragment into the body
(`msgspec.Raw`) instead of re-encoding megabytes on every round. `release()` drops it all.
"""

from __future__ import annotations

import base64 as _b64
import hashlib

import msgspec

from fuseforks.core.canonical import ImageRef


class ImageVault:
    """Per-turn store of image bytes and their cached encodings."""

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._media: dict[str, str] = {}
        self._b64: dict[str, bytes] = {}
        self._b64_text: dict[str, str] = {}
        self._json_b64: dict[str, msgspec.Raw] = {}
        self._json_url: dict[str, msgspec.Raw] = {}

    def put(self, data: bytes, media_type: str) -> ImageRef:
        """Store `data` (the bytes that will be sent) and return its reference."""
        digest = hashlib.sha256(data).hexdigest()
        self._data.setdefault(digest, bytes(data))
        self._media.setdefault(digest, media_type)
        return ImageRef(digest=digest, media_type=media_type, size=len(data))

    def hold(self, digest: str, data: bytes, media_type: str) -> ImageRef:
        """Store bytes whose SHA-256 the caller already computed (the normalizer did): no rehash."""
        self._data.setdefault(digest, data)
        self._media.setdefault(digest, media_type)
        return ImageRef(digest=digest, media_type=media_type, size=len(data))

    def get(self, digest: str) -> bytes:
        try:
            return self._data[digest]
        except KeyError:
            raise KeyError(f"image {digest[:12]} is not in this turn's vault") from None

    def media_type(self, digest: str) -> str:
        self.get(digest)
        return self._media[digest]

    def _b64_bytes(self, digest: str) -> bytes:
        cached = self._b64.get(digest)
        if cached is None:
            cached = self._b64[digest] = _b64.b64encode(self.get(digest))
        return cached

    def base64(self, digest: str) -> str:
        """Base64 of the image, computed once per turn."""
        cached = self._b64_text.get(digest)
        if cached is None:
            cached = self._b64_text[digest] = self._b64_bytes(digest).decode("ascii")
        return cached

    def json_base64(self, digest: str) -> msgspec.Raw:
        """The base64 as a ready JSON string literal, for splicing into an encoded body."""
        cached = self._json_b64.get(digest)
        if cached is None:
            cached = self._json_b64[digest] = msgspec.Raw(b'"' + self._b64_bytes(digest) + b'"')
        return cached

    def json_data_url(self, digest: str, media_type: str) -> msgspec.Raw:
        """`"data:<type>;base64,…"` as a ready JSON string literal."""
        key = f"{media_type}:{digest}"
        cached = self._json_url.get(key)
        if cached is None:
            prefix = f'"data:{media_type};base64,'.encode("ascii")
            cached = self._json_url[key] = msgspec.Raw(prefix + self._b64_bytes(digest) + b'"')
        return cached

    def release(self) -> None:
        """Forget every image and every cached encoding (end of turn)."""
        for store in (self._data, self._media, self._b64, self._b64_text, self._json_b64, self._json_url):
            store.clear()

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, digest: object) -> bool:
        return digest in self._data

    @property
    def nbytes(self) -> int:
        """Bytes held: images plus every cached encoding (for leak measurement)."""
        return (
            sum(map(len, self._data.values()))
            + sum(map(len, self._b64.values()))
            + sum(map(len, self._b64_text.values()))
            + sum(len(r) for r in self._json_b64.values())
            + sum(len(r) for r in self._json_url.values())
        )
