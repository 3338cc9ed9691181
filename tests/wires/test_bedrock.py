"""The Bedrock Converse wire: its bodies against botocore's own service model, its errors as
Bedrock sends them, its stream, and Signature Version 4 from botocore's credential chain."""

from __future__ import annotations

import base64
from typing import Any

import botocore.session
import httpx
import msgspec
import pytest
from botocore.validate import ParamValidator

from fuseforks.core.errors import WireRejected, WireRetryable, WireUnavailable
from fuseforks.core.names import Placement
from fuseforks.images.vault import ImageVault
from fuseforks.simulator import run_simulator
from fuseforks.wires import Endpoint, get_wire, resolve_endpoint
from fuseforks.wires.credentials import AwsSigV4
from fuseforks.wires.http import ProviderClient, RetryPolicy
from tests.wires.helpers import MODEL_OF, snapshot_request, tool_round, two_colour_jpeg
from tests.wires.test_sdk_shapes import rich_request

WIRE = "bedrock-converse"
ENDPOINT = Endpoint(base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
                    api_key="bedrock-api-key-sentinel")
FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.002)


def converse_input() -> Any:
    """botocore's own model of the `Converse` operation, through its public loader."""
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    return model.operation_model("Converse").input_shape


def as_parameters(body: dict[str, Any], model: str) -> dict[str, Any]:
    """The JSON body as the parameters botocore would serialize into it: each image's base64
    back to its bytes (strictly: what is not base64 fails here), the model id beside it."""
    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"bytes"} and isinstance(node["bytes"], str):
                return {"bytes": base64.b64decode(node["bytes"], validate=True)}
            return {k: walk(v) for k, v in node.items()}
        return [walk(v) for v in node] if isinstance(node, list) else node
    return {"modelId": model, **walk(body)}


@pytest.mark.parametrize("placement", [None, "alternate"])
def test_the_body_validates_against_botocores_service_model(placement: Placement | None) -> None:
    vault = ImageVault()
    request, images = rich_request(vault)
    request = msgspec.structs.replace(request, placement=placement)
    body = msgspec.json.decode(get_wire(WIRE).encode(request, vault, ENDPOINT).body)
    report = ParamValidator().validate(as_parameters(body, "model-x"), converse_input())
    assert not report.has_errors(), report.generate_report()
    sent = [block["image"] for message in body["messages"] for block in message["content"]
            for block in ([block] if "image" in block else
                          block.get("toolResult", {}).get("content", []))
            if "image" in block]
    assert [(i["format"], base64.b64decode(i["source"]["bytes"])) for i in sent] == [
        ("jpeg", images[d]) if images[d][:2] == b"\xff\xd8" else ("webp", images[d])
        for d in images]


def test_the_validator_is_strict_about_what_converse_does_not_declare() -> None:
    vault = ImageVault()
    body = msgspec.json.decode(get_wire(WIRE).encode(snapshot_request(vault), vault,
                                                     ENDPOINT).body)
    body["messages"][2]["content"][0]["toolResult"]["content"][0]["image"]["mediaType"] = "x"
    report = ParamValidator().validate(as_parameters(body, "m"), converse_input())
    assert report.has_errors() and "mediaType" in report.generate_report()


def test_the_native_placement_puts_images_in_the_tool_result_and_the_alternate_after_it() -> None:
    vault = ImageVault()
    image = vault.put(two_colour_jpeg(), "image/jpeg")
    request = tool_round([("camera_snapshot", "a", [image]), ("camera_status", "b", [])])
    native = msgspec.json.decode(get_wire(WIRE).encode(request, vault, ENDPOINT).body)
    results = native["messages"][2]["content"]
    assert [list(item) for item in results[0]["toolResult"]["content"]] == [["image"], ["text"]]
    alternate = msgspec.json.decode(get_wire(WIRE).encode(
        msgspec.structs.replace(request, placement="alternate"), vault, ENDPOINT).body)
    (user,) = [m for m in alternate["messages"][2:] if m["role"] == "user"]  # one user message
    assert [next(iter(block)) for block in user["content"]] == [
        "toolResult", "toolResult", "text", "image"]
    assert [r["toolResult"]["content"] for r in user["content"][:2]] == [[{"text": "a"}],
                                                                        [{"text": "b"}]]


