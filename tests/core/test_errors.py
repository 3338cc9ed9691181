"""One error tree: every exception fuseforks raises for a caller derives from `FuseforksError`,
is drawn in `fuseforks.core.errors` and is importable from `fuseforks`."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from pathlib import Path

import pytest

import fuseforks
from fuseforks.core import errors
from fuseforks.wires.registry import get_wire

PACKAGE = Path(fuseforks.__file__).resolve().parent

INTERNAL = {
    "images/probe.py": {"ProbeError"},  # a bad header: normalization drops the image for it
    "images/reencode.py": {"DeclaredTooLarge"},  # over the decode budget: dropped as too_large
    "mcp/sse.py": {"SseEndpointError"},  # the SSE transport's own: a server's fault reason
    "simulator/shapes.py": {"Invalid"},  # the simulator's check of a request: its 400 body
    "engine/replay.py": {"ReplayExhausted"},  # a WireError the re-driven engine meets
    "stores/sql.py": {"EmptyDatabase"},  # met as the CorruptStoreError it is; `inspect` reads 0
    "console/app.py": {"Refused"},  # a page that cannot be shown: its HTTP status and sentence
    "console/server.py": {"NeedsToken"},  # serve()'s own guard; the command refuses before it
    "wires/eventstream.py": {"FramingError"},  # bad Bedrock stream bytes: met as WireGarbage
    "mcp/login.py": {"LoginDenied"},  # inside the SDK's flow: the login's one-line reason
}
"""Exceptions that never reach a caller: each is caught where it is raised, or turned into
what the record says."""


def _tree() -> list[type[BaseException]]:
    return [value for value in vars(errors).values()
            if inspect.isclass(value) and issubclass(value, BaseException)
            and value.__module__ == errors.__name__]


def test_every_error_of_the_tree_derives_from_fuseforks_error_and_is_exported() -> None:
    tree = _tree()
    assert len(tree) >= 19
    assert all(issubclass(error, fuseforks.FuseforksError) for error in tree)
    assert {e.__name__ for e in tree} <= set(fuseforks.__all__)
    assert all(getattr(fuseforks, e.__name__) is e for e in tree)


def test_no_other_module_defines_an_error_a_caller_can_meet() -> None:
    defined: dict[str, set[str]] = {}
    exceptions = {"Exception", "ValueError", "ConnectionError", "RuntimeError", "KeyError",
                  "OSError", "TypeError", *(e.__name__ for e in _tree())}
    for path in PACKAGE.rglob("*.py"):
        relative = str(path.relative_to(PACKAGE))
        if relative == "core/errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.ClassDef) and not node.name.startswith("_")
                    and any(isinstance(b, ast.Name) and b.id in exceptions for b in node.bases)):
                defined.setdefault(relative, set()).add(node.name)
    assert defined == INTERNAL


def test_an_unknown_wire_is_our_error() -> None:
    with pytest.raises(fuseforks.UnknownName, match="unknown wire 'carrier-pigeon'; known: "
                                                    "anthropic, openai-compat") as raised:
        get_wire("carrier-pigeon")
    assert isinstance(raised.value, fuseforks.FuseforksError)
    assert isinstance(raised.value, ValueError)  # a bad argument, as before


def test_a_wire_error_is_a_fuseforks_error() -> None:
    refused = fuseforks.WireRejected(wire="anthropic", status=400, error_class="client_error")
    assert isinstance(refused, fuseforks.WireError)
    assert isinstance(refused, fuseforks.FuseforksError)
    assert isinstance(fuseforks.ConfigError("x"), fuseforks.FuseforksError)


BUILT_IN_RAISES = {
    # A bug in the calling code, as Python's own libraries say it: not a condition to handle.
    "agent/stream.py": 2,  # the stream's result read before its end, or outside `async with`
    "agent/agent.py": 1,  # the agent used outside `async with`
    "stores/store.py": 2,  # an empty batch, or two turns in one: the caller's bug
    "events/sequencer.py": 1,  # a sealed batch built with the wrong number of bodies
    "engine/replay.py": 1,  # a list of events that is not one turn's record
    "engine/session_replay.py": 1,  # the same for a gateway session
    "core/texts.py": 6,  # a note asked for with a kind, reason or number no caller has
    "core/errors.py": 1,  # a WireRejected built with contradicting fields
    "wires/base.py": 1,  # a placement the wire cannot encode (the image rules say ValueError)
    "demo/camera.py": 1,  # a frame number below 1
    "simulator/brain.py": 1,  # a test's script with arguments that are not an object
}
"""Where fuseforks raises a plain `ValueError` or `RuntimeError`, and why. Anything a caller can
meet and handle — a setting out of range, an unknown name, a token too short, a filter it
cannot read — is a `FuseforksError` (`ConfigError` and `UnknownName` are `ValueError`s too)."""


def test_a_plain_value_or_runtime_error_is_a_bug_in_the_calling_code() -> None:
    raised: dict[str, int] = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                    and isinstance(node.exc.func, ast.Name)
                    and node.exc.func.id in ("ValueError", "RuntimeError")):
                relative = str(path.relative_to(PACKAGE))
                raised[relative] = raised.get(relative, 0) + 1
    assert raised == BUILT_IN_RAISES


@pytest.mark.parametrize(("make", "kind"), [
    (lambda: fuseforks.AgentSettings(max_rounds=0), fuseforks.ConfigError),
    (lambda: fuseforks.AgentSettings(image_cap=-1), fuseforks.ConfigError),
    (lambda: fuseforks.HistoryBudget(max_chars=-1), fuseforks.ConfigError),
])
def test_a_setting_out_of_range_is_a_config_error(make: Callable[[], object],
                                                 kind: type[Exception]) -> None:
    with pytest.raises(kind) as raised:
        make()
    assert isinstance(raised.value, ValueError)  # as before: a bad argument
