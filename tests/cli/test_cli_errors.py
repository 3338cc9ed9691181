"""Every command through its error paths: missing, unreadable, wrong-kind and foreign files, and
bad arguments. Each ends in exactly one line on stderr — no traceback — and exit code 2 for a
usage error or 1 for a failure; and nothing is created or written on the way."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from fuseforks.cli import COMMANDS, main
from fuseforks.stores.sqlite import SQLITE_STORE_VERSION, SqliteStore
from tests.cli.crafted import REPLAYS, foreign_database, newer_store
from tests.helpers import processes
from tests.helpers.streams import import_stream

NOTES = b"these are my notes, not a database\n"


@dataclass
class Files:
    root: Path
    missing: Path
    notes: Path
    other: Path
    newer: Path
    folder: Path
    stream: Path
    store: Path
    photo: Path
    damaged: Path


@pytest.fixture
def files(tmp_path: Path) -> Files:
    (tmp_path / "notes.db").write_bytes(NOTES)
    (tmp_path / "folder").mkdir()
    stream = tmp_path / "p4-anthropic.jsonl"
    shutil.copy(REPLAYS / "p4-anthropic.jsonl", stream)
    store = tmp_path / "store.db"
    with SqliteStore(store) as opened:
        for name in ("p4-anthropic", "p4-gemini"):
            import_stream(opened, REPLAYS / f"{name}.jsonl")
    lines = stream.read_bytes().splitlines(keepends=True)
    (tmp_path / "damaged.jsonl").write_bytes(b"".join(lines[:5] + lines[6:]))
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0" + bytes(200))
    os.mkfifo(tmp_path / "pipe")
    for name, content in CONFIGS.items():
        (tmp_path / f"{name}.json").write_bytes(content)
    return Files(root=tmp_path, missing=tmp_path / "missing.db", notes=tmp_path / "notes.db",
                 other=foreign_database(tmp_path / "other-app.db"),
                 newer=newer_store(tmp_path / "newer.db"), folder=tmp_path / "folder",
                 stream=stream, store=store,
                 photo=tmp_path / "photo.jpg", damaged=tmp_path / "damaged.jsonl")


@dataclass(frozen=True)
class Line:
    """The one line on stderr when fuseforks frames another library's words (click's usage
    messages, msgspec's, sqlite3's, libpq's): fuseforks' own start and end exactly, and in
    between only what went wrong, by name — never the library's wording, which a release may
    change."""
    starts: str
    ends: str = ""
    names: tuple[str, ...] = ()


@dataclass
class Case:
    command: str
    args: Callable[[Files], list[str]]
    code: int
    stderr: Callable[[Files], str | Line]
    """The one line on stderr: exactly, when fuseforks writes all of it."""


def assert_one_line(stderr: str, expected: str | Line) -> None:
    lines = stderr.splitlines()
    if isinstance(expected, str):
        assert lines == [expected]
        return
    assert len(lines) == 1, lines
    [line] = lines
    assert line.startswith(expected.starts), line
    assert line.endswith(expected.ends), line
    for name in expected.names:
        assert name in line, (name, line)


def usage(command: str, text: str) -> str:
    """A usage error whose text fuseforks writes, in fuseforks' frame."""
    return f"Error: {text} Try 'fuseforks {command} --help'."


def click_usage(command: str, *names: str) -> Line:
    """A usage error click words (a missing file, an unknown option, a value out of range): in
    fuseforks' frame, naming the option, value or path at fault."""
    return Line("Error: ", f" Try 'fuseforks {command} --help'.", names)


def bad_value(command: str, option: str, text: str) -> Line:
    """fuseforks' own words about a value, inside click's "invalid value" wording for `option`."""
    return Line("Error: ", f" {text}. Try 'fuseforks {command} --help'.", (option,))


def not_sqlite(path: Path) -> Line:
    """sqlite3's reason is its own; fuseforks names the file and says nothing changed."""
    return Line(f"Error: {path}: not a readable SQLite database (", "); nothing was changed")


def foreign(path: Path) -> str:
    return (f"Error: {path}: an SQLite database, but not a fuseforks store (it has tables "
            "['invoices'] and no fuseforks_meta); nothing was changed")


def newer(path: Path) -> str:
    return (f"Error: {path}: store version 99 was written by a newer fuseforks (this one reads "
            f"up to {SQLITE_STORE_VERSION}); nothing was changed")


def not_a_stream(path: Path) -> str:
    return f"Error: {path}: not a JSON Lines event stream (its first line is not a JSON object)"


def not_a_record(path: Path) -> str:
    """A command reading turns, given a file that is neither kind it reads."""
    kind = "a JPEG image" if path.suffix == ".jpg" else "text"
    return (f"Error: {path}: {kind}, neither a fuseforks store (an SQLite database) nor an event "
            "stream (JSON Lines)")