# Bedrock's errors: the message in the body, the type in `x-amzn-ErrorType` (taken from the
# reports each names; the README's provider table and docs/providers.md list them).
ERRORS = [
    (400, "ValidationException", "This model doesn't support the image field for user messages. "
     "Remove image and try again.", "placement"),  # anomalyco/opencode#49443
    (400, "ValidationException", "The model returned the following errors: The provided image "
     "does not match the specified image format.", "image"),  # boto/boto3#4415
    (400, "ValidationException", "1 validation error detected: Value 'jpg' at 'messages.1.member."
     "content.2.member.image.format' failed to satisfy constraint: Member must satisfy enum value "
     "set: [png, jpeg, gif, webp]", "image"),  # NousResearch/hermes-agent#55429
    (400, "ValidationException", "The provided model identifier is invalid.", "parameter"),
    (400, "ValidationException", "A conversation must alternate between user and assistant "
     "roles. Make sure the conversation alternates between user and assistant roles and try "
     "again.", "other"),
]


@pytest.mark.parametrize(("status", "kind", "message", "refusal"), ERRORS)
def test_a_refusal_is_read_with_the_type_its_header_names(status: int, kind: str, message: str,
                                                          refusal: str) -> None:
    wire = get_wire(WIRE)
    assert wire.error_body is not None
    headers = {"x-amzn-errortype": f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"}
    body = wire.error_body(headers, msgspec.json.encode({"message": message}))
    error = wire.classify(status, body)
    assert isinstance(error, WireRejected)
    assert (error.error_type, error.refusal, error.message) == (kind, refusal, message)


def test_throttling_is_retried_and_named() -> None:
    wire = get_wire(WIRE)
    assert wire.error_body is not None
    body = wire.error_body({"x-amzn-errortype": "ThrottlingException"},
                           b'{"message":"Too many requests, please wait before trying again."}')
    error = wire.classify(429, body)
    assert isinstance(error, WireRetryable) and error.code == "ThrottlingException"


async def test_an_exception_in_the_stream_is_classified_as_the_same_error_outside_it() -> None:
    from fuseforks.wires import eventstream

    frames = (eventstream.encode(eventstream.event("messageStart", b'{"role":"assistant"}'))
              + eventstream.encode(eventstream.exception(
                  "throttlingException", b'{"message":"Too many tokens, please wait."}')))
    answer = lambda _: httpx.Response(  # noqa: E731
        200, headers={"content-type": "application/vnd.amazon.eventstream"}, content=frames)
    retries = []
    async with ProviderClient(WIRE, ENDPOINT, policy=FAST, on_retry=retries.append,
                              transport=httpx.MockTransport(answer)) as client:
        vault = ImageVault()
        with pytest.raises(WireUnavailable) as gave_up:
            await client.chat(snapshot_request(vault), vault, on_text=lambda _: None)
    assert gave_up.value.message == "Too many tokens, please wait."
    assert [(r.error_class, r.code) for r in retries] == [("stream_error", "ThrottlingException")] * 2


async def test_a_request_signed_by_botocore_is_taken_and_the_secret_never_leaves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials from botocore's chain (here its environment provider), Signature Version 4
    over the request as sent; the simulator checks the header's form and its date."""
    secret = "fuseforks-test-secret-access-key-0000"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAFUSEFORKSTEST000")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK"):
        monkeypatch.delenv(name, raising=False)
    endpoint = resolve_endpoint(WIRE)
    assert endpoint.base_url == "https://bedrock-runtime.eu-west-3.amazonaws.com"
    assert isinstance(endpoint.credential, AwsSigV4) and endpoint.api_key == ""
    assert endpoint.credential.region == "eu-west-3"
    async with run_simulator() as sim:  # the same credential, at the simulator's address
        local = Endpoint(sim.base_urls[WIRE], credential=endpoint.credential)
        for on_text in (None, lambda _: None):
            async with ProviderClient(WIRE, local) as client:
                vault = ImageVault()
                response = await client.chat(snapshot_request(vault, model=MODEL_OF[WIRE]),
                                             vault, on_text=on_text)
            assert response.text.startswith("I see 1 image.")
    assert [r.status for r in sim.received] == [200, 200]
    assert secret in endpoint.credential.secrets()


async def test_an_unsigned_or_malformed_signature_is_refused_as_aws_refuses_it() -> None:
    async with run_simulator() as sim:
        url = sim.base_urls[WIRE] + f"/model/{MODEL_OF[WIRE]}/converse"
        body = b'{"messages":[{"role":"user","content":[{"text":"hi"}]}]}'
        async with httpx.AsyncClient() as http:
            unsigned = await http.post(url, content=body)
            malformed = await http.post(url, content=body, headers={
                "authorization": "AWS4-HMAC-SHA256 Credential=AKIA/20260101/us-east-1/s3/x"})
    assert (unsigned.status_code, unsigned.headers["x-amzn-errortype"].split(":")[0]) == (
        403, "MissingAuthenticationTokenException")
    assert (malformed.status_code, malformed.headers["x-amzn-errortype"].split(":")[0]) == (
        403, "IncompleteSignatureException")
