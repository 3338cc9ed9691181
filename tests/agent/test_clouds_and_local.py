"""A camera turn through `Agent` on each cloud's wire and each local server: the image reaches
the model, the record verifies against today's engine, the audit names the provider, and no
key reaches the record. Bedrock's families without tool-result images climb the ladder; a
turn's cap stays within what the provider documents."""

from __future__ import annotations

import sys

import pytest

from fuseforks import Agent
from fuseforks.agent import AgentSettings
from fuseforks.agent.secrets import known_secrets
from fuseforks.engine.replay import verify
from fuseforks.events.codec import encode_event
from fuseforks.events.types import PlacementChanged, PlacementLearned, RequestRefused, TurnStarted
from fuseforks.simulator import Script, run_simulator
from fuseforks.stores.memory import MemoryStore
from fuseforks.stores.store import AuditFilter
from fuseforks.wires import Endpoint
from fuseforks.wires.http import RetryPolicy
from tests.wires.helpers import MODEL_OF

CAMERA = {"mcpServers": {"nik": {"command": sys.executable,
                                 "args": ["-m", "fuseforks.demo.camera"]}}}
KEY = "sk-cloud-and-local-sentinel-0042"
FAST = RetryPolicy(base_delay=0.01, max_delay=0.02)
WIRES = ["bedrock-converse", "vertex-gemini", "vertex-anthropic", "azure-chat",
         "azure-responses", "ollama", "vllm", "llamacpp", "lmstudio"]
SCRIPT = Script(call_tools=("nik__live_view_image",))


async def camera_turn(wire: str, model: str, *, key: str | None = KEY,
                      settings: AgentSettings = AgentSettings(retry=FAST)):  # noqa: B008
    store = MemoryStore()
    async with run_simulator(script=SCRIPT) as sim, Agent(
        wire=wire, model=model, base_url=sim.base_urls[wire], api_key=key, mcp=CAMERA, db=store,
        log=None, settings=settings,
    ) as agent:
        result = await agent.run("Take one live view and describe it.")
    return result, store


@pytest.mark.parametrize("wire", WIRES)
async def test_a_camera_turn_delivers_its_image_and_its_record_holds(wire: str) -> None:
    local = wire in ("ollama", "vllm", "llamacpp", "lmstudio")
    result, store = await camera_turn(wire, MODEL_OF[wire], key=None if local else KEY)
    assert result.stop == "answered", result.error
    assert result.answer.startswith("I see 1 image. image 1: left half ")
    (image,) = result.images
    assert image.received and image.placement == ("alternate" if local or wire == "azure-chat"
                                                  else "native")
    verification = await verify(result.events)
    assert verification.divergence is None and not verification.interrupted
    rows = store.audit(AuditFilter(wire=wire))  # type: ignore[arg-type]
    assert [(r.wire, r.outcome) for r in rows.deliveries] == [(wire, "received")]
    assert not [e for e in result.events if KEY.encode() in encode_event(e.event)]


async def test_a_bedrock_family_without_tool_result_images_takes_them_after_the_results() -> None:
    result, _ = await camera_turn("bedrock-converse", "mistral.pixtral-large-2502-v1:0")
    events = [e.event for e in result.events]
    (refused,) = [e for e in events if isinstance(e, RequestRefused)]
    assert (refused.status, refused.error_type, refused.refusal) == (
        400, "ValidationException", "placement")
    assert any(isinstance(e, PlacementChanged) and e.placement == "alternate" for e in events)
    learned = [(e.placement, e.outcome) for e in events if isinstance(e, PlacementLearned)]
    assert learned == [("native", "refused"), ("alternate", "received")]
    assert result.images[0].placement == "alternate" and result.images[0].received
    assert result.answer.startswith("I see 1 image.")
    assert (await verify(result.events)).divergence is None


async def test_a_turns_cap_stays_within_what_the_provider_documents() -> None:
    result, _ = await camera_turn("bedrock-converse", MODEL_OF["bedrock-converse"],
                                  settings=AgentSettings(retry=FAST, image_cap=30))
    started = result.events[0].event
    assert isinstance(started, TurnStarted) and started.image_cap == 20  # Bedrock's 20
    other, _ = await camera_turn("vertex-anthropic", MODEL_OF["vertex-anthropic"],
                                 settings=AgentSettings(retry=FAST, image_cap=30))
    assert other.events[0].event.image_cap == 30  # type: ignore[union-attr]


def test_the_clouds_credential_secrets_in_the_environment_are_kept_out_of_the_record() -> None:
    environ = {"AWS_SECRET_ACCESS_KEY": "aws-secret-of-the-test-0001",
               "AWS_SESSION_TOKEN": "aws-session-token-of-the-test-0002",
               "AZURE_CLIENT_SECRET": "azure-client-secret-0003",
               "AWS_ACCESS_KEY_ID": "AKIAFUSEFORKSTEST000"}  # an id, not a secret
    secrets = known_secrets(Endpoint("https://x.test"), [], environ=environ)
    text = " ".join(environ.values())
    assert secrets.text(text) == ("[secret: AWS_SECRET_ACCESS_KEY] [secret: AWS_SESSION_TOKEN] "
                                  "[secret: AZURE_CLIENT_SECRET] AKIAFUSEFORKSTEST000")


def test_a_key_given_to_a_wire_without_a_key_variable_is_still_a_secret() -> None:
    """Vertex takes an access token as its key, and names no variable for it."""
    token = "ya29.an-access-token-given-as-the-key"
    secrets = known_secrets(Endpoint("https://x.test", token), [], environ={},
                            wire="vertex-gemini")
    assert secrets.text(f"echoed {token}") == "echoed [secret: the provider key]"