def not_json(path: Path) -> Line:
    """The decoder's reason, in parentheses after fuseforks' verdict."""
    return Line(f"Error: {path}: not valid JSON (", ")")


def missing_file(command: str, what: str, path: Path) -> Line:
    return click_usage(command, what, str(path))


def a_folder(command: str, what: str, path: Path) -> Line:
    return click_usage(command, what, str(path))


CONFIGS = {
    "not-json": b"{not json",
    "a-list": b"[]",
    "no-mcp-servers": b'{"servers": {}}',
    "no-command": b'{"mcpServers": {"cam": {}}}',
    "unset-variable": b'{"mcpServers": {"cam": {"command": "cam", "env": {"K": "${FF_UNSET_9}"}}}}',
    "not-utf-8": b'\xff\xfe{"mcpServers": {}}',
}
"""MCP configuration files a user gets wrong, by name."""

CONFIG_ERRORS = {
    "a-list": 'the configuration must be an object with an "mcpServers" object',
    "no-mcp-servers": 'the configuration must be an object with an "mcpServers" object',
    "no-command": 'mcpServers.cam needs either "command" (stdio) or "url" (streamable HTTP)',
    "unset-variable": "mcpServers.cam.env.K: environment variable FF_UNSET_9 is not set",
    "not-utf-8": "not UTF-8 text (byte 0)",
}


def config_case(command: str, name: str) -> Case:
    def args(f: Files) -> list[str]:
        path = str(f.root / f"{name}.json")
        if command == "worker":
            return ["worker", "--db", UNREACHABLE, "--nats", NO_BUS, "--mcp-config", path]
        if command == "chat":
            return ["chat", "--wire", "openai-compat", "--model", "m", *LOOPBACK,
                    "--mcp-config", path]
        return run_args("--mcp-config", path)(f)

    def stderr(f: Files) -> str | Line:
        path = f.root / f"{name}.json"
        return not_json(path) if name == "not-json" else f"Error: {path}: {CONFIG_ERRORS[name]}"

    return Case(command, args, 1, stderr)


UNREACHABLE = "postgresql://fuseforks:hunter2-secret@127.0.0.1:9/agents"
"""A PostgreSQL URL where no server listens (port 9, discard)."""
UNREACHABLE_SHOWN = "postgresql://fuseforks:***@127.0.0.1:9/agents"
REFUSED = Line(f"Error: {UNREACHABLE_SHOWN}: cannot connect to PostgreSQL (", ")")
"""libpq's reason is its own; fuseforks names the server without its password."""
SECRETS = ("hunter2-secret", "bus-secret-77", "tok-bus-secret-88", "db-secret-55")
"""The passwords and tokens the cases give: never on a terminal."""

NO_BUS = "nats://127.0.0.1:9"
"""A NATS URL where no server listens."""

LOOPBACK = ["--base-url", "http://127.0.0.1:9/v1"]
"""A provider on this machine: `run` needs no key for it, and gets to check its files."""


def run_args(*extra: str) -> Callable[[Files], list[str]]:
    return lambda f: ["run", "--wire", "openai-compat", "--model", "m", *LOOPBACK, *extra, "hi"]


