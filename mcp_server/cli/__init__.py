"""The `skillbank` command line. Settings are read here, once, and passed down.

Command modules import their heavy dependencies inside the commands, so `--help` and the MCP handshake stay
fast. `skillbank hook claude` runs on every Claude Code event, so it skips building this app altogether.
"""

from __future__ import annotations

import sys

import typer


def build_app() -> typer.Typer:
    from mcp_server.cli import agent, demo, distill, eval, hook, install, sandbox, serve, skills, tasks, trajectories

    app = typer.Typer(
        name="skillbank",
        help="An MCP server that makes coding agents learn from their own work.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
    )
    app.command("serve")(serve.serve)
    app.add_typer(skills.app, name="skills")
    app.add_typer(trajectories.app, name="trajectories")
    app.add_typer(hook.app, name="hook")
    app.add_typer(sandbox.app, name="sandbox")
    app.command("distill")(distill.distill)
    app.command("demo")(demo.demo)
    app.command("agent")(agent.agent)
    app.command("install")(install.install)
    app.command("uninstall")(install.uninstall)
    app.add_typer(tasks.app, name="tasks")
    app.command("eval")(eval.eval_)
    return app


def main() -> None:
    if sys.argv[1:3] == ["hook", "claude"] and len(sys.argv) == 3:
        from mcp_server.cli.hook import claude_main

        claude_main()
        return
    build_app()()
