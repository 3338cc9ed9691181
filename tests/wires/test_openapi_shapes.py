"""A second check of the OpenAI-shaped requests: OpenAI's published OpenAPI document, validated
with jsonschema (Draft 2020-12). The schemas reachable from the two request components are kept in
`fixtures/openai-openapi-subset.json` (extracted from OpenAI's full published document), so the
check runs on a fresh clone too."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import msgspec
import pytest

from fuseforks.images.vault import ImageVault
from fuseforks.wires import Endpoint, get_wire
from tests.wires.test_sdk_shapes import rich_request

SPEC = Path(__file__).parent / "fixtures" / "openai-openapi-subset.json"


@cache
def validator(component: str) -> jsonschema.Draft202012Validator:
    spec: dict[str, Any] = json.loads(SPEC.read_text())
    root = {"$ref": f"#/components/schemas/{component}", "components": spec["components"]}
    return jsonschema.Draft202012Validator(root)


@pytest.mark.parametrize(("wire", "component"), [
    ("openai-compat", "CreateChatCompletionRequest"),
    ("openai-responses", "CreateResponse"),
])
def test_request_validates_against_openais_openapi_document(wire: str, component: str) -> None:
    errors = [e.message for e in validator(component).iter_errors(encoded(wire))]
    assert errors == []


def encoded(wire: str) -> dict[str, Any]:
    vault = ImageVault()
    request, _ = rich_request(vault)
    return msgspec.json.decode(get_wire(wire).encode(request, vault, Endpoint("http://x", "k")).body)


def test_the_openapi_check_catches_a_wrong_part_deep_in_the_carrier() -> None:
    body = encoded("openai-compat")
    carrier = next(m for m in body["messages"] if isinstance(m["content"], list))
    assert carrier["role"] == "user"
    carrier["content"][1]["type"] = "image"
    assert len(list(validator("CreateChatCompletionRequest").iter_errors(body))) == 1


def test_the_openapi_check_catches_a_wrong_part_deep_in_a_function_call_output() -> None:
    body = encoded("openai-responses")
    output = next(i for i in body["input"] if isinstance(i.get("output"), list))
    output["output"][1]["type"] = "input_picture"
    assert len(list(validator("CreateResponse").iter_errors(body))) == 1
