"""The per-turn image vault: digest addressing, base64 computed once, release frees everything."""

from __future__ import annotations

import base64
import hashlib

import pytest

from fuseforks.images.vault import ImageVault
from tests.wires.helpers import two_colour_jpeg


def test_put_addresses_by_sha256_of_the_bytes_and_deduplicates() -> None:
    vault = ImageVault()
    data = two_colour_jpeg()
    ref = vault.put(data, "image/jpeg")
    assert ref.digest == hashlib.sha256(data).hexdigest()
    assert (ref.media_type, ref.size) == ("image/jpeg", len(data))
    assert vault.put(data, "image/jpeg") == ref
    assert len(vault) == 1 and vault.get(ref.digest) == data


def test_base64_and_json_fragments_are_computed_once_and_reused() -> None:
    vault = ImageVault()
    ref = vault.put(two_colour_jpeg(), "image/jpeg")
    text = vault.base64(ref.digest)
    assert text == base64.b64encode(vault.get(ref.digest)).decode()
    assert vault.base64(ref.digest) is text
    assert vault.json_base64(ref.digest) is vault.json_base64(ref.digest)
    url = vault.json_data_url(ref.digest, "image/jpeg")
    assert url is vault.json_data_url(ref.digest, "image/jpeg")
    assert bytes(url) == f'"data:image/jpeg;base64,{text}"'.encode()


def test_release_drops_images_and_every_cached_encoding() -> None:
    vault = ImageVault()
    ref = vault.put(two_colour_jpeg(), "image/jpeg")
    vault.json_data_url(ref.digest, "image/jpeg")
    assert vault.nbytes > 2 * ref.size
    vault.release()
    assert (len(vault), vault.nbytes) == (0, 0)
    with pytest.raises(KeyError, match="not in this turn's vault"):
        vault.base64(ref.digest)
