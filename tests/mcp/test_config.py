"""Reading the `mcpServers` JSON other MCP clients use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fuseforks.mcp import ConfigError, HttpServer, StdioServer, load_config, parse_config
from fuseforks.mcp.config import (
    OAuthClient,
    ToolFilter,
    oauth_mode,
    secret_entries,
    tool_prefix,
)


def test_a_typical_file_from_another_client_reads_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "nik": {
                        "command": "uvx",
                        "args": ["nik-mcp", "--live"],
                        "env": {"NIK_PORT": "47321"},
                        "autoApprove": ["live_view_image"],
                        "timeout": 60,
                    },
                    "remote": {
                        "type": "http",
                        "url": "http://127.0.0.1:47321/mcp",
                        "headers": {"Authorization": "Bearer abc"},
                    },
                    "old": {"command": "old-server", "disabled": True},
                },
                "globalShortcut": "Ctrl+Space",
            }
        )
    )
    assert load_config(path) == [
        StdioServer(
            name="nik", command="uvx", args=["nik-mcp", "--live"], env={"NIK_PORT": "47321"}
        ),
        HttpServer(
            name="remote",
            url="http://127.0.0.1:47321/mcp",
            headers={"Authorization": "Bearer abc"},
            source=str(path),  # a login hint names the file
        ),
    ]


def test_variables_expand_from_the_environment_only_where_written() -> None:
    document = {
        "mcpServers": {
            "s": {
                "command": "srv",
                "args": ["--home=${HOME_DIR}", "--mode=${MODE:-fast}"],
                "env": {"API_KEY": "${MY_KEY}"},
            }
        }
    }
    environ = {"HOME_DIR": "/h", "MY_KEY": "k-1"}
    (server,) = parse_config(document, environ)
    assert isinstance(server, StdioServer)
    assert server.args == ["--home=/h", "--mode=fast"]
    assert server.env == {"API_KEY": "k-1"}


def test_a_missing_variable_is_an_error_naming_the_field() -> None:
    document = {"mcpServers": {"s": {"command": "srv", "env": {"K": "${NOPE}"}}}}
    with pytest.raises(
        ConfigError, match=r"^mcpServers\.s\.env\.K: environment variable NOPE is not set$"
    ):
        parse_config(document, {})


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], 'the configuration must be an object with an "mcpServers" object'),
        (
            {"mcpServers": {"s": {"args": []}}},
            'mcpServers.s needs either "command" (stdio) or "url" (streamable HTTP)',
        ),
        (
            {"mcpServers": {"s": {"command": "x", "args": "-v"}}},
            "mcpServers.s.args must be a list of strings",
        ),
        (
            {"mcpServers": {"cam": {"url": "ws://127.0.0.1:9000", "type": "websocket"}}},
            "mcpServers.cam: transport type 'websocket' is not supported "
            "(supported: stdio, http (streamable HTTP), sse)",
        ),
        (
            {"mcpServers": {"s": {"url": "http://x", "type": "grpc"}}},
            "mcpServers.s: transport type 'grpc' is not supported "
            "(supported: stdio, http (streamable HTTP), sse)",
        ),
        (
            {"mcpServers": {"s": {"command": "x", "type": 3}}},
            "mcpServers.s: transport type 3 is not supported "
            "(supported: stdio, http (streamable HTTP), sse)",
        ),
        (
            {"mcpServers": {"s": {"command": "x", "type": "sse"}}},
            'mcpServers.s: type \'sse\' needs "url"',
        ),
        (
            {"mcpServers": {"s": {"url": "http://x", "type": "stdio"}}},
            'mcpServers.s: type "stdio" needs "command"',
        ),
        (
            {"mcpServers": {"s": {"command": "x", "startTimeout": 0}}},
            "mcpServers.s.startTimeout must be a positive number of seconds",
        ),
        (
            {"mcpServers": {"s": {"command": "x", "startTimeout": "60"}}},
            "mcpServers.s.startTimeout must be a positive number of seconds",
        ),
        (
            {"mcpServers": {"s": {"command": "x", "startTimeout": True}}},
            "mcpServers.s.startTimeout must be a positive number of seconds",
        ),
        (
            {"mcpServers": {"a.b": {"command": "x"}, "a_b": {"command": "y"}}},
            "mcpServers: 'a.b' and 'a_b' give the same tool prefix 'a_b'",
        ),
    ],
)
def test_unusable_configurations_are_refused_with_a_precise_message(
    document: object, message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(document, {})
    assert str(caught.value) == message


def test_transport_types_and_start_timeouts() -> None:
    document = {
        "mcpServers": {
            "old": {"type": "sse", "url": "http://127.0.0.1:8000/sse", "startTimeout": 90},
            "new": {"type": "streamable-http", "url": "http://127.0.0.1:8001/mcp"},
            "camel": {"type": "streamableHttp", "url": "http://127.0.0.1:8002/mcp"},
            "local": {"type": "stdio", "command": "srv", "startTimeout": 2.5},
        }
    }
    assert parse_config(document, {}) == [
        HttpServer(name="old", url="http://127.0.0.1:8000/sse", transport="sse",
                   start_timeout=90.0),
        HttpServer(name="new", url="http://127.0.0.1:8001/mcp"),
        HttpServer(name="camel", url="http://127.0.0.1:8002/mcp"),
        StdioServer(name="local", command="srv", start_timeout=2.5),
    ]


def test_prefix_keeps_only_characters_providers_accept() -> None:
    assert tool_prefix("nik") == "nik"
    assert tool_prefix("my camera.v2") == "my_camera_v2"


def test_invalid_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(ConfigError, match=r"bad\.json: not valid JSON"):
        load_config(path)


def test_oauth_entries_say_how_a_remote_server_is_logged_in_to() -> None:
    document = {"mcpServers": {
        "design": {"url": "https://design.example/mcp"},
        "forced": {"url": "https://old.example/mcp", "auth": "oauth"},
        "keyed": {"url": "https://keyed.example/mcp", "headers": {"Authorization": "Bearer k"}},
        "open": {"url": "https://open.example/mcp", "auth": "none"},
        "given": {"url": "https://given.example/mcp", "oauth": {
            "clientId": "fuseforks-desktop", "clientSecret": "${GIVEN_SECRET}",
            "scopes": ["images", "draw"], "callbackPort": 33418}},
        "local": {"command": "srv"},
    }}
    servers = parse_config(document, {"GIVEN_SECRET": "s3cret-of-the-client"})
    assert [oauth_mode(s) for s in servers] == ["auto", "oauth", None, None, "oauth", None]
    given = servers[4]
    assert isinstance(given, HttpServer)
    assert (given.auth, given.oauth) == ("oauth", OAuthClient(
        client_id="fuseforks-desktop", client_secret="s3cret-of-the-client",
        scopes=("images", "draw"), callback_port=33418))
    assert secret_entries(given) == {"given.oauth.clientSecret": "s3cret-of-the-client"}


@pytest.mark.parametrize(("entry", "message"), [
    ({"url": "u", "auth": "basic"}, 'mcpServers.s.auth must be "oauth" or "none"'),
    ({"url": "u", "auth": "none", "oauth": {}}, 'mcpServers.s: "oauth" contradicts "auth": "none"'),
    ({"url": "u", "oauth": {"clientSecret": "x"}}, "mcpServers.s.oauth: clientSecret needs clientId"),
    ({"url": "u", "oauth": {"callbackPort": 0}},
     "mcpServers.s.oauth.callbackPort must be a port number (1-65535)"),
    ({"url": "u", "oauth": {"client_id": "x"}},
     "mcpServers.s.oauth: unknown key 'client_id' (known: clientId, clientSecret, scopes, "
     "callbackPort)"),
    ({"url": "u", "auth": "oauth", "headers": {"Authorization": "Bearer k"}},
     'mcpServers.s: an "Authorization" header and OAuth exclude each other'),
    ({"command": "srv", "auth": "oauth"},
     'mcpServers.s: "auth" and "oauth" are for a server reached by "url"'),
])
def test_an_oauth_entry_that_cannot_be_used_is_named(entry: dict[str, object],
                                                      message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"mcpServers": {"s": entry}}, {})
    assert str(caught.value) == message


def test_tool_lists_name_the_tools_a_server_offers_by_glob() -> None:
    document = {"mcpServers": {
        "web": {"command": "srv", "tools": {"allow": ["snapshot", "page_*"], "deny": ["*_delete"]}},
        "api": {"url": "http://x", "tools": {"deny": ["drop?"]}},
        "all": {"command": "srv", "tools": {}},
    }}
    web, api, every = parse_config(document, {})
    assert web == StdioServer(name="web", command="srv", tools=ToolFilter(
        allow=("snapshot", "page_*"), deny=("*_delete",)))
    assert api == HttpServer(name="api", url="http://x", tools=ToolFilter(deny=("drop?",)))
    assert every == StdioServer(name="all", command="srv")
    allowed = [name for name in ("snapshot", "page_open", "page_delete", "Page_open", "click")
               if web.tools.allows(name)]
    assert allowed == ["snapshot", "page_open"]  # deny wins; case counts
    assert [n for n in ("drop1", "drop12", "read") if api.tools.allows(n)] == ["drop12", "read"]
    assert every.tools.allows("anything") and every.tools == ToolFilter()


@pytest.mark.parametrize(("tools", "message"), [
    (["snapshot"], 'mcpServers.s.tools must be an object of "allow" and "deny" lists'),
    ({"only": ["a"]}, "mcpServers.s.tools: unknown key 'only' (known: allow, deny)"),
    ({"allow": "page_*"}, "mcpServers.s.tools.allow must be a list of strings"),
    ({"deny": [1]}, "mcpServers.s.tools.deny must be a list of strings"),
    ({"allow": ["a", ""]}, "mcpServers.s.tools.allow: a pattern must not be empty"),
])
def test_an_unusable_tool_list_is_named(tools: object, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config({"mcpServers": {"s": {"command": "x", "tools": tools}}}, {})
    assert str(caught.value) == message
