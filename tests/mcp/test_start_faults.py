"""Servers that do not start say why in one line, soon: how the process ended and the last lines
it wrote to stderr (its secrets taken out), or the line that shows it does not speak JSON-RPC —
a few seconds after that line, not at the end of the start timeout. A server that prints a banner
before its handshake, as real ones do, still starts."""

from __future__ import annotations

import shutil
import time

from fuseforks.mcp import StdioServer, ToolHub
from fuseforks.ports.tools import ToolOutput
from tests.helpers.npm import node_modules
from tests.mcp.conftest import PYTHON, SERVERS

TOKEN = "tok-5f8a1c9e2b7d4e6f"


def python(name: str, program: str, env: dict[str, str] | None = None) -> StdioServer:
    return StdioServer(name=name, command=PYTHON, args=["-c", program], env=env or {})


async def test_a_server_that_exits_says_its_exit_status_and_its_last_lines() -> None:
    program = ("import sys\nprint('loading settings', file=sys.stderr)\n"
               "print('Traceback (most recent call last):', file=sys.stderr)\n"
               "print('  File \"server.py\", line 3', file=sys.stderr)\n"
               "print('KeyError: API_TOKEN', file=sys.stderr)\nsys.exit(2)")
    async with ToolHub([python("quit", program)]) as hub:
        faults = dict(hub.start_faults)
    assert faults == {"quit": "server 'quit' exited before completing the MCP handshake (exit "
                              "status 2; stderr: Traceback (most recent call last): | File "
                              "\"server.py\", line 3 | KeyError: API_TOKEN)"}


async def test_a_server_killed_at_start_says_by_which_signal() -> None:
    program = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
    async with ToolHub([python("killed", program)]) as hub:
        faults = dict(hub.start_faults)
    assert faults == {"killed": "server 'killed' exited before completing the MCP handshake "
                                "(killed by signal 9)"}


async def test_its_secrets_never_reach_the_reason() -> None:
    program = ("import os, sys\nprint('refused: token ' + os.environ['API_TOKEN'] + ' expired', "
               "file=sys.stderr)\nsys.exit(1)")
    async with ToolHub([python("vault", program, {"API_TOKEN": TOKEN})]) as hub:
        faults = dict(hub.start_faults)
    assert faults == {"vault": "server 'vault' exited before completing the MCP handshake (exit "
                               "status 1; stderr: refused: token [secret: vault.API_TOKEN] "
                               "expired)"}


async def test_a_program_that_is_no_mcp_server_is_given_up_on_within_seconds() -> None:
    """A web server configured by mistake: it announces itself on stdout and serves on."""
    server = StdioServer(name="web", command=PYTHON,
                         args=["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
    started = time.monotonic()
    async with ToolHub([server]) as hub:
        waited = time.monotonic() - started
        faults = dict(hub.start_faults)
    (reason,) = faults.values()
    assert reason.startswith("server 'web' writes to stdout what is not JSON-RPC (its first "
                             "line: 'Serving HTTP on 127.0.0.1 port ")
    assert reason.endswith(") and did not complete the MCP handshake within 3 s of it")
    assert 2.9 <= waited < 10  # not the start timeout's 30 s


async def test_a_program_that_prints_its_usage_and_exits_says_both() -> None:
    server = StdioServer(name="usage", command=PYTHON, args=["-m", "http.server", "--help"])
    async with ToolHub([server]) as hub:
        faults = dict(hub.start_faults)
    (reason,) = faults.values()
    assert reason.startswith("server 'usage' exited before completing the MCP handshake (exit "
                             "status 0; stdout: 'usage: ")
    assert reason.endswith("' is not JSON-RPC)")


async def test_a_server_with_a_banner_on_stdout_starts_and_works() -> None:
    """The official TypeScript SDK's server, with dotenv 17's line and a console.log first."""
    node = shutil.which("node")
    assert node is not None, "the tests need Node.js"
    server = StdioServer(name="banner", command=node, args=[str(SERVERS / "banner.cjs")],
                         env={"NODE_PATH": str(node_modules())})
    async with ToolHub([server]) as hub:
        faults = dict(hub.start_faults)
        output = await hub.call("banner__ping", {}, "en")
    assert (faults, output) == ({}, ToolOutput(text="pong"))


async def test_a_python_server_with_a_banner_starts_and_works() -> None:
    """A banner printed before the SDK's server takes stdout over."""
    program = (f"import runpy, sys\nprint('*** camera server 1.0 ***', flush=True)\n"
               f"sys.argv = ['camera']\nrunpy.run_path({str(SERVERS / 'slow_start.py')!r}, "
               "run_name='__main__')")
    async with ToolHub([python("bannered", program, {"SLOW_START_SECONDS": "0"})]) as hub:
        faults = dict(hub.start_faults)
        output = await hub.call("bannered__ping", {}, "en")
    assert (faults, output) == ({}, ToolOutput(text="pong"))
