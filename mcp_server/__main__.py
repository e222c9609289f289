"""`python -m mcp_server` is the `skillbank` command."""

from mcp_server.cli import main

main()
