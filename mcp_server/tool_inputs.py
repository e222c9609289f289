"""Strict tool inputs: an unknown argument or a bad value is refused before the tool runs, in words a model can use.

The SDK builds each tool's argument model from its signature; that model ignores unknown keys (so `dryRun: true`
was dropped and the patch written) and its errors are pydantic's text, with the generated model's name
(`search_skillsArguments`) and documentation URLs. Here every tool's model is made strict (`extra="forbid"`: the
published schema says `additionalProperties: false`, and the SDK refuses extras before the tool runs), and
`input_guard`, a middleware, rewords each such refusal: it names the argument, says what was wrong and what to
send instead. A tool can add advice for one argument and error type (`record_trajectory`'s step
limit says how to batch). A refused call changes nothing and is not captured: the tool never ran.

Values are taken as the JSON types the schema names, not converted the way pydantic's lax mode would: a boolean
is only `true` or `false` (not `"yes"`, `"off"`, `1`), an integer or a number is never a boolean (`true` is not
`1`) nor a string (`"30"` is refused too: the schema says integer, `run_tests`' own check refuses strings, and
the refusal says what to send). An integer may be written `5.0` (JSON Schema counts it as one). The SDK's one
deliberate conversion stays: a list or an object sent as a JSON string (`"[\"a\"]"`) is parsed first
(`FuncMetadata.pre_parse_json`, for clients that stringify them). Nested models (`record_trajectory`'s steps)
follow the same rule and still validate from plain objects; their other fields (a step's `ts`) are unchanged.
"""

from __future__ import annotations

import copy
import difflib
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver.tools.base import Tool
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Strict, ValidationError, field_validator
from typing_inspection.introspection import is_union_origin

log = logging.getLogger(__name__)

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
    """Forbid unknown arguments in `tool`'s argument model and in the schema clients see, and take every value as
    the JSON type its schema names (see the module doc). The published schema does not change."""
    base = tool.fn_metadata.arg_model
    # A subclass: the SDK's model_dump_one_level is kept.
    strict = exact_model(base, ConfigDict(extra="forbid", arbitrary_types_allowed=True))
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)
    return tool


def exact_model(model: type[Any], config: ConfigDict | None = None, _done: dict[type, type] | None = None) -> Any:
    """A subclass of `model` (same name, fields, schema) whose booleans, integers and numbers are strict: a boolean
    is only true/false, an integer or a number never a boolean nor a string. Nested models get the same treatment;
    every other field is as it was (a step's `ts` still parses from a string). `config` is merged into the
    subclass's; `model` itself is returned when it has nothing to tighten and no `config` is given."""
    done = {} if _done is None else _done
    if model in done:
        return done[model]
    done[model] = model  # a model nested in itself keeps itself there (none of the tools has one)
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {"__module__": model.__module__, "__doc__": model.__doc__}
    whole: list[str] = []
    for name, info in model.model_fields.items():
        tight = _exact_type(info.annotation, done)
        if tight is not info.annotation:
            annotations[name] = tight
            namespace[name] = copy.copy(info)
        if _strip_optional(info.annotation) is int:
            whole.append(name)
    if not annotations and config is None:
        return model
    if whole:  # 5.0 is an integer to JSON Schema (and to the lax model before): it stays accepted as 5
        namespace["exact_json_whole_floats"] = field_validator(*whole, mode="before")(_whole_float)
    if config is not None:
        namespace["model_config"] = config
    namespace["__annotations__"] = annotations
    exact = type(model.__name__, (model,), namespace)
    done[model] = exact
    return exact


def _exact_type(tp: Any, done: dict[type, type]) -> Any:
    """`tp` with `bool`, `int` and `float` made strict and models made exact, at any depth; `tp` itself if unchanged."""
    if tp is bool or tp is int or tp is float:
        return Annotated[tp, Strict()]
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return exact_model(tp, None, done)
    origin = get_origin(tp)
    if origin is None or origin is Literal:
        return tp
    args = get_args(tp)
    if origin is Annotated:
        inner = _exact_type(args[0], done)
        return tp if inner is args[0] else Annotated[(inner, *tp.__metadata__)]
    tight = tuple(_exact_type(arg, done) for arg in args)
    if all(new is old for new, old in zip(tight, args, strict=True)):
        return tp
    if is_union_origin(origin):
        return Union[tight]  # noqa: UP007 - a union of a runtime tuple has no `|` spelling
    return origin[tight]


