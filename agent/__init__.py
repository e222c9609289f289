"""The bundled pydantic-ai agent: model selection (`llm`), one test-first attempt at a task through the skillbank
MCP server over stdio (`run.solve`), best-of-N attempts on isolated copies (`candidates`), and the one-step
installers for Claude Code, Codex and Cline (`install`). `tasks/` and `eval/` hold the task suite and the eval
harness. Nothing here imports `mcp_server`: the agent crosses the same MCP boundary as any other client."""
