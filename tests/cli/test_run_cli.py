"""`fuseforks run` as a user runs it: a real process, a provider on loopback, the camera over stdio."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from fuseforks.stores.sqlite import SqliteStore
from tests.helpers import processes
from tests.helpers.answers import send_json
from tests.helpers.simulator import simulator as camera_calls

KEY = "sk-run-cli-sentinel-0451"


@pytest.fixture(scope="module")
def simulator() -> Iterator[str]:
    with camera_calls("--call", "nik__live_view_image") as url:
        yield url


def run(tmp_path: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"nik": {
        "command": sys.executable, "args": ["-m", "fuseforks.demo.camera"]}}}))
    return processes.run(
        [sys.executable, "-m", "fuseforks", "run", "--mcp-config", str(config),
         "--db", str(tmp_path / "run.db"), "--log", str(tmp_path / "run.log"), *args],
        capture_output=True, text=True, timeout=120,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | env)


def test_a_live_turn_prints_its_log_lines_progress_and_answer(simulator: str, tmp_path) -> None:
    done = run(tmp_path, "--wire", "gemini", "--model", "gemini-3.8-flash",
               "--base-url", f"{simulator}/gemini/v1beta", "--agent", "muse", "Take a picture.",
               env={"GEMINI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # The answer is printed as it arrives — before the turn's last log line — and only then.
    assert lines == [
        "tool: agent=muse round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "I see 1 image. image 1: left half red, right half green.",
        "turn: agent=muse backend=gemini model=gemini-3.8-flash rounds=2 stop=answered",
    ]
    # A camera slow to start (a busy machine) is reported every 5 s before the turn begins.
    progress = done.stderr.splitlines()
    starting = [line for line in progress if line.startswith("… waiting for MCP server")]
    assert starting == [f"… waiting for MCP server nik to start ({5 * n} s)"
                        for n in range(1, len(starting) + 1)]
    assert progress[len(starting):] == [
        "… waiting on gemini (gemini-3.8-flash at 127.0.0.1)",
        "… calling tool nik__live_view_image",
        "… waiting on gemini (gemini-3.8-flash at 127.0.0.1)",
    ]
    assert (tmp_path / "run.log").read_text().splitlines() == [lines[0], lines[2]]
    with SqliteStore(tmp_path / "run.db") as store:
        assert len(store.turns()) == 1
    for path in (tmp_path / "run.db", tmp_path / "run.log"):
        assert KEY.encode() not in path.read_bytes()
    assert KEY not in done.stdout + done.stderr


def test_no_stream_prints_the_answer_once_complete_after_the_log_lines(simulator: str,
                                                                         tmp_path) -> None:
    done = run(tmp_path, "--wire", "gemini", "--model", "gemini-3.8-flash",
               "--base-url", f"{simulator}/gemini/v1beta", "--agent", "muse", "--no-stream",
               "Take a picture.", env={"GEMINI_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tool: agent=muse round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "turn: agent=muse backend=gemini model=gemini-3.8-flash rounds=2 stop=answered",
        "",
        "I see 1 image. image 1: left half red, right half green.",
    ]


def test_the_streamed_answer_comes_in_pieces_from_a_streaming_request(tmp_path) -> None:
    """Against a simulator that records what it is asked: `"stream": true`, and the answer's
    pieces reach the terminal before the turn ends — once."""
    requests = tmp_path / "requests"
    process = processes.spawn(
        [sys.executable, "-m", "fuseforks", "simulator", "--port", "0", "--call",
         "nik__live_view_image", "--record-requests", str(requests)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    try:
        url = process.stdout.readline().strip().removeprefix("simulator: listening on ")
        done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonnet-5-5",
                   "--base-url", f"{url}/anthropic", "Take a picture.",
                   env={"ANTHROPIC_API_KEY": KEY})
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stdout.close()
    assert done.returncode == 0, done.stderr
    answer = "I see 1 image. image 1: left half red, right half green."
    assert done.stdout.splitlines() == [
        "tool: agent=agent round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        answer,
        "turn: agent=agent backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=answered",
    ]
    assert done.stdout.count("I see 1 image") == 1
    bodies = [json.loads(p.read_bytes()) for p in sorted(requests.iterdir())]
    assert [b["stream"] for b in bodies] == [True, True]


def test_without_a_key_the_run_names_the_variable_and_records_nothing(tmp_path) -> None:
    done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonnet-5-5", "hi", env={})
    assert (done.returncode, done.stdout, done.stderr.splitlines()) == (1, "", [
        "Error: no API key for anthropic: set ANTHROPIC_API_KEY (a provider on this machine, "
        "at 127.0.0.1 or localhost, needs none)"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mcp.json"]
    done = run(tmp_path, "--wire", "meta-responses", "--model", "llama-5", "hi", env={})
    assert done.stderr.splitlines() == [
        "Error: no API key for meta-responses: set META_API_KEY or LLAMA_API_KEY (a provider on "
        "this machine, at 127.0.0.1 or localhost, needs none)"]


class _LocalServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible server on this machine that takes no key (llama.cpp, vLLM, …)."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        _LocalServer.seen.append({"path": self.path,
                                  "authorization": self.headers.get("authorization", ""),
                                  "stream": body.get("stream", False)})
        send_json(self, {
            "id": "local-1", "object": "chat.completion", "created": 0, "model": "local",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "Hello from here."}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9},
        })

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize(("host", "stream"), [("127.0.0.1", True), ("localhost", False)])
def test_a_local_server_needs_no_key(tmp_path, host: str, stream: bool) -> None:
    """A local server that answers whole even when asked to stream: the answer is shown at
    once, and once."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _LocalServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _LocalServer.seen.clear()
    try:
        done = processes.run(
            [sys.executable, "-m", "fuseforks", "run", "--wire", "openai-compat", "--model", "local",
             "--base-url", f"http://{host}:{server.server_address[1]}/v1",
             "--db", str(tmp_path / "run.db"), "--log", str(tmp_path / "run.log"), "Say hello.",
             *([] if stream else ["--no-stream"])],
            capture_output=True, text=True, timeout=120,
            env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")})
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == (
        ["Hello from here.", "turn: agent=agent backend=openai-compat model=local rounds=1 stop=answered"]
        if stream else
        ["turn: agent=agent backend=openai-compat model=local rounds=1 stop=answered", "",
         "Hello from here."])
    assert _LocalServer.seen == [{"path": "/v1/chat/completions", "authorization": "",
                                  "stream": stream}]


def test_a_provider_that_refuses_the_key_fails_the_turn_clearly(simulator: str, tmp_path) -> None:
    done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonnet-5-5",
               "--base-url", f"{simulator}/nowhere", "hi", env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 1
    assert "turn failed: WireRejected: backend=anthropic status=404" in done.stderr
    assert done.stdout.splitlines()[-1] == (
        "turn: agent=agent backend=anthropic model=claude-sonnet-5-5 rounds=1 stop=error")
    assert KEY not in done.stdout + done.stderr


def test_a_model_the_provider_does_not_know_ends_the_run_in_one_line_naming_it(
    simulator: str, tmp_path,
) -> None:
    """A typo in --model: the provider's 404 ends the turn at its first request (never retried),
    and the one line that says so names the model."""
    done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonet-9",
               "--base-url", f"{simulator}/anthropic", "Take a picture.",
               env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 1
    said = [line for line in done.stderr.splitlines() if not line.startswith("… ")]
    assert said == ["turn failed: WireRejected: backend=anthropic status=404 class=client_error "
                    "type=not_found_error code=not_found_error: model: claude-sonet-9"]
    assert done.stdout.splitlines()[-1] == (
        "turn: agent=agent backend=anthropic model=claude-sonet-9 rounds=1 stop=error")
    assert done.stderr.count("… waiting on anthropic") == 1


def test_a_simulator_started_with_any_model_answers_any_name(tmp_path) -> None:
    with camera_calls("--any-model", "--call", "nik__live_view_image") as url:
        done = run(tmp_path, "--wire", "anthropic", "--model", "claude-sonet-9",
                   "--base-url", f"{url}/anthropic", "Take a picture.",
                   env={"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == (
        "turn: agent=agent backend=anthropic model=claude-sonet-9 rounds=2 stop=answered")


def test_a_signal_while_the_tools_start_says_nothing_was_sent_or_recorded(tmp_path) -> None:
    from tests.durability.test_no_orphans import descendants

    config = tmp_path / "mcp.json"
    hang = Path(__file__).parents[1] / "mcp" / "servers" / "hang_at_init.py"
    config.write_text(json.dumps({"mcpServers": {"stuck": {
        "command": sys.executable, "args": [str(hang)], "startTimeout": 600}}}))
    process = processes.spawn(
        [sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model", "m",
         "--mcp-config", str(config), "--db", str(tmp_path / "run.db"), "--log",
         str(tmp_path / "run.log"), "hi"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, env={**os.environ, "ANTHROPIC_API_KEY": KEY})
    deadline = time.monotonic() + 120  # a last resort, not a speed check
    while not any("hang_at_init.py" in c for c in descendants(process.pid).values()):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert (process.returncode, out) == (130, "")
    assert err.splitlines()[-1:] == [
        "stopped (SIGINT) before the turn started: nothing was sent or recorded"]
    assert "Traceback" not in err
    with SqliteStore(tmp_path / "run.db") as store:
        assert store.turns() == []


def test_a_signal_before_a_command_began_says_nothing_was_done() -> None:
    done = processes.run(
        [sys.executable, "-c", "import os, signal, time\n"
         "from fuseforks.cli.entry import install\n"
         "install()\nos.kill(os.getpid(), signal.SIGTERM)\ntime.sleep(60)"],
        capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (
        143, "", "stopped (SIGTERM) before the command began: nothing was done\n")


def test_a_server_that_writes_garbage_is_said_once_our_way(simulator: str, tmp_path) -> None:
    """The MCP SDK logs a traceback for every line that is not JSON-RPC; the user reads one
    line, fuseforks', a few seconds after the first such line, and the turn is not sent."""
    config = tmp_path / "mcp.json"
    garbage = Path(__file__).parents[1] / "mcp" / "servers" / "garbage.py"
    config.write_text(json.dumps({"mcpServers": {"junk": {
        "command": sys.executable, "args": [str(garbage)]}}}))
    done = processes.run(
        [sys.executable, "-m", "fuseforks", "run", "--wire", "anthropic", "--model",
         "claude-sonnet-5-5", "--base-url", f"{simulator}/anthropic", "--mcp-config", str(config),
         "--no-stream", "--db", str(tmp_path / "run.db"), "--log",
         str(tmp_path / "run.log"), "hi"], capture_output=True, text=True, timeout=300,
        env={k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        | {"ANTHROPIC_API_KEY": KEY})
    assert done.returncode == 1, done.stderr
    said = [line for line in done.stderr.splitlines() if "junk" in line]
    assert said == ["Error: not sent: server 'junk' writes to stdout what is not JSON-RPC (its "
                    "first line: 'Usage: camera-tool [--live] [--status]') and did not complete "
                    "the MCP handshake within 3 s of it (--allow-missing-servers sends turns "
                    "without the tools of a server that did not start)"]
    assert "Traceback" not in done.stderr and "JSONRPC" not in done.stderr


@pytest.mark.parametrize(("wire", "model", "prefix", "env"), [
    ("bedrock-converse", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "/bedrock",
     {"AWS_BEARER_TOKEN_BEDROCK": KEY}),
    ("vertex-gemini", "gemini-3.8-flash",
     "/vertex/v1/projects/fuseforks-sim/locations/us-central1", {}),
    ("vertex-anthropic", "claude-sonnet-5-5",
     "/vertex/v1/projects/fuseforks-sim/locations/us-east5", {}),
    ("azure-chat", "gpt-5.5", "/azure", {"AZURE_OPENAI_API_KEY": KEY}),
    ("azure-responses", "gpt-5.5", "/azure", {"AZURE_OPENAI_API_KEY": KEY}),
    ("ollama", "qwen2.5vl:7b", "/ollama/v1", {}),
    ("vllm", "Qwen/Qwen2.5-VL-7B-Instruct", "/vllm/v1", {}),
    ("llamacpp", "gemma-3-4b-it", "/llamacpp/v1", {}),
    ("lmstudio", "qwen2.5-vl-7b-instruct", "/lmstudio/v1", {}),
])
def test_a_cloud_or_local_wire_runs_a_camera_turn(simulator: str, tmp_path: Path, wire: str,
                                                  model: str, prefix: str,
                                                  env: dict[str, str]) -> None:
    done = run(tmp_path, "--wire", wire, "--model", model, "--base-url", simulator + prefix,
               "--agent", "cloud", "Take a picture.", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "tool: agent=cloud round=1 name=nik__live_view_image ok=true body_chars=52 images=1",
        "I see 1 image. image 1: left half red, right half green.",
        f"turn: agent=cloud backend={wire} model={model} rounds=2 stop=answered",
    ]
    for path in (tmp_path / "run.db", tmp_path / "run.log"):
        assert KEY.encode() not in path.read_bytes()
