"""The deployment files, checked without Docker: `compose.yaml` is valid Compose (the
specification's own JSON schema), its worker runs a `fuseforks worker` command the CLI accepts,
against the PostgreSQL and NATS services it defines, with the keys passed from the host and none
written down; the `Dockerfile` copies what exists and runs `fuseforks`."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import jsonschema
import yaml

from fuseforks.cli.worker import worker
from fuseforks.mcp.config import load_config
from fuseforks.wires.registry import KEY_VARIABLES

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())
SERVICES = COMPOSE["services"]


def test_compose_yaml_is_valid_compose() -> None:
    schema = json.loads((Path(__file__).parent / "fixtures" / "compose-spec.json").read_text())
    jsonschema.Draft7Validator(schema).validate(COMPOSE)
    assert set(SERVICES) == {"postgres", "nats", "worker"}


def test_postgres_and_nats_with_jetstream_keep_their_data() -> None:
    assert SERVICES["postgres"]["image"].startswith("postgres:")
    assert SERVICES["postgres"]["volumes"] == ["postgres:/var/lib/postgresql/data"]
    nats = SERVICES["nats"]
    assert nats["image"].startswith("nats:")
    assert nats["command"][:3] == ["-js", "-sd", "/data"]
    assert nats["volumes"] == ["nats:/data"]
    assert set(COMPOSE["volumes"]) == {"postgres", "nats"}


def test_the_worker_command_is_one_the_cli_accepts_against_those_services() -> None:
    service = SERVICES["worker"]
    environment = service["environment"]
    db = environment["FUSEFORKS_DB"]
    assert re.fullmatch(r"postgresql://fuseforks:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432/"
                        r"fuseforks", db)
    assert environment["FUSEFORKS_NATS"] == "nats://nats:4222"
    # The image holds docker/mcp.json at /config/mcp.json (the Dockerfile's COPY).
    args = [str(ROOT / "docker" / "mcp.json") if a == "/config/mcp.json" else a
            for a in service["command"][1:]]
    context = worker.make_context("worker", args, default_map={
        "db": db, "nats_url": environment["FUSEFORKS_NATS"]})
    assert service["command"][0] == "worker"
    assert service["command"][1:3] == ["--mcp-config", "/config/mcp.json"]
    assert context.params["concurrency"] == 8
    assert {name: condition["condition"] for name, condition in service["depends_on"].items()} \
        == {"postgres": "service_healthy", "nats": "service_healthy"}
    assert service["stop_signal"] == "SIGTERM"  # workers hand running turns back on SIGTERM


def test_keys_come_from_the_host_and_none_is_written_down() -> None:
    environment = SERVICES["worker"]["environment"]
    for variable in KEY_VARIABLES:
        assert environment[variable] == f"${{{variable}:-}}"
    text = (ROOT / "compose.yaml").read_text()
    assert not re.search(r"(sk-|AIza)[A-Za-z0-9]", text)
    assert SERVICES["postgres"]["environment"]["POSTGRES_PASSWORD"].startswith(
        "${POSTGRES_PASSWORD:?")


def test_the_dockerfile_copies_what_exists_and_runs_fuseforks(tmp_path: Path) -> None:
    build = SERVICES["worker"]["build"]
    dockerfile = (ROOT / build["context"] / build["dockerfile"]).read_text().splitlines()
    instructions = [line.split(None, 1) for line in dockerfile if line and not line.startswith("#")
                    and not line.startswith(" ")]
    assert instructions[0] == ["FROM", "python:3.11-slim"]
    for keyword, rest in instructions:
        if keyword == "COPY":
            *sources, _ = shlex.split(rest)
            for source in sources:
                assert (ROOT / source).exists(), source
    assert ["USER", "fuseforks"] in instructions
    assert ["ENTRYPOINT", '["fuseforks"]'] in instructions
    assert ["CMD", '["worker", "--mcp-config", "/config/mcp.json"]'] in instructions
    servers = load_config(ROOT / "docker" / "mcp.json")
    assert [(s.name, s.command, s.args) for s in servers] == [
        ("nik", "python", ["-m", "fuseforks.demo.camera"])]
