"""What each provider documents about a request's images, and the engine within all of it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fuseforks.core.media import ENGINE_LIMITS
from fuseforks.core.names import DEFAULT_IMAGE_CAP
from fuseforks.wires import WIRES, get_wire
from fuseforks.wires.registry import image_cap_for

# The numbers docs/providers.md sources, per wire (None: not documented).
DOCUMENTED = {
    "bedrock-converse": (20, 3_750_000, 8000),
    "vertex-gemini": (3000, 7 * 1024 * 1024, None),
    "anthropic": (100, 5 * 1024 * 1024, 8000),
    "vertex-anthropic": (100, 5 * 1024 * 1024, 8000),
    "azure-chat": (None, 20 * 1024 * 1024, None),
    "azure-responses": (None, 20 * 1024 * 1024, None),
}


@pytest.mark.parametrize("wire", WIRES)
def test_each_wire_carries_the_numbers_its_provider_documents(wire: str) -> None:
    limits = get_wire(wire).limits
    documented = DOCUMENTED.get(wire, (None, None, None))
    assert (limits.images_per_request, limits.image_bytes, limits.edge_px) == documented


@pytest.mark.parametrize("wire", WIRES)
def test_every_image_the_engine_sends_is_within_the_providers_limits(wire: str) -> None:
    limits = get_wire(wire).limits
    assert (limits.images_per_request or DEFAULT_IMAGE_CAP) >= DEFAULT_IMAGE_CAP
    assert ENGINE_LIMITS.max_bytes <= (limits.image_bytes or ENGINE_LIMITS.max_bytes)
    assert ENGINE_LIMITS.max_edge_px <= (limits.edge_px or ENGINE_LIMITS.max_edge_px)


@given(st.sampled_from(WIRES), st.integers(min_value=0, max_value=10_000))
def test_a_turns_cap_is_the_one_asked_for_within_the_providers(wire: str, cap: int) -> None:
    most = get_wire(wire).limits.images_per_request
    capped = image_cap_for(wire, cap)  # type: ignore[arg-type]
    assert capped == (cap if most is None else min(cap, most))
    assert capped <= cap