def _strip_optional(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    if is_union_origin(get_origin(tp)):
        arms = [arm for arm in get_args(tp) if arm is not type(None)]
        return _strip_optional(arms[0]) if len(arms) == 1 else tp
    return tp


def _whole_float(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


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
        elif option.get("type") == "boolean":
            kinds.append("true or false")
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


def _unwrapped(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The non-null option of a schema, its `$ref` resolved."""
    options = schema.get("anyOf") or [schema]
    schema = next((o for o in options if o.get("type") != "null"), {})
    return defs.get(schema["$ref"].rsplit("/", 1)[-1], {}) if "$ref" in schema else schema


def _schema_at(tool: Tool, loc: tuple[int | str, ...]) -> Mapping[str, Any]:
    """The JSON schema of the value at `loc` in the arguments (`steps[0].ok`), as published; {} if there is none."""
    schema: Mapping[str, Any] = tool.parameters
    defs = schema.get("$defs", {})
    for i, part in enumerate(loc):
        if i:
            schema = _unwrapped(schema, defs)
        schema = schema.get("items", {}) if isinstance(part, int) else schema.get("properties", {}).get(part, {})
    return _unwrapped(schema, defs) if "$ref" in schema else schema


def _field_names(tool: Tool, loc: tuple[int | str, ...]) -> list[str]:
    """The field names allowed where an unknown key was found (top level, or inside a nested object)."""
    schema = _unwrapped(_schema_at(tool, loc), tool.parameters.get("$defs", {})) if loc else tool.parameters
    return list(schema.get("properties", {}))


def describe_refusal(tool: Tool, exc: ValidationError, advice: Advice | None = None) -> str:
    """One line per problem: which argument, what was wrong, what to send instead. No model names, no URLs, and
    no value sent (a wrong type is named by its JSON kind: `not a string`)."""
    problems: list[str] = []
    for err in exc.errors(include_url=False):
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
            problems.append(f"argument {where!r} is required: send {_expected(_schema_at(tool, loc))}")
        else:
            schema = _schema_at(tool, loc)
            hint = special if special is not None else (f"send {_expected(schema)}" if schema else None)
            got = f", not {_json_kind(err.get('input'))}" if kind.endswith("_type") else ""
            problems.append(f"argument {where!r}: {err['msg']}{got}" + (f"; {hint}" if hint else ""))
    head = f"{tool.name} refused its arguments; nothing was done."
    return "\n".join([head, *(f"- {p}" for p in problems)])


def _json_kind(value: object) -> str:
    """What a JSON value is, in words (`a string`, `a boolean`, `null`), never the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, float) and not math.isfinite(value):
        return "a number too large to hold" if not math.isnan(value) else "not a number"
    if isinstance(value, float) and not value.is_integer():
        return "a number with a fraction"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    return "an object" if isinstance(value, Mapping) else type(value).__name__


def refusal_result(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


#: Why a skillbank tool may be missing from a server, and who can turn it on (not the model).
_EXEC_HINT = (
    "it runs or writes the workspace's code, which over HTTP is off unless the operator starts the server with "
    "--allow-exec; or the operator left it out with --tools"
)
OFF_TOOL_HINTS = {
    "run_tests": _EXEC_HINT,
    "apply_patch": _EXEC_HINT,
    "search_skills": "the operator left it out with --tools, or set SKILLBANK_NO_SKILLS",
    "record_trajectory": "the operator left it out with --tools",
}


def unknown_tool_text(name: object, known: Iterable[str]) -> str:
    options = list(known)
    if name is None:
        return f"the call names no tool (its `name` is missing or null): this server has {', '.join(options)}"
    if isinstance(name, str) and name in OFF_TOOL_HINTS and name not in options:
        return f"{name} is turned off on this server ({OFF_TOOL_HINTS[name]}): this server has {', '.join(options)}"
    guess = closest(name, options) if isinstance(name, str) else None
    hint = f"did you mean {guess!r}? " if guess else ""
    shown = repr(name) if isinstance(name, str) else f"{json.dumps(name)[:80]} (not a string)"
    return f"unknown tool {shown}: {hint}this server has {', '.join(options)}"


def input_guard(
    tools: Mapping[str, Tool],
    advice: Mapping[str, Advice],
    early: Mapping[str, Callable[[Mapping[str, Any]], None]] | None = None,
) -> ServerMiddleware[Any]:
    """Middleware: refuse a `tools/call` to an unknown tool, and reword the SDK's refusal of bad arguments.

    A tool's `early` hook (`ToolSet.tool`) gets the raw arguments of a call to it first, before anything else runs.

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
        arguments = ctx.params.get("arguments") or {}
        hook = early.get(tool.name) if early else None
        if hook is not None and isinstance(arguments, Mapping):
            try:
                hook(arguments)
            except Exception:
                log.exception("the early hook of %s failed; the call goes on without it", tool.name)
        result = await call_next(ctx)
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
