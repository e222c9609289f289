"""`skillbank demo` ends with the config to connect an agent: it must be the README's, and valid as printed."""

from __future__ import annotations

import json
import tomllib

from mcp_server.demo import CONNECT

EXE = "/home/me/skillbank/.venv/bin/skillbank"


def test_the_printed_cline_and_codex_configs_parse_and_pass_a_workspace() -> None:
    text = CONNECT.format(exe=EXE)
    cline = text.split("cline_mcp_settings.json:", 1)[1].split("Codex", 1)[0]
    server = json.loads(cline)["mcpServers"]["skillbank"]
    assert server == {"command": EXE, "args": ["serve", "--workspace", "/path/to/repo"]}
    codex_lines = text.split("~/.codex/config.toml:", 1)[1].splitlines()
    codex = tomllib.loads("\n".join(line.strip() for line in codex_lines))
    assert codex["mcp_servers"]["skillbank"] == {"command": EXE, "args": ["serve", "--workspace", "/path/to/repo"]}
    assert f"claude mcp add skillbank -- {EXE} serve --workspace ." in text
