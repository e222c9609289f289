"""The MCP adapter: server factory, the four tools, trajectory capture and the `skillbank` CLI."""
