"""Strict tool inputs: an unknown argument or a bad value is refused before the tool runs, in words a model can use.

The SDK builds each tool's argument model from its signature; that model ignores unknown keys (so `dryRun: true`
was dropped and the patch written) and its errors are pydantic's text, with the generated model's name
(`search_skillsArguments`) and documentation URLs. Here every tool's model is made strict (`extra="forbid"`: the
published schema says `additionalProperties: false`, and the SDK refuses extras before the tool runs), and
`input_guard`, a middleware, rewords each such refusal: it names the argument, says what was wrong and what to
send instead. A tool can add advice for one argument and error type (`record_trajectory`'s step
limit says how to batch). A refused call changes nothing and is not captured: the tool never ran.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, ValidationError

#: (argument, pydantic error type) -> what to do instead; replaces the generic hint for that case.
Advice = Mapping[tuple[str, str], str]


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name `name` most likely meant (`dryRun` -> `dry_run`, `timeout` -> `timeout_s`), if any."""
    options = list(known)
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower().replace("-", "_")
    if snake in options:
        return snake
    prefixed = [o for o in options if o.startswith(snake) or snake.startswith(o)] if len(snake) >= 3 else []
    if prefixed:
        return min(prefixed, key=lambda o: abs(len(o) - len(snake)))
    found = difflib.get_close_matches(snake, options, n=1, cutoff=0.5)
    return found[0] if found else None


def make_strict(tool: Tool) -> Tool:
    """Forbid unknown arguments in `tool`'s argument model and in the schema clients see."""
    base = tool.fn_metadata.arg_model
    strict: type[ArgModelBase] = type(  # a subclass: the SDK's model_dump_one_level is kept
        base.__name__,
        (base,),
        {"model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True), "__module__": base.__module__},
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _expected(schema: Mapping[str, Any]) -> str:
    """A short phrase for what a value should be, from its JSON schema (type, bounds, choices, description)."""
    options = schema.get("anyOf") or [schema]
    kinds, bounds = [], []
    for option in options:
        if "enum" in option:
            kinds.append("one of " + ", ".join(repr(v) for v in option["enum"]))
        elif "const" in option:
            kinds.append(repr(option["const"]))
        elif option.get("type") == "array":
            item = option.get("items", {}).get("type") or "item"
            kinds.append(f"a list of {item}s")
        elif option.get("type"):
            kind = option["type"]
            kinds.append("null" if kind == "null" else f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}")
        for key, word in (("minimum", ">="), ("maximum", "<="), ("minLength", "length >="), ("maxLength", "length <=")):
            if key in option:
                bounds.append(f"{word} {option[key]}")
        for key, word in (("minItems", "at least"), ("maxItems", "at most")):
            if key in option:
                bounds.append(f"{word} {option[key]} items")
    phrase = " or ".join(dict.fromkeys(kinds)) or "a value"
    if bounds:
        phrase += f" ({', '.join(bounds)})"
    if schema.get("description"):
        phrase += f": {schema['description']}"
    return phrase


def _field_names(tool: Tool, loc: tuple[int | str, ...]) -> list[str]:
    """The field names allowed where an unknown key was found (top level, or inside a nested object)."""
    schema: Mapping[str, Any] = tool.parameters
    defs = schema.get("$defs", {})
    for part in loc:
        schema = schema.get("items", {}) if isinstance(part, int) else schema.get("properties", {}).get(part, {})
        options = schema.get("anyOf") or [schema]
        schema = next((o for o in options if o.get("type") != "null"), {})
        if "$ref" in schema:
            schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    return list(schema.get("properties", {}))


def describe_refusal(tool: Tool, exc: ValidationError, advice: Advice | None = None) -> str:
    """One line per problem: which argument, what was wrong, what to send instead. No model names, no URLs."""
    properties = tool.parameters.get("properties", {})
    problems: list[str] = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = tuple(err["loc"])
        kind = err["type"]
        arg = str(loc[0]) if loc else ""
        where = _where(loc)
        special = (advice or {}).get((arg, kind))
        if kind == "extra_forbidden":
            known = _field_names(tool, loc[:-1])
            guess = closest(str(loc[-1]), known)
            did = f"did you mean {guess!r}? " if guess else ""
            what = f"argument {str(loc[-1])!r}" if len(loc) == 1 else f"field {str(loc[-1])!r} in {_where(loc[:-1])}"
            problems.append(f"unknown {what}: {did}known: {', '.join(known)}")
        elif kind == "missing":
            problems.append(f"argument {where!r} is required: send {_expected(properties.get(arg, {}))}")
        else:
            hint: str | None = special
            if hint is None and len(loc) == 1 and arg in properties:
                hint = f"send {_expected(properties[arg])}"
            problems.append(f"argument {where!r}: {err['msg']}" + (f"; {hint}" if hint else ""))
    head = f"{tool.name} refused its arguments; nothing was done."
    return "\n".join([head, *(f"- {p}" for p in problems)])


def refusal_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def unknown_tool_text(name: object, known: Iterable[str]) -> str:
    options = list(known)
    guess = closest(name, options) if isinstance(name, str) else None
    hint = f"did you mean {guess!r}? " if guess else ""
    return f"unknown tool {name!r}: {hint}this server has {', '.join(options)}"


def input_guard(tools: Mapping[str, Tool], advice: Mapping[str, Advice]) -> ServerMiddleware[Any]:
    """Middleware: refuse a `tools/call` to an unknown tool, and reword the SDK's refusal of bad arguments.

    The strict argument model makes the SDK refuse bad arguments before the tool runs; only then (a refusal whose
    text is the SDK's validation message) are the arguments validated again here to say it in our words, so a
    valid call pays for one validation, not two.
    """

    async def guard(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping):
            return await call_next(ctx)
        name = ctx.params.get("name")
        tool = tools.get(name) if isinstance(name, str) else None
        if tool is None:
            return refusal_result(unknown_tool_text(name, tools))
        result = await call_next(ctx)
        arguments = ctx.params.get("arguments") or {}
        if _sdk_validation_refusal(result, tool.name) and isinstance(arguments, dict):
            try:
                tool.fn_metadata.validate_arguments(arguments)
            except ValidationError as exc:
                return refusal_result(describe_refusal(tool, exc, advice.get(tool.name)))
        return result

    return guard


def _sdk_validation_refusal(result: HandlerResult, tool: str) -> bool:
    """Whether `result` (the serialized `CallToolResult` middleware sees) is the SDK refusing the arguments."""
    data = result.model_dump(by_alias=True) if isinstance(result, BaseModel) else result
    if not isinstance(data, dict) or not data.get("isError") or not data.get("content"):
        return False
    first = data["content"][0]
    text = first.get("text", "") if isinstance(first, dict) else ""
    return isinstance(text, str) and text.startswith(f"Error executing tool {tool}: ") and "validation error" in text