CASES: dict[str, Case] = {
    # --- replay
    "replay missing": Case("replay", lambda f: ["replay", str(f.missing)], 2,
                           lambda f: missing_file("replay", "SOURCE", f.missing)),
    "replay folder": Case("replay", lambda f: ["replay", str(f.folder)], 2,
                          lambda f: a_folder("replay", "SOURCE", f.folder)),
    "replay notes": Case("replay", lambda f: ["replay", str(f.notes)], 1,
                         lambda f: not_a_record(f.notes)),
    "replay photo": Case("replay", lambda f: ["replay", str(f.photo)], 1,
                         lambda f: not_a_record(f.photo)),
    "replay foreign": Case("replay", lambda f: ["replay", str(f.other)], 1,
                           lambda f: foreign(f.other)),
    "replay newer": Case("replay", lambda f: ["replay", str(f.newer)], 1,
                         lambda f: newer(f.newer)),
    "replay unknown turn": Case(
        "replay", lambda f: ["replay", str(f.store), "--turn", "nope"], 1,
        lambda f: f"Error: {f.store}: no turn 'nope' (fuseforks turns {f.store} lists them)"),
    "replay ambiguous turn": Case(
        "replay", lambda f: ["replay", str(f.store), "--turn", "p4-"], 1,
        lambda f: f"Error: {f.store}: turn 'p4-' is ambiguous: 2 turns begin with it: "
                  "p4-anthropic, p4-gemini"),
    "replay verify damaged": Case(
        "replay", lambda f: ["replay", str(f.damaged), "--verify", "--json"], 1,
        lambda f: "Error: 1 of 1 turns diverged from today's engine: p4-anthropic"),
    "replay bad option": Case("replay", lambda f: ["replay", str(f.stream), "--bogus"], 2,
                              lambda f: click_usage("replay", "--bogus")),
    # --- log
    "log missing": Case("log", lambda f: ["log", str(f.missing)], 2,
                        lambda f: missing_file("log", "SOURCE", f.missing)),
    "log notes": Case("log", lambda f: ["log", str(f.notes)], 1, lambda f: not_a_record(f.notes)),
    "log foreign": Case("log", lambda f: ["log", str(f.other)], 1, lambda f: foreign(f.other)),
    "log unknown turn": Case(
        "log", lambda f: ["log", str(f.stream), "--turn", "p5"], 1,
        lambda f: f"Error: {f.stream}: no turn 'p5' (fuseforks turns {f.stream} lists them)"),
    "log no source": Case("log", lambda f: ["log"], 2,
                          lambda f: usage("log", "Missing argument 'SOURCE' (or use --follow).")),
    "log follow without bus": Case(
        "log", lambda f: ["log", "--follow"], 2,
        lambda f: usage("log", "--follow needs --nats URL (or FUSEFORKS_NATS).")),
    "log follow unreachable": Case(
        "log", lambda f: ["log", "--follow", "--nats", NO_BUS], 1,
        lambda f: f"Error: cannot reach NATS at {NO_BUS}: connection refused"),
    # --- submit
    "submit unknown wire": Case(
        "submit", lambda f: ["submit", "--nats", NO_BUS, "--wire", "pigeon", "--model", "m", "x"],
        2, lambda f: bad_value("submit", "--wire", "unknown wire 'pigeon'; known: anthropic, "
                               "openai-compat, gemini, openai-responses, xai-responses, "
                               "meta-responses, perplexity-responses, bedrock-converse, "
                               "vertex-gemini, vertex-anthropic, azure-chat, azure-responses, "
                               "ollama, vllm, llamacpp, lmstudio")),
    "submit unreachable": Case(
        "submit", lambda f: ["submit", "--nats", NO_BUS, "--wire", "anthropic", "--model", "m",
                             "x"],
        1, lambda f: f"Error: cannot reach NATS at {NO_BUS}: connection refused"),
    "submit unreachable with a password": Case(
        "submit", lambda f: ["submit", "--nats", "nats://alice:bus-secret-77@127.0.0.1:9",
                             "--wire", "anthropic", "--model", "m", "x"],
        1, lambda f: "Error: cannot reach NATS at nats://alice:***@127.0.0.1:9: connection refused"),
    "submit unreachable with a token": Case(
        "submit", lambda f: ["submit", "--nats", "nats://tok-bus-secret-88@127.0.0.1:9",
                             "--wire", "anthropic", "--model", "m", "x"],
        1, lambda f: "Error: cannot reach NATS at nats://***@127.0.0.1:9: connection refused"),
    # --- worker
    "worker sqlite store": Case(
        "worker", lambda f: ["worker", "--db", str(f.store), "--nats", NO_BUS], 2,
        lambda f: bad_value("worker", "--db", f"'{f.store}' is not a PostgreSQL URL (workers "
                            "share one store)")),
    "worker another database's url": Case(
        "worker", lambda f: ["worker", "--db", "mysql://me:db-secret-55@db.example.com/agents",
                             "--nats", NO_BUS], 2,
        lambda f: bad_value("worker", "--db", "'mysql://me:***@db.example.com/agents' is not a "
                            "PostgreSQL URL (workers share one store)")),
    "worker bad base url": Case(
        "worker", lambda f: ["worker", "--db", UNREACHABLE, "--nats", NO_BUS, "--base-url",
                             "anthropic"], 2,
        lambda f: bad_value("worker", "--base-url", "'anthropic' is not WIRE=URL")),
    "worker unreachable store": Case(
        "worker", lambda f: ["worker", "--db", UNREACHABLE, "--nats", NO_BUS], 1,
        lambda f: REFUSED),
    # --- turns
    "turns missing": Case("turns", lambda f: ["turns", str(f.missing)], 2,
                          lambda f: missing_file("turns", "SOURCE", f.missing)),
    "turns photo": Case("turns", lambda f: ["turns", str(f.photo)], 1,
                        lambda f: not_a_record(f.photo)),
    "turns foreign": Case("turns", lambda f: ["turns", str(f.other)], 1,
                          lambda f: foreign(f.other)),
    "turns newer": Case("turns", lambda f: ["turns", str(f.newer)], 1, lambda f: newer(f.newer)),
    # --- rebuild
    "rebuild missing": Case("rebuild", lambda f: ["rebuild", str(f.missing)], 1,
                            lambda f: f"Error: {f.missing}: no store there; nothing was changed"),
    "rebuild foreign": Case("rebuild", lambda f: ["rebuild", str(f.other)], 1,
                            lambda f: foreign(f.other)),
    "rebuild newer": Case("rebuild", lambda f: ["rebuild", str(f.newer)], 1,
                          lambda f: newer(f.newer)),
    # --- clients
    "clients missing": Case("clients", lambda f: ["clients", str(f.missing)], 2,
                            lambda f: missing_file("clients", "SOURCE", f.missing)),
    "clients foreign": Case("clients", lambda f: ["clients", str(f.other)], 1,
                            lambda f: foreign(f.other)),
    "clients notes": Case("clients", lambda f: ["clients", str(f.notes)], 1,
                          lambda f: not_a_record(f.notes)),
    "clients since yesterday": Case(
        "clients", lambda f: ["clients", str(f.store), "--since", "yesterday"], 2,
        lambda f: bad_value("clients", "--since", "'yesterday' is neither an ISO-8601 time "
                                "(2026-11-30T08:48:54Z, 2026-11-30T09:48+01:00, 2026-11-30) nor "
                                "a duration back from now (30m, 2h, 7d)")),
    "clients nobody": Case(
        "clients", lambda f: ["clients", str(f.store), "--client", "nobody"], 1,
        lambda f: f"Error: no gateway client 'nobody' in {f.store}"),
    # --- audit
    "audit missing": Case("audit", lambda f: ["audit", str(f.missing)], 2,
                          lambda f: missing_file("audit", "SOURCE", f.missing)),
    "audit foreign": Case("audit", lambda f: ["audit", str(f.other)], 1,
                          lambda f: foreign(f.other)),
    "audit since yesterday": Case(
        "audit", lambda f: ["audit", str(f.store), "--since", "yesterday"], 2,
        lambda f: bad_value("audit", "--since", "'yesterday' is neither an ISO-8601 time "
                                "(2026-11-30T08:48:54Z, 2026-11-30T09:48+01:00, 2026-11-30) nor "
                                "a duration back from now (30m, 2h, 7d)")),
    "audit json and csv": Case(
        "audit", lambda f: ["audit", str(f.store), "--json", "--csv"], 2,
        lambda f: usage("audit", "--json and --csv cannot be used together.")),
    "audit unknown provider": Case(
        "audit", lambda f: ["audit", str(f.store), "--provider", "openai"], 2,
        lambda f: click_usage("audit", "--provider", "openai")),
    "audit short digest": Case(
        "audit", lambda f: ["audit", str(f.store), "--digest", "3fa"], 2,
        lambda f: bad_value("audit", "--digest", "'3fa' is not an image digest: give 4 to 64 "
                                "hex characters of its SHA-256")),
    "audit non-hex digest": Case(
        "audit", lambda f: ["audit", str(f.store), "--digest", "3fa2…"], 2,
        lambda f: bad_value("audit", "--digest", "'3fa2…' is not an image digest: give 4 to 64 "
                                "hex characters of its SHA-256")),
    # --- export
    "export missing": Case("export", lambda f: ["export", str(f.missing)], 2,
                           lambda f: missing_file("export", "SOURCE", f.missing)),
    "export notes": Case("export", lambda f: ["export", str(f.notes)], 1,
                         lambda f: not_a_record(f.notes)),
    "export foreign": Case("export", lambda f: ["export", str(f.other)], 1,
                           lambda f: foreign(f.other)),
    "export nowhere": Case(
        "export", lambda f: ["export", str(f.store), "-o", "/nonexistent/all.jsonl"], 1,
        lambda f: "Error: /nonexistent/all.jsonl: cannot create the output: no directory "
                  "/nonexistent"),
    "export unknown turn": Case(
        "export", lambda f: ["export", str(f.store), "--turn", "p5"], 1,
        lambda f: f"Error: {f.store}: no turn 'p5' (fuseforks turns {f.store} lists them)"),
    # --- import
    "import missing": Case("import", lambda f: ["import", str(f.missing)], 2,
                           lambda f: missing_file("import", "STREAM", f.missing)),
    "import a store": Case(
        "import", lambda f: ["import", str(f.store), "--db", str(f.root / "new.db")], 1,
        lambda f: f"Error: {f.store}: an SQLite store, not a JSON Lines stream; to copy its "
                  f"turns, export them first: fuseforks export {f.store} -o turns.jsonl"),
    "import notes": Case(
        "import", lambda f: ["import", str(f.notes), "--db", str(f.root / "new.db")], 1,
        lambda f: not_a_stream(f.notes)),
    "import into notes": Case("import", lambda f: ["import", str(f.stream), "--db", str(f.notes)],
                              1, lambda f: not_sqlite(f.notes)),
    "import into foreign": Case(
        "import", lambda f: ["import", str(f.stream), "--db", str(f.other)], 1,
        lambda f: foreign(f.other)),
    "import into newer": Case(
        "import", lambda f: ["import", str(f.stream), "--db", str(f.newer)], 1,
        lambda f: newer(f.newer)),
    "import nowhere": Case(
        "import", lambda f: ["import", str(f.stream), "--db", "/nonexistent/x.db"], 1,
        lambda f: "Error: /nonexistent/x.db: cannot create the store: no directory /nonexistent"),
    "import into folder": Case(
        "import", lambda f: ["import", str(f.stream), "--db", str(f.folder)], 2,
        lambda f: a_folder("import", "--db", f.folder)),
    # --- copy
    "copy missing": Case("copy", lambda f: ["copy", str(f.missing), str(f.root / "new.db")], 2,
                         lambda f: missing_file("copy", "SOURCE", f.missing)),
    "copy no destination": Case("copy", lambda f: ["copy", str(f.store)], 2,
                                lambda f: click_usage("copy", "DESTINATION")),
    "copy into folder": Case(
        "copy", lambda f: ["copy", str(f.store), str(f.folder)], 2,
        lambda f: a_folder("copy", "DESTINATION", f.folder)),
    "copy onto itself": Case(
        "copy", lambda f: ["copy", str(f.store), str(f.store)], 1,
        lambda f: f"Error: {f.store}: the source and the destination are the same store; "
                  "nothing to copy"),
    "copy from notes": Case("copy", lambda f: ["copy", str(f.notes), str(f.root / "new.db")], 1,
                            lambda f: not_a_record(f.notes)),
    "copy from foreign": Case("copy", lambda f: ["copy", str(f.other), str(f.root / "new.db")],
                              1, lambda f: foreign(f.other)),
    "copy from newer": Case("copy", lambda f: ["copy", str(f.newer), str(f.root / "new.db")], 1,
                            lambda f: newer(f.newer)),
    "copy into notes": Case("copy", lambda f: ["copy", str(f.store), str(f.notes)], 1,
                            lambda f: not_sqlite(f.notes)),
    "copy into foreign": Case("copy", lambda f: ["copy", str(f.stream), str(f.other)], 1,
                              lambda f: foreign(f.other)),
    "copy into newer": Case("copy", lambda f: ["copy", str(f.store), str(f.newer)], 1,
                            lambda f: newer(f.newer)),
    "copy nowhere": Case(
        "copy", lambda f: ["copy", str(f.store), "/nonexistent/x.db"], 1,
        lambda f: "Error: /nonexistent/x.db: cannot create the store: no directory /nonexistent"),
    "copy into an unreachable server": Case(
        "copy", lambda f: ["copy", str(f.store), UNREACHABLE], 1,
        lambda f: REFUSED),
    "copy from an unreachable server": Case(
        "copy", lambda f: ["copy", UNREACHABLE, str(f.root / "new.db")], 1,
        lambda f: REFUSED),
    "turns on an unreachable server": Case(
        "turns", lambda f: ["turns", UNREACHABLE], 1,
        lambda f: REFUSED),
    "import into an unreachable server": Case(
        "import", lambda f: ["import", str(f.stream), "--db", UNREACHABLE], 1,
        lambda f: REFUSED),
    # --- run
    "run max rounds 0": Case("run", run_args("--max-rounds", "0"), 2,
                             lambda f: click_usage("run", "--max-rounds", "0")),
    "run max rounds -1": Case("run", run_args("--max-rounds", "-1"), 2,
                              lambda f: click_usage("run", "--max-rounds", "-1")),
    "run no key": Case(
        "run", lambda f: ["run", "--wire", "gemini", "--model", "m", "hi"], 1,
        lambda f: "Error: no API key for gemini: set GEMINI_API_KEY or GOOGLE_API_KEY (a "
                  "provider on this machine, at 127.0.0.1 or localhost, needs none)"),
    "run remote base url without key": Case(
        "run", lambda f: ["run", "--wire", "openai-compat", "--model", "m", "--base-url",
                          "https://llm.example.com/v1", "hi"], 1,
        lambda f: "Error: no API key for openai-compat: set OPENAI_API_KEY (a provider on "
                  "this machine, at 127.0.0.1 or localhost, needs none)"),
    "run unknown wire": Case(
        "run", lambda f: ["run", "--wire", "openai", "--model", "m", "hi"], 2,
        lambda f: click_usage("run", "--wire", "openai")),
    "run no request": Case("run", lambda f: ["run", "--wire", "gemini", "--model", "m"], 2,
                           lambda f: click_usage("run", "REQUEST")),
    "run db notes": Case("run", lambda f: run_args("--db", str(f.notes),
                                                   "--log", str(f.root / "run.log"))(f), 1,
                         lambda f: not_sqlite(f.notes)),
    "run db foreign": Case("run", lambda f: run_args("--db", str(f.other),
                                                     "--log", str(f.root / "run.log"))(f), 1,
                           lambda f: foreign(f.other)),
    "run db nowhere": Case(
        "run", lambda f: run_args("--db", "/nonexistent/x.db", "--log",
                                  str(f.root / "run.log"))(f), 1,
        lambda f: "Error: /nonexistent/x.db: cannot create the store: no directory /nonexistent"),
    "run log nowhere": Case(
        "run", lambda f: run_args("--db", str(f.root / "run.db"), "--log",
                                  "/nonexistent/x.log")(f), 1,
        lambda f: "Error: /nonexistent/x.log: cannot create the log: no directory /nonexistent"),
    "run log folder": Case(
        "run", lambda f: run_args("--db", str(f.root / "run.db"), "--log", str(f.folder))(f), 2,
        lambda f: a_folder("run", "--log", f.folder)),
    "run missing mcp config": Case(
        "run", lambda f: run_args("--mcp-config", str(f.missing))(f), 2,
        lambda f: missing_file("run", "--mcp-config", f.missing)),
    **{f"run mcp config {name}": config_case("run", name) for name in CONFIGS},
    "run base url not a url": Case(
        "run", lambda f: ["run", "--wire", "anthropic", "--model", "m", "--base-url", "notaurl",
                          "hi"], 2,
        lambda f: bad_value("run", "--base-url", "'notaurl' is not an http:// or https:// URL")),
    "run base url ftp": Case(
        "run", lambda f: ["run", "--wire", "anthropic", "--model", "m", "--base-url",
                          "ftp://models.example.com/v1", "hi"], 2,
        lambda f: bad_value("run", "--base-url", "'ftp://models.example.com/v1' is not an http:// "
                                "or https:// URL")),
    "run empty model": Case(
        "run", lambda f: ["run", "--wire", "openai-compat", "--model", " ", *LOOPBACK, "hi"], 2,
        lambda f: bad_value("run", "--model", "must not be empty")),
    "run empty request": Case(
        "run", lambda f: ["run", "--wire", "openai-compat", "--model", "m", *LOOPBACK, ""], 2,
        lambda f: bad_value("run", "REQUEST", "must not be empty")),
    "run empty conversation": Case(
        "run", run_args("--conversation", ""), 2,
        lambda f: bad_value("run", "--conversation", "must not be empty (`new` starts a "
                                "conversation)")),
    "run unknown conversation": Case(
        "run", lambda f: run_args("--db", str(f.store), "--log", str(f.root / "r.log"),
                                  "--conversation", "conv-doesnotexist")(f), 1,
        lambda f: f"Error: {f.store}: no conversation 'conv-doesnotexist'; give --conversation "
                  "new to start one (or last to continue the latest)"),
    "run db named like a stream": Case(
        "run", run_args("--db", "turns.jsonl"), 1,
        lambda f: "Error: turns.jsonl: named like a JSON Lines stream, not a store (an SQLite "
                  "file or a PostgreSQL URL); fuseforks export writes streams"),
    "chat unknown conversation": Case(
        "chat", lambda f: ["chat", "--wire", "openai-compat", "--model", "m", *LOOPBACK, "--db",
                           str(f.store), "--log", str(f.root / "c.log"), "--conversation",
                           "conv-nope"], 1,
        lambda f: f"Error: {f.store}: no conversation 'conv-nope'; give --conversation new to "
                  "start one (or last to continue the latest)"),
    "copy into a stream": Case(
        "copy", lambda f: ["copy", str(f.store), str(f.root / "c.jsonl")], 2,
        lambda f: usage("copy", f"{f.root / 'c.jsonl'} names a JSON Lines stream, and copy writes "
                                f"into a store (an SQLite file or a PostgreSQL URL): write a "
                                f"stream with fuseforks export {f.store} -o {f.root / 'c.jsonl'}.")),
    "worker base url ftp": Case(
        "worker", lambda f: ["worker", "--db", UNREACHABLE, "--nats", NO_BUS, "--base-url",
                             "anthropic=ftp://x"], 2,
        lambda f: bad_value("worker", "--base-url", "'ftp://x' is not an http:// or https:// URL")),
    **{f"chat mcp config {name}": config_case("chat", name) for name in ("not-json", "a-list")},
    **{f"worker mcp config {name}": config_case("worker", name)
       for name in ("no-command", "not-utf-8")},
    # --- capabilities
    "capabilities missing": Case("capabilities", lambda f: ["capabilities", str(f.missing)], 2,
                                 lambda f: missing_file("capabilities", "SOURCE", f.missing)),
    "capabilities notes": Case("capabilities", lambda f: ["capabilities", str(f.notes)], 1,
                               lambda f: not_a_record(f.notes)),
    "capabilities foreign": Case("capabilities", lambda f: ["capabilities", str(f.other)], 1,
                                 lambda f: foreign(f.other)),
    # --- console (every check happens before it serves)
    "console missing": Case("console", lambda f: ["console", str(f.missing)], 2,
                            lambda f: missing_file("console", "SOURCE", f.missing)),
    "console notes": Case("console", lambda f: ["console", str(f.notes)], 1,
                          lambda f: not_a_record(f.notes)),  # as every reading command says
    "console foreign": Case("console", lambda f: ["console", str(f.other)], 1,
                            lambda f: foreign(f.other)),
    "console newer": Case("console", lambda f: ["console", str(f.newer)], 1,
                          lambda f: newer(f.newer)),
    "console unreachable server": Case(
        "console", lambda f: ["console", UNREACHABLE], 1,
        lambda f: REFUSED),
    "console elsewhere without a token": Case(
        "console", lambda f: ["console", str(f.store), "--host", "0.0.0.0"], 2,
        lambda f: usage("console", "serving on 0.0.0.0 lets other machines read the record: set "
                                   "FUSEFORKS_CONSOLE_TOKEN or give --token-file FILE (or serve "
                                   "on 127.0.0.1).")),
    # --- chat (the same checks as run, before any server starts)
    "chat no key": Case(
        "chat", lambda f: ["chat", "--wire", "gemini", "--model", "m"], 1,
        lambda f: "Error: no API key for gemini: set GEMINI_API_KEY or GOOGLE_API_KEY (a "
                  "provider on this machine, at 127.0.0.1 or localhost, needs none)"),
    "chat db foreign": Case(
        "chat", lambda f: ["chat", "--wire", "openai-compat", "--model", "m", "--base-url",
                           "http://127.0.0.1:9/v1", "--db", str(f.other), "--log",
                           str(f.root / "chat.log")], 1,
        lambda f: foreign(f.other)),
    "chat image cap -1": Case(
        "chat", lambda f: ["chat", "--wire", "gemini", "--model", "m", "--image-cap", "-1"], 2,
        lambda f: click_usage("chat", "--image-cap", "-1")),
    # --- demo (every check happens before the simulator or the camera starts)
    "demo db nowhere": Case(
        "demo", lambda f: ["demo", "--db", "/nonexistent/d.db", "--log", str(f.root / "d.log")], 1,
        lambda f: "Error: /nonexistent/d.db: cannot create the store: no directory /nonexistent"),
    "demo db notes": Case("demo", lambda f: ["demo", "--db", str(f.notes), "--log",
                                             str(f.root / "d.log")], 1,
                          lambda f: not_sqlite(f.notes)),
    "demo db foreign": Case("demo", lambda f: ["demo", "--db", str(f.other), "--log",
                                               str(f.root / "d.log")], 1,
                            lambda f: foreign(f.other)),
    "demo log nowhere": Case(
        "demo", lambda f: ["demo", "--db", str(f.root / "d.db"), "--log", "/nonexistent/d.log"], 1,
        lambda f: "Error: /nonexistent/d.log: cannot create the log: no directory /nonexistent"),
    "demo language": Case(
        "demo", lambda f: ["demo", "--language", "fr"], 2,
        lambda f: click_usage("demo", "--language", "fr")),
    # --- simulator
    "simulator port": Case("simulator", lambda f: ["simulator", "--port", "70000"], 2,
                           lambda f: click_usage("simulator", "--port", "70000")),
    "simulator rounds": Case("simulator", lambda f: ["simulator", "--rounds", "-1"], 2,
                             lambda f: click_usage("simulator", "--rounds", "-1")),
    # --- image and mcp
    "image missing": Case("image", lambda f: ["image", "inspect", str(f.missing)], 2,
                          lambda f: missing_file("image inspect", "FILES...", f.missing)),
    "image fifo": Case("image", lambda f: ["image", "inspect", str(f.root / "pipe")], 2,
                       lambda f: bad_value("image inspect", "FILES",
                                           f"{f.root / 'pipe'} is a FIFO, not a file")),
    "image no file": Case("image", lambda f: ["image", "inspect"], 2,
                          lambda f: click_usage("image inspect", "FILES")),
    "mcp missing config": Case(
        "mcp", lambda f: ["mcp", "tools", "--config", str(f.missing)], 2,
        lambda f: missing_file("mcp tools", "--config", f.missing)),
    "mcp config notes": Case(
        "mcp", lambda f: ["mcp", "tools", "--config", str(f.notes)], 1,
        lambda f: not_json(f.notes)),
    "mcp call without tool": Case("mcp", lambda f: ["mcp", "call"], 2,
                                  lambda f: usage("mcp call", "missing TOOL.")),
    # --- gateway
    "gateway no config": Case("gateway", lambda f: ["gateway"], 2,
                              lambda f: click_usage("gateway", "--config")),
    "gateway missing config": Case(
        "gateway", lambda f: ["gateway", "--config", str(f.missing)], 2,
        lambda f: missing_file("gateway", "--config", f.missing)),
    "gateway config notes": Case(
        "gateway", lambda f: ["gateway", "--config", str(f.notes)], 1,
        lambda f: not_json(f.notes)),
    "audit client and provider": Case(
        "audit", lambda f: ["audit", str(f.store), "--client", "claude-code", "--provider",
                            "gemini"], 2,
        lambda f: usage("audit", "--client names a gateway client: it cannot be combined with "
                                 "--provider or --model.")),
    # --- cluster
    "cluster no workers": Case("cluster", lambda f: ["cluster", "--workers", "0"], 2,
                               lambda f: click_usage("cluster", "--workers", "0")),
    "cluster nats port": Case("cluster", lambda f: ["cluster", "--nats-port", "0"], 2,
                              lambda f: click_usage("cluster", "--nats-port", "0")),
    # --- the group itself
    "unknown command": Case("fuseforks", lambda f: ["replays"], 2,
                            lambda f: Line("Error: ", " Try 'fuseforks --help'.", ("replays",))),
}


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` with its content's digest (and mtime): what a command changed."""
    return {
        str(p.relative_to(root)): f"{hashlib.sha256(p.read_bytes()).hexdigest()} {p.stat().st_mtime_ns}"
        for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_the_cases_cover_every_command() -> None:
    assert {case.command for case in CASES.values()} == {*COMMANDS, "fuseforks"}


@pytest.mark.parametrize("name", CASES)
def test_one_line_and_an_exit_code_and_nothing_written(name: str, files: Files,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    for variable in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(files.root)
    before = snapshot(files.root)
    result = CliRunner().invoke(main, case.args(files))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.exit_code == case.code, result.stderr
    assert_one_line(result.stderr, case.stderr(files))
    assert not any(secret in result.output for secret in SECRETS)
    if name != "replay verify damaged":  # its report is on stdout; the verdict is the error
        assert result.stdout == ""
    assert snapshot(files.root) == before


def test_a_replay_of_a_damaged_stream_names_the_gap_on_stdout(files: Files) -> None:
    result = CliRunner().invoke(main, ["replay", str(files.damaged), "--verify"])
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == (
        '  verify: DIVERGED at seq 6: the recording has no event 6: seq 5 is followed by seq 7; '
        'produced {"kind":"ToolResultRecorded","round":1,"call_id":"toolu_0001_0",'
        '"name":"nik__live_view_image","ok":true,"body":"{\\"height\\":424,\\"jpeg_bytes\\":5108,'
        '\\"seq\\":1,\\"width\\":640}"}')


PROCESS_CASES = ["run mcp config not-json", "worker mcp config no-command", "run log nowhere", "run db foreign", "demo db notes", "replay verify damaged",
                 "import into notes", "audit since yesterday", "copy into an unreachable server",
                 "console foreign"]


@pytest.mark.parametrize("name", PROCESS_CASES)
def test_the_same_in_a_real_process(name: str, files: Files) -> None:
    """The installed entry point too: what a user's shell sees."""
    case = CASES[name]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    before = snapshot(files.root)
    done = processes.run([sys.executable, "-m", "fuseforks", *case.args(files)], cwd=files.root,
                          capture_output=True, text=True, timeout=60, env=env)
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode == case.code, done.stderr
    assert_one_line(done.stderr, case.stderr(files))
    assert not any(secret in done.stdout + done.stderr for secret in SECRETS)
    assert snapshot(files.root) == before


def test_a_simulator_port_in_use_is_one_line(files: Files) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(main, ["simulator", "--port", str(port)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (result.exit_code, result.stdout, result.stderr.splitlines()) == (
        1, "", [f"Error: simulator: Address already in use (127.0.0.1:{port})"])
