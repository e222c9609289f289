# ruff: noqa: E501
"""The lesson classes of the benchmark: each one failure and its fix, met in three small repos.

Every instance is a tiny repo with the broken module, its test, and the fixed module. The three instances of a
class differ in repo, file, function and variable names (and in the shape of the surrounding code); what they
share is the lesson. Classes that share an exception type (seven `AttributeError`s, two `NameError`s, two
`TypeError`s) must still stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Instance:
    repo: str
    files: dict[str, str]
    """The broken tree (module and test)."""
    fixed: dict[str, str]
    """The files the fix rewrites, as they are after it."""


@dataclass(frozen=True)
class Lesson:
    name: str
    category: str
    instances: list[Instance] = field(default_factory=list)


def _one(repo: str, module: str, broken: str, fixed: str, test: str) -> Instance:
    stem = module.removesuffix(".py")
    return Instance(repo, {module: broken, f"tests/test_{stem}.py": test}, {module: fixed})


def _swap(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new)


def _py2_iteritems() -> Lesson:
    a = "def total_stock(stock):\n    return sum(qty for _, qty in stock.iteritems())\n"
    b = (
        "def best_student(scores):\n    best = None\n    for name, score in scores.iteritems():\n"
        "        if best is None or score > scores[best]:\n            best = name\n    return best\n"
    )
    c = "def render(env):\n    return '\\n'.join('%s=%s' % (k, v) for k, v in sorted(env.iteritems()))\n"
    return Lesson("dict.iteritems", "python2", [
        _one("inventory", "stock.py", a, _swap(a, "iteritems", "items"),
             "from stock import total_stock\n\n\ndef test_total():\n    assert total_stock({'a': 2, 'b': 3}) == 5\n"),
        _one("grades", "report.py", b, _swap(b, "iteritems", "items"),
             "from report import best_student\n\n\ndef test_best():\n    assert best_student({'ann': 3, 'bo': 9}) == 'bo'\n"),
        _one("envcfg", "settings.py", c, _swap(c, "iteritems", "items"),
             "from settings import render\n\n\ndef test_render():\n    assert render({'B': 2, 'A': 1}) == 'A=1\\nB=2'\n"),
    ])  # fmt: skip


def _py2_has_key() -> Lesson:
    a = "def is_admin(roles, user):\n    if roles.has_key(user):\n        return roles[user] == 'admin'\n    return False\n"
    b = "def lookup(cache, key, default=None):\n    return cache[key] if cache.has_key(key) else default\n"
    c = "def enabled(flags, name):\n    return flags.has_key(name) and flags[name]\n"
    return Lesson("dict.has_key", "python2", [
        _one("accounts", "auth.py", a, _swap(a, "roles.has_key(user)", "user in roles"),
             "from auth import is_admin\n\n\ndef test_admin():\n    assert is_admin({'al': 'admin'}, 'al')\n"),
        _one("cache", "memo.py", b, _swap(b, "cache.has_key(key)", "key in cache"),
             "from memo import lookup\n\n\ndef test_lookup():\n    assert lookup({'x': 1}, 'y', 0) == 0\n"),
        _one("flags", "features.py", c, _swap(c, "flags.has_key(name)", "name in flags"),
             "from features import enabled\n\n\ndef test_enabled():\n    assert enabled({'dark': True}, 'dark')\n"),
    ])  # fmt: skip


def _py2_print() -> Lesson:
    a = "def greet(name):\n    print 'hello', name\n    return name\n"
    b = 'def count_words(text):\n    words = text.split()\n    print "words:", len(words)\n    return len(words)\n'
    c = "def record(event):\n    print event\n    return True\n"
    return Lesson("print statement", "python2", [
        _one("greeter", "hello.py", a, _swap(a, "print 'hello', name", "print('hello', name)"),
             "from hello import greet\n\n\ndef test_greet():\n    assert greet('bob') == 'bob'\n"),
        _one("counter", "tally.py", b, _swap(b, 'print "words:", len(words)', 'print("words:", len(words))'),
             "from tally import count_words\n\n\ndef test_count():\n    assert count_words('a b c') == 3\n"),
        _one("logs", "audit.py", c, _swap(c, "print event", "print(event)"),
             "from audit import record\n\n\ndef test_record():\n    assert record('login')\n"),
    ])  # fmt: skip


def _py2_unicode() -> Lesson:
    a = "def slugify(title):\n    return unicode(title).strip().lower().replace(' ', '-')\n"
    b = "def label(value):\n    if isinstance(value, unicode):\n        return value\n    return repr(value)\n"
    c = "def clean(cell):\n    return unicode(cell, 'utf-8') if isinstance(cell, bytes) else cell\n"
    return Lesson("unicode builtin", "python2", [
        _one("slugs", "slug.py", a, _swap(a, "unicode(", "str("),
             "from slug import slugify\n\n\ndef test_slug():\n    assert slugify(' Hello World ') == 'hello-world'\n"),
        _one("labels", "label.py", b, _swap(b, "unicode)", "str)"),
             "from label import label\n\n\ndef test_label():\n    assert label('x') == 'x'\n"),
        _one("csvtools", "cells.py", c, _swap(c, "unicode(", "str("),
             "from cells import clean\n\n\ndef test_clean():\n    assert clean(b'caf\\xc3\\xa9') == 'caf\\u00e9'\n"),
    ])  # fmt: skip


def _py2_xrange() -> Lesson:
    a = "def identity(n):\n    return [[1 if i == j else 0 for j in xrange(n)] for i in xrange(n)]\n"
    b = "def page_starts(total, size):\n    return list(xrange(0, total, size))\n"
    c = "def countdown(start):\n    out = []\n    for tick in xrange(start, 0, -1):\n        out.append(tick)\n    return out\n"
    return Lesson("xrange builtin", "python2", [
        _one("matrix", "grid.py", a, _swap(a, "xrange", "range"),
             "from grid import identity\n\n\ndef test_identity():\n    assert identity(2) == [[1, 0], [0, 1]]\n"),
        _one("pager", "pages.py", b, _swap(b, "xrange", "range"),
             "from pages import page_starts\n\n\ndef test_pages():\n    assert page_starts(5, 2) == [0, 2, 4]\n"),
        _one("launch", "timer.py", c, _swap(c, "xrange", "range"),
             "from timer import countdown\n\n\ndef test_countdown():\n    assert countdown(3) == [3, 2, 1]\n"),
    ])  # fmt: skip


def _collections_abc() -> Lesson:
    a = (
        "import collections\n\n\ndef deep_merge(base, extra):\n    out = dict(base)\n    for key, value in extra.items():\n"
        "        if isinstance(value, collections.Mapping) and isinstance(out.get(key), collections.Mapping):\n"
        "            out[key] = deep_merge(out[key], value)\n        else:\n            out[key] = value\n    return out\n"
    )
    b = (
        "import collections\n\n\ndef flatten(items):\n    for item in items:\n"
        "        if isinstance(item, collections.Iterable) and not isinstance(item, str):\n"
        "            yield from flatten(item)\n        else:\n            yield item\n"
    )
    c = "import collections\n\n\ndef first(value):\n    if isinstance(value, collections.Sequence):\n        return value[0]\n    return value\n"

    def fixed(text: str) -> str:
        return text.replace("collections.", "collections.abc.").replace(
            "import collections\n", "import collections.abc\n"
        )

    return Lesson("collections ABCs", "removed-stdlib", [
        _one("config", "merge.py", a, fixed(a),
             "from merge import deep_merge\n\n\ndef test_merge():\n    assert deep_merge({'a': {'x': 1}}, {'a': {'y': 2}}) == {'a': {'x': 1, 'y': 2}}\n"),
        _one("nested", "flat.py", b, fixed(b),
             "from flat import flatten\n\n\ndef test_flatten():\n    assert list(flatten([1, [2, [3]]])) == [1, 2, 3]\n"),
        _one("shapes", "seq.py", c, fixed(c),
             "from seq import first\n\n\ndef test_first():\n    assert first([4, 5]) == 4\n"),
    ])  # fmt: skip


def _time_clock() -> Lesson:
    a = "import time\n\n\ndef timed(fn):\n    start = time.clock()\n    result = fn()\n    return result, time.clock() - start\n"
    b = "import time\n\n\ndef deadline(seconds):\n    return time.clock() + seconds\n"
    c = (
        "import time\n\n\nclass Timer:\n    def __enter__(self):\n        self.t0 = time.clock()\n        return self\n\n"
        "    def __exit__(self, *exc):\n        self.elapsed = time.clock() - self.t0\n"
    )
    return Lesson("time.clock", "removed-stdlib", [
        _one("bench", "stopwatch.py", a, _swap(a, "time.clock", "time.perf_counter"),
             "from stopwatch import timed\n\n\ndef test_timed():\n    assert timed(lambda: 7)[0] == 7\n"),
        _one("retry", "backoff.py", b, _swap(b, "time.clock", "time.perf_counter"),
             "from backoff import deadline\n\n\ndef test_deadline():\n    assert deadline(5) > 0\n"),
        _one("profiler", "prof.py", c, _swap(c, "time.clock", "time.perf_counter"),
             "from prof import Timer\n\n\ndef test_timer():\n    with Timer() as t:\n        pass\n    assert t.elapsed >= 0\n"),
    ])  # fmt: skip


def _inspect_getargspec() -> Lesson:
    a = "import inspect\n\n\ndef arg_names(fn):\n    return inspect.getargspec(fn).args\n"
    b = "import inspect\n\n\ndef arity(handler):\n    spec = inspect.getargspec(handler)\n    return len(spec.args)\n"
    c = "import inspect\n\n\ndef positional(func):\n    return inspect.getargspec(func)[0]\n"
    return Lesson("inspect.getargspec", "removed-stdlib", [
        _one("cli", "commands.py", a, _swap(a, "getargspec", "getfullargspec"),
             "from commands import arg_names\n\n\ndef test_args():\n    assert arg_names(lambda a, b: 0) == ['a', 'b']\n"),
        _one("rpc", "dispatch.py", b, _swap(b, "getargspec", "getfullargspec"),
             "from dispatch import arity\n\n\ndef test_arity():\n    assert arity(lambda x: x) == 1\n"),
        _one("plugins", "hooks.py", c, _swap(c, "getargspec", "getfullargspec"),
             "from hooks import positional\n\n\ndef test_positional():\n    assert positional(lambda p, q=1: p) == ['p', 'q']\n"),
    ])  # fmt: skip


def _asyncio_coroutine() -> Lesson:
    a = "import asyncio\n\n\n@asyncio.coroutine\ndef fetch(url):\n    yield from asyncio.sleep(0)\n    return url.upper()\n"
    b = (
        "import asyncio\n\n\n@asyncio.coroutine\ndef process(jobs):\n    done = []\n    for job in jobs:\n"
        "        yield from asyncio.sleep(0)\n        done.append(job * 2)\n    return done\n"
    )
    c = "import asyncio\n\n\n@asyncio.coroutine\ndef reply(message):\n    yield from asyncio.sleep(0)\n    return 'echo: ' + message\n"

    def fixed(text: str) -> str:
        return text.replace("@asyncio.coroutine\ndef", "async def").replace("yield from", "await")

    return Lesson("asyncio.coroutine", "asyncio", [
        _one("crawler", "fetch.py", a, fixed(a),
             "import asyncio\n\nfrom fetch import fetch\n\n\ndef test_fetch():\n    assert asyncio.run(fetch('a')) == 'A'\n"),
        _one("queue", "worker.py", b, fixed(b),
             "import asyncio\n\nfrom worker import process\n\n\ndef test_process():\n    assert asyncio.run(process([1, 2])) == [2, 4]\n"),
        _one("chat", "bot.py", c, fixed(c),
             "import asyncio\n\nfrom bot import reply\n\n\ndef test_reply():\n    assert asyncio.run(reply('hi')) == 'echo: hi'\n"),
    ])  # fmt: skip


def _asyncio_run_function() -> Lesson:
    a = "import asyncio\n\n\nasync def main():\n    await asyncio.sleep(0)\n    return 42\n\n\ndef run():\n    return asyncio.run(main)\n"
    b = "import asyncio\n\n\nasync def ping_all():\n    await asyncio.sleep(0)\n    return ['ok']\n\n\ndef check():\n    return asyncio.run(ping_all)\n"
    c = (
        "import asyncio\n\n\nasync def seed():\n    await asyncio.sleep(0)\n    return ['alice', 'bob']\n\n\n"
        "def load():\n    users = asyncio.run(seed)\n    return sorted(users)\n"
    )
    return Lesson("asyncio.run of a function", "asyncio", [
        _one("jobs", "runner.py", a, _swap(a, "asyncio.run(main)", "asyncio.run(main())"),
             "from runner import run\n\n\ndef test_run():\n    assert run() == 42\n"),
        _one("pinger", "ping.py", b, _swap(b, "asyncio.run(ping_all)", "asyncio.run(ping_all())"),
             "from ping import check\n\n\ndef test_check():\n    assert check() == ['ok']\n"),
        _one("seeder", "db.py", c, _swap(c, "asyncio.run(seed)", "asyncio.run(seed())"),
             "from db import load\n\n\ndef test_load():\n    assert load() == ['alice', 'bob']\n"),
    ])  # fmt: skip


def _base64_encodestring() -> Lesson:
    a = "import base64\n\n\ndef encode_attachment(data):\n    return base64.encodestring(data).decode('ascii')\n"
    b = (
        "import base64\n\n\ndef basic_header(user, pin):\n    raw = ('%s:%s' % (user, pin)).encode()\n"
        "    return 'Basic ' + base64.encodestring(raw).strip().decode()\n"
    )
    c = (
        "import base64\n\n\ndef data_uri(png):\n    body = base64.encodestring(png).replace(b'\\n', b'')\n"
        "    return 'data:image/png;base64,' + body.decode()\n"
    )
    return Lesson("base64.encodestring", "removed-stdlib", [
        _one("mailer", "attach.py", a, _swap(a, "encodestring", "encodebytes"),
             "from attach import encode_attachment\n\n\ndef test_encode():\n    assert encode_attachment(b'hi') == 'aGk=\\n'\n"),
        _one("headers", "basic.py", b, _swap(b, "encodestring", "encodebytes"),
             "from basic import basic_header\n\n\ndef test_header():\n    assert basic_header('a', 'b') == 'Basic YTpi'\n"),
        _one("images", "embed.py", c, _swap(c, "encodestring", "encodebytes"),
             "from embed import data_uri\n\n\ndef test_uri():\n    assert data_uri(b'x') == 'data:image/png;base64,eA=='\n"),
    ])  # fmt: skip


def _json_encoding() -> Lesson:
    a = "import json\n\n\ndef parse(body):\n    return json.loads(body, encoding='utf-8')\n"
    b = (
        "import json\n\n\ndef load_config(text):\n    config = json.loads(text, encoding='utf-8')\n"
        "    config.setdefault('debug', False)\n    return config\n"
    )
    c = "import json\n\n\ndef decode_lines(lines):\n    return [json.loads(line, encoding='latin-1') for line in lines]\n"
    return Lesson("json.loads encoding", "removed-stdlib", [
        _one("api", "client.py", a, _swap(a, ", encoding='utf-8'", ""),
             "from client import parse\n\n\ndef test_parse():\n    assert parse('{\"a\": 1}') == {'a': 1}\n"),
        _one("settings", "loader.py", b, _swap(b, ", encoding='utf-8'", ""),
             "from loader import load_config\n\n\ndef test_load():\n    assert load_config('{}') == {'debug': False}\n"),
        _one("events", "stream.py", c, _swap(c, ", encoding='latin-1'", ""),
             "from stream import decode_lines\n\n\ndef test_decode():\n    assert decode_lines(['1', '[2]']) == [1, [2]]\n"),
    ])  # fmt: skip


def _pytest_raises_message() -> Lesson:
    def inst(repo: str, module: str, code: str, test: str) -> Instance:
        stem = module.removesuffix(".py")
        path = f"tests/test_{stem}.py"
        fixed = test
        for kw in (", message='should fail'", ', message="overdraw"', ", message='too cold'"):
            fixed = fixed.replace(kw, "")
        assert fixed != test
        return Instance(repo, {module: code, path: test}, {path: fixed})

    return Lesson("pytest.raises message=", "pytest", [
        inst("parser", "parse.py", "def parse_int(text):\n    return int(text)\n",
             "import pytest\n\nfrom parse import parse_int\n\n\ndef test_rejects_words():\n"
             "    with pytest.raises(ValueError, message='should fail'):\n        parse_int('abc')\n"),
        inst("ledger", "account.py",
             "class Account:\n    def __init__(self):\n        self.balance = 0\n\n    def withdraw(self, amount):\n"
             "        if amount > self.balance:\n            raise RuntimeError('insufficient funds')\n"
             "        self.balance -= amount\n",
             "import pytest\n\nfrom account import Account\n\n\ndef test_overdraw():\n"
             "    with pytest.raises(RuntimeError, message=\"overdraw\"):\n        Account().withdraw(5)\n"),
        inst("units", "convert.py",
             "def to_celsius(f):\n    if f < -459.67:\n        raise ValueError('below absolute zero')\n"
             "    return (f - 32) * 5 / 9\n",
             "import pytest\n\nfrom convert import to_celsius\n\n\ndef test_too_cold():\n"
             "    with pytest.raises(ValueError, message='too cold'):\n        to_celsius(-500)\n"),
    ])  # fmt: skip


def _pkg_resources() -> Lesson:
    a = "import pkg_resources\n\n\ndef pytest_version():\n    return pkg_resources.get_distribution('pytest').version\n"
    b = "import pkg_resources\n\n\ndef banner():\n    return 'pluggy ' + pkg_resources.get_distribution('pluggy').version\n"
    c = (
        "import pkg_resources\n\n\ndef installed(name):\n    try:\n        pkg_resources.get_distribution(name)\n"
        "        return True\n    except Exception:\n        return False\n"
    )

    def fixed(text: str) -> str:
        text = text.replace("import pkg_resources\n", "from importlib.metadata import version\n")
        return (
            text.replace("pkg_resources.get_distribution('pytest').version", "version('pytest')")
            .replace("pkg_resources.get_distribution('pluggy').version", "version('pluggy')")
            .replace("pkg_resources.get_distribution(name)", "version(name)")
        )

    return Lesson("pkg_resources", "packaging", [
        _one("tool", "about.py", a, fixed(a),
             "from about import pytest_version\n\n\ndef test_version():\n    assert pytest_version().split('.')[0].isdigit()\n"),
        _one("banner", "brand.py", b, fixed(b),
             "from brand import banner\n\n\ndef test_banner():\n    assert banner().startswith('pluggy ')\n"),
        _one("deps", "check.py", c, fixed(c),
             "from check import installed\n\n\ndef test_installed():\n    assert installed('pytest')\n"),
    ])  # fmt: skip


LESSONS: list[Lesson] = [
    _py2_iteritems(), _py2_has_key(), _py2_print(), _py2_unicode(), _py2_xrange(), _collections_abc(), _time_clock(),
    _inspect_getargspec(), _asyncio_coroutine(), _asyncio_run_function(), _base64_encodestring(), _json_encoding(),
    _pytest_raises_message(), _pkg_resources(),
]  # fmt: skip
