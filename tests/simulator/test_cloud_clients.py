"""The clouds' official clients drive the simulator, a tool image included, and see what it saw:
boto3's `bedrock-runtime` (`converse`, `converse_stream`, Signature Version 4; botocore sends a
Bedrock API key only over HTTPS, so that one is fuseforks' own test), `anthropic`'s `AnthropicVertex`, `google-genai` with `vertexai=True`, `openai`'s
`AzureOpenAI`. What a client reads of a streamed answer equals what fuseforks' wire reads.
Google's credentials come from a service account key through google-auth's own token exchange,
against a token endpoint on this machine."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import anthropic
import anyio
import boto3
import botocore.exceptions
import openai
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google import genai
from google.genai import types as gtypes
from google.oauth2.credentials import Credentials

from fuseforks.images.vault import ImageVault
from fuseforks.simulator import Script, Simulator, run_simulator
from fuseforks.wires import Endpoint, resolve_endpoint
from fuseforks.wires.credentials import BearerTokens
from fuseforks.wires.http import ProviderClient
from tests.helpers.answers import send_json
from tests.wires.helpers import MODEL_OF, snapshot_request, two_colour_jpeg

SEEN = "I see 1 image. image 1: left half green, right half magenta."
JPEG = two_colour_jpeg()
B64 = base64.b64encode(JPEG).decode()
CLAUDE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
TOOLS = {"tools": [{"toolSpec": {"name": "camera_snapshot", "description": "Take a photo.",
                                 "inputSchema": {"json": {"type": "object"}}}}]}


def bedrock(sim: Simulator, **credentials: str) -> Any:
    return boto3.client("bedrock-runtime", region_name="us-east-1",
                        endpoint_url=sim.base_url + "/bedrock", **credentials)


def converse_messages(image_in: str) -> list[dict[str, Any]]:
    """A tool round whose result is a JPEG: inside the `toolResult`, or after it."""
    image = {"image": {"format": "jpeg", "source": {"bytes": JPEG}}}
    result: dict[str, Any] = {"toolResult": {"toolUseId": "t1", "content": [{"text": "frame"}]}}
    blocks = [result]
    if image_in == "toolResult":
        result["toolResult"]["content"].append(image)
    else:
        blocks += [{"text": "(the output of camera_snapshot)"}, image]
    return [{"role": "user", "content": [{"text": "Take a photo."}]},
            {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1",
                                                           "name": "camera_snapshot",
                                                           "input": {}}}]},
            {"role": "user", "content": blocks}]


async def test_boto3_converses_with_a_tool_image_signed_by_signature_version_4() -> None:
    async with run_simulator() as sim:
        client = bedrock(sim, aws_access_key_id="AKIAFUSEFORKSSIM0000",
                         aws_secret_access_key="fuseforks-simulator-secret-0000")
        answer = await anyio.to_thread.run_sync(lambda: client.converse(
            modelId=CLAUDE, messages=converse_messages("toolResult"), toolConfig=TOOLS))
    assert answer["output"]["message"]["content"] == [{"text": SEEN}]
    assert (answer["stopReason"], answer["usage"]["outputTokens"]) == ("end_turn", 10)
    assert sim.received[0].path == "/bedrock/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"


async def test_boto3_reads_the_simulators_stream_as_fuseforks_reads_it() -> None:
    """The same answer, streamed: botocore's parser and fuseforks' own agree on every event."""
    async with run_simulator(script=Script(call_tools=("camera_snapshot",),
                                           arguments='{"zoom": 2, "note": "a longer one"}')) as sim:
        client = bedrock(sim, aws_access_key_id="AKIAFUSEFORKSSIM0000",
                         aws_secret_access_key="fuseforks-simulator-secret-0000")

        def stream() -> list[dict[str, Any]]:
            reply = client.converse_stream(modelId=CLAUDE, toolConfig=TOOLS, messages=[
                {"role": "user", "content": [{"text": "Take a photo."}]}])
            return list(reply["stream"])

        events = await anyio.to_thread.run_sync(stream)
        vault = ImageVault()
        request = snapshot_request(vault, model=CLAUDE)
        request = type(request)(model=CLAUDE, messages=request.messages[:1], tools=request.tools)
        async with ProviderClient("bedrock-converse", Endpoint(sim.base_urls["bedrock-converse"],
                                                               "bedrock-key-000")) as ours:
            heard = await ours.chat(request, vault, on_text=lambda _: None)
    kinds = [next(iter(e)) for e in events]
    assert kinds == ["messageStart", "contentBlockStart", *["contentBlockDelta"] * (
        kinds.count("contentBlockDelta")), "contentBlockStop", "messageStop", "metadata"]
    pieces = "".join(e["contentBlockDelta"]["delta"]["toolUse"]["input"] for e in events
                     if "contentBlockDelta" in e)
    assert json.loads(pieces) == heard.tool_calls[0].arguments == {"zoom": 2,
                                                                   "note": "a longer one"}
    start = events[1]["contentBlockStart"]["start"]["toolUse"]
    assert start["name"] == heard.tool_calls[0].name == "camera_snapshot"
    assert events[-2]["messageStop"]["stopReason"] == "tool_use" == heard.stop_reason


async def test_a_family_without_tool_result_images_refuses_them_there_and_takes_them_after() -> None:
    async with run_simulator() as sim:
        client = bedrock(sim, aws_access_key_id="AKIAFUSEFORKSSIM0000",
                         aws_secret_access_key="fuseforks-simulator-secret-0000")
        model = "mistral.pixtral-large-2502-v1:0"
        with pytest.raises(botocore.exceptions.ClientError) as refused:
            await anyio.to_thread.run_sync(lambda: client.converse(
                modelId=model, messages=converse_messages("toolResult"), toolConfig=TOOLS))
        after = await anyio.to_thread.run_sync(lambda: client.converse(
            modelId=model, messages=converse_messages("after"), toolConfig=TOOLS))
    assert refused.value.response["Error"] == {
        "Code": "ValidationException", "Message": "This model doesn't support the image field "
        "for user messages. Remove image and try again."}
    assert after["output"]["message"]["content"] == [{"text": SEEN}]


def claude_tool_round() -> list[dict[str, Any]]:
    return [{"role": "user", "content": "Take a photo."},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1",
                                               "name": "camera_snapshot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                             "data": B64}}]}]}]


async def test_anthropic_vertex_sees_a_tool_image_whole_and_streamed() -> None:
    async with run_simulator() as sim:
        client = anthropic.AsyncAnthropicVertex(
            region="us-east5", project_id="fuseforks-sim", access_token="ya29.simulator-token",
            base_url=sim.base_url + "/vertex/v1")
        tools = [{"name": "camera_snapshot", "input_schema": {"type": "object"}}]
        whole = await client.messages.create(model="claude-sonnet-5-5", max_tokens=256,
                                             messages=claude_tool_round(), tools=tools)
        async with client.messages.stream(model="claude-sonnet-5-5", max_tokens=256,
                                          messages=claude_tool_round(), tools=tools) as stream:
            streamed = await stream.get_final_message()
    assert whole.content[0].text == streamed.content[0].text == SEEN
    assert [r.path.rpartition(":")[2] for r in sim.received] == ["rawPredict", "streamRawPredict"]


async def test_google_genai_on_vertex_sees_a_tool_image() -> None:
    async with run_simulator() as sim:
        client = genai.Client(
            vertexai=True, project="fuseforks-sim", location="us-central1",
            credentials=Credentials(token="ya29.simulator-token"),
            http_options=gtypes.HttpOptions(base_url=sim.base_url + "/vertex/"))
        signature = base64.b64encode(b"sig").decode()
        contents = [
            gtypes.Content(role="user", parts=[gtypes.Part(text="Take a photo.")]),
            gtypes.Content(role="model", parts=[gtypes.Part(
                function_call=gtypes.FunctionCall(name="camera_snapshot", args={}),
                thought_signature=base64.b64decode(signature))]),
            gtypes.Content(role="user", parts=[gtypes.Part(function_response=gtypes.FunctionResponse(
                name="camera_snapshot", response={"output": "frame"},
                parts=[gtypes.FunctionResponsePart(inline_data=gtypes.FunctionResponseBlob(
                    mime_type="image/jpeg", data=JPEG))]))])]
        config = gtypes.GenerateContentConfig(tools=[gtypes.Tool(function_declarations=[
            gtypes.FunctionDeclaration(name="camera_snapshot", parameters_json_schema={
                "type": "object"})])])
        answer = await client.aio.models.generate_content(model="gemini-3.8-flash",
                                                          contents=contents, config=config)
    assert answer.text == SEEN
    assert "/publishers/google/models/gemini-3.8-flash:generateContent" in sim.received[0].path


@pytest.mark.parametrize(("api", "version"), [("chat", "2024-10-21"),
                                              ("responses", "2025-04-01-preview")])
async def test_azure_openai_sees_a_tool_image_by_the_carrier(api: str, version: str) -> None:
    url = f"data:image/jpeg;base64,{B64}"
    async with run_simulator() as sim:
        client = openai.AsyncAzureOpenAI(azure_endpoint=sim.base_url + "/azure",
                                         api_version=version, api_key="azure-simulator-key")
        if api == "chat":
            reply = await client.chat.completions.create(model="gpt-5.5", messages=[
                {"role": "user", "content": "Take a photo."},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "t1", "type": "function",
                     "function": {"name": "camera_snapshot", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "t1", "content": "frame"},
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}])
            text = reply.choices[0].message.content
        else:
            response = await client.responses.create(model="gpt-5.5", input=[
                {"role": "user", "content": "Take a photo."},
                {"type": "function_call", "call_id": "t1", "name": "camera_snapshot",
                 "arguments": "{}"},
                {"type": "function_call_output", "call_id": "t1", "output": [
                    {"type": "input_image", "image_url": url}]}])
            text = response.output_text
    assert text == SEEN
    assert [r.path for r in sim.received] == [
        "/azure/openai/deployments/gpt-5.5/chat/completions" if api == "chat"
        else "/azure/openai/responses"]


async def test_azure_refuses_a_request_without_an_api_version() -> None:
    async with run_simulator() as sim:
        client = openai.AsyncAzureOpenAI(azure_endpoint=sim.base_url + "/azure",
                                         api_version="2023-03-15-preview", api_key="azure-key-0")
        with pytest.raises(openai.NotFoundError):  # a version the service does not serve
            await client.chat.completions.create(model="gpt-5.5", messages=[
                {"role": "user", "content": "hi"}])


# --- Google's credentials: a service account's key, exchanged by google-auth --------------------


class _TokenEndpoint(BaseHTTPRequestHandler):
    """OAuth 2.0's token endpoint, as Google's answers a service account's signed assertion."""

    issued: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        length = int(self.headers["content-length"])
        form = self.rfile.read(length).decode()
        assert "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer" in form
        token = f"ya29.minted-{len(self.issued) + 1}-for-the-simulator"
        self.issued.append(token)
        send_json(self, {"access_token": token, "expires_in": 3599,
                         "token_type": "Bearer"})

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def service_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TokenEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    path = tmp_path / "service-account.json"
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "fuseforks-sim", "private_key_id": "k1",
        "private_key": pem, "client_email": "agent@fuseforks-sim.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": f"http://127.0.0.1:{server.server_port}/token"}))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    for name in ("GOOGLE_CLOUD_PROJECT", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION",
                 "GOOGLE_CLOUD_LOCATION"):
        monkeypatch.delenv(name, raising=False)
    _TokenEndpoint.issued = []
    try:
        yield _TokenEndpoint.issued
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("wire", ["vertex-gemini", "vertex-anthropic"])
async def test_application_default_credentials_sign_vertex_requests(
        wire: str, service_account: list[str]) -> None:
    endpoint = resolve_endpoint(wire)  # no key: google-auth's chain, the project it names
    assert endpoint.base_url == ("https://aiplatform.googleapis.com/v1/projects/fuseforks-sim/"
                                 "locations/global")
    assert isinstance(endpoint.credential, BearerTokens) and service_account == []
    async with run_simulator() as sim:
        local = Endpoint(sim.base_urls[wire], credential=endpoint.credential)
        async with ProviderClient(wire, local) as client:
            for _ in range(2):
                vault = ImageVault()
                response = await client.chat(snapshot_request(vault, model=MODEL_OF[wire]), vault)
                assert response.text == SEEN
    assert service_account == ["ya29.minted-1-for-the-simulator"]  # minted once, used twice
    assert endpoint.credential.secrets() == service_account
