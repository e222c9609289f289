"""Redactor: secrets become `[REDACTED:<kind>]`; ordinary code, hashes, UUIDs and base64 data stay as they are.

Secrets are assembled at run time so that no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pytest

from skills_store.errors import ConfigError
from skills_store.redact import Redactor, looks_random, shannon_entropy

DATA = Path(__file__).resolve().parents[1] / "data" / "redaction"
R = Redactor()
A36 = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC2eF4"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("key sk-" + "proj-" + A36 * 2, "openai-key"),
        ("sk-" + "ant-api03-" + A36 * 3, "anthropic-key"),
        ("id " + "AKIA" + "IOSFODNN7EXAMPL1", "aws-access-key"),
        ("aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKE1", "aws-secret-key"),
        ("gh" + "p_" + A36, "github-token"),
        ("xo" + "xb-123456789012-123456789012-" + A36[:24], "slack-token"),
        ("AI" + "za" + A36[:35], "google-api-key"),
        ("eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0." + A36, "jwt"),
        ("-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----", "private-key"),
        ("postgres://app:" + "S3cr3t!pw@db:5432/app", "url-password"),
        ("Authorization: Bearer " + A36, "auth-header"),
        ("DB_PASSWORD=" + "hunter2hunter2", "env-secret"),
        ('conn = connect(password="' + 'p4ss-w0rd!")', "assignment-secret"),
        ("./deploy --token " + "abc123XYZ789", "cli-secret"),
        ("  api_key: " + "x9Y8z7W6v5U4", "yaml-secret"),
        ("session=" + A36[:32], "high-entropy"),
    ],
)
def test_each_kind_of_secret_is_replaced_by_its_marker(text: str, kind: str) -> None:
    out = R.redact_text(text)
    assert f"[REDACTED:{kind}]" in out


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("github_" + "pat_" + A36[:22] + "_" + (A36 * 2)[:59], "github-token"),
        ("gl" + "pat-" + A36[:20], "gitlab-token"),
        ("sk_" + "live_" + A36[:24], "stripe-key"),
        ("hf_" + A36[:34], "huggingface-token"),
        ("npm_" + A36, "npm-token"),
        ("ya29." + A36, "google-oauth"),
        ("ASIA" + "IOSFODNN7EXAMPL1", "aws-access-key"),
    ],
)
def test_every_provider_format_is_found_by_its_own_rule_not_only_by_entropy(token: str, kind: str) -> None:
    assert Redactor(entropy=False).redact_text(f"value: {token}") == f"value: [REDACTED:{kind}]"


def test_only_the_secret_part_of_a_match_is_replaced() -> None:
    assert (
        R.redact_text("postgres://app:" + "S3cr3t!pw@db:5432/app")
        == "postgres://app:[REDACTED:url-password]@db:5432/app"
    )
    assert R.redact_text("export DB_PASSWORD=" + "hunter2hunter2") == "export DB_PASSWORD=[REDACTED:env-secret]"


def test_ordinary_code_with_hashes_uuids_and_base64_data_is_unchanged() -> None:
    code = (DATA / "ordinary_code.py.txt").read_text()
    assert R.redact_text(code) == code


@pytest.mark.parametrize(
    "text",
    [
        "password: ${DB_PASSWORD}",
        "Authorization: Bearer <your-token>",
        'SECRET_KEY = os.environ["SECRET_KEY"]',
        "token: object,",
        "postgres://user:pass@localhost/db",
        "TOKEN_TTL=3600",
        'password=""',
    ],
)
def test_placeholders_references_and_types_are_not_secrets(text: str) -> None:
    assert R.redact_text(text) == text


def test_redact_walks_dicts_and_lists_and_blanks_fields_named_like_secrets() -> None:
    value = {
        "args": ["gh" + "p_" + A36, 3, None],
        "headers": {"X-Api-Key": "zz" + A36, "Accept": "application/json"},
        "password": "correct-horse-9",
        "nested": ({"ok": True},),
    }
    out = R.redact(value)
    assert out["args"] == ["[REDACTED:github-token]", 3, None]
    assert out["headers"] == {"X-Api-Key": "[REDACTED:secret-field]", "Accept": "application/json"}
    assert out["password"] == "[REDACTED:secret-field]"
    assert out["nested"] == [{"ok": True}]
    assert value["password"] == "correct-horse-9"


def test_extra_patterns_from_settings_are_applied_first_with_an_optional_secret_group() -> None:
    redactor = Redactor([r"ACME-\d{6}", r"internal-key=(?P<secret>\w+)"])
    assert redactor.redact_text("ticket ACME-123456") == "ticket [REDACTED:custom]"
    assert redactor.redact_text("internal-key=abc") == "internal-key=[REDACTED:custom]"


def test_an_invalid_extra_pattern_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"redact pattern #2 '\(unclosed' is not a valid regular expression"):
        Redactor(["ok", "(unclosed"])


def test_the_entropy_test_tells_random_tokens_from_identifiers_and_digests() -> None:
    assert looks_random(A36)
    assert not looks_random("getUserAccountSettingsHandlerFactory2")
    assert not looks_random("3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f")
    assert not looks_random("src/skills_store/trajectory_sqlite")
    assert looks_random("OtUEwdyr6nvyFlpf" + "TRDQFuUMJrh2U4wIJHqpc")  # letter runs without vowels are not words
    assert not looks_random("SeanLee97/AnglE/blob/5155458cfa6f7fbc7a8a19a66960cd86eadfd534/angle_emb/loss.py")
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("") == 0.0


def test_empty_and_secret_free_texts_come_back_as_they_were() -> None:
    assert R.redact_text("") == ""
    assert R.redact(None) is None
    assert R.redact(3.5) == 3.5


# Secrets in every form agents store them in: inside a line, through JSON and URL escaping, glued to letters.
PASSWORD = "Zq8vN2mLx4Tr"
TOKENS = {
    "github-token": "gh" + "p_" + A36,
    "aws-access-key": "AKIA" + "IOSFODNN7EXAMPL1",
    "openai-key": "sk-" + "proj-" + A36 * 2,
    "slack-token": "xo" + "xb-123456789012-123456789012-" + A36[:24],
    "high-entropy": A36[:32],
}
SECRETS = {"password": PASSWORD, **TOKENS}
NAMED_FORMS = [
    "+PASSWORD={s}",
    "-MY_PASSWORD={s}",
    "  export API_TOKEN={s}",
    "Deploy to staging with PASSWORD={s} and check the logs",
    "E       AssertionError: login failed with DB_PASSWORD={s}",
    '{{"password": "{s}"}}',
    "+  password: {s}",
    "https://deploy:{s}@git.example.com/org/repo.git",
    "https://api.example.com/v1/items?token={s}&page=2",
    "GET /callback?state=xyz&api_key={s} HTTP/1.1",
    "curl -sS -u deploy:{s} https://api.example.com/v1/status",
]
ESCAPED_FORMS = {
    "json after \\n": lambda s: json.dumps({"stdout": "ok\n" + s}),
    "json after \\t": lambda s: json.dumps({"stdout": "ok\t" + s}),
    'json after \\"': lambda s: json.dumps({"stdout": 'say "' + s + '"'}),
    "json of json after \\\\n": lambda s: json.dumps(json.dumps({"stdout": "ok\n" + s})),
    "url after %3D": lambda s: "GET /cb?next=" + urllib.parse.quote("token=" + s, safe=""),
    "url after %20": lambda s: "q=" + urllib.parse.quote("run " + s, safe=""),
    "glued to a letter": lambda s: "x" + s,
    "glued to letters": lambda s: "abc" + s,
}
ENCODINGS = {
    "json": lambda t: json.dumps({"stdout": "ok\n" + t}),
    "json of json": lambda t: json.dumps(json.dumps({"stdout": "ok\n" + t})),
    "url-encoded": lambda t: "GET /cb?next=" + urllib.parse.quote(t, safe="") + " HTTP/1.1",
}


def _leaks(secret: str, out: str) -> bool:
    return any(secret[i : i + 8] in out for i in range(len(secret) - 7))


@pytest.mark.parametrize("kind", SECRETS)
@pytest.mark.parametrize("form", NAMED_FORMS)
def test_a_named_secret_is_redacted_wherever_it_stands_in_a_line(form: str, kind: str) -> None:
    out = R.redact_text(form.format(s=SECRETS[kind]))
    assert not _leaks(SECRETS[kind], out), out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("kind", TOKENS)
@pytest.mark.parametrize("form", ESCAPED_FORMS)
def test_a_token_is_redacted_through_escapes_and_when_glued_to_letters(form: str, kind: str) -> None:
    out = R.redact_text(ESCAPED_FORMS[form](TOKENS[kind]))
    assert not _leaks(TOKENS[kind], out), out
    assert "[REDACTED:" in out


@pytest.mark.parametrize("kind", ["password", "github-token", "high-entropy"])
@pytest.mark.parametrize("form", NAMED_FORMS)
@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_named_secret_is_redacted_inside_json_and_url_encoded_text(encoding: str, form: str, kind: str) -> None:
    secret = SECRETS[kind]
    out = R.redact_text(ENCODINGS[encoding](form.format(s=secret)))
    for shown in (secret, urllib.parse.quote(secret, safe="")):
        assert not _leaks(shown, out), out


def test_only_the_secret_of_escaped_text_is_replaced_and_the_json_stays_valid() -> None:
    token = TOKENS["github-token"]
    out = R.redact_text(json.dumps({"stdout": "ok\n" + token + "\n", "cmd": "env PASSWORD=" + PASSWORD + " run"}))
    assert json.loads(out) == {
        "stdout": "ok\n[REDACTED:github-token]\n",
        "cmd": "env PASSWORD=[REDACTED:env-secret] run",
    }
    assert R.redact_text("x" + token) == "x[REDACTED:github-token]"
    assert R.redact_text("abc" + TOKENS["aws-access-key"]) == "abc[REDACTED:aws-access-key]"
    assert R.redact_text("q=token%3D" + token) == "q=token%3D[REDACTED:github-token]"


@pytest.mark.parametrize(
    "text",
    [
        "+TOKEN_TTL=3600",
        "+PASSWORD_FILE=/run/secrets/db_password",
        "+    password=self.password,",
        "+    api_key=api_key,",
        "+    token = get_token(request)",
        "+  password: ${DB_PASSWORD}",
        json.dumps({"stdout": "ok\n3 passed in 0.12s\n", "stderr": ""}),
        json.dumps(json.dumps({"cmd": "pytest -q", "output": "ok\n1 passed\n"})),
        "GET /search?q=password%20reset&page=2 HTTP/1.1",
        "https://example.com/login?next=%2Fdashboard%3Ftab%3Dsettings",
        'print("token:\\t%s" % name)',
        'log.info("%3d tokens, %5.1f%% cached", n, pct)',
        'path = "C:\\\\new\\\\tokens\\\\reader.py"',
        "+def test_password_reset_requires_token(client):",
        "sort -u names.txt | uniq",
        "python -u -m pytest tests/test_a.py::test_b",
        "PWD=/home/me/projects/shop",
        "pwd: /home/me/projects/shop",
        "+  token_file: ./run/secrets/token",
    ],
)
def test_harmless_names_values_and_escaped_output_are_left_alone(text: str) -> None:
    assert R.redact_text(text) == text


def test_a_big_diff_without_secrets_comes_back_unchanged() -> None:
    code = (DATA / "ordinary_code.py.txt").read_text()
    diff = "".join(f"+{line}\n" for line in code.splitlines()) * 400
    assert len(diff) > 300_000
    assert R.redact_text(diff) == diff
    stringified = json.dumps({"patch": diff})
    assert R.redact_text(stringified) == stringified


def test_secrets_inside_a_big_stringified_diff_are_found_through_its_decoded_lines() -> None:
    code = (DATA / "ordinary_code.py.txt").read_text()
    diff = "".join(f"+{line}\n" for line in code.splitlines()) * 200
    planted = diff + "+PASSWORD=" + PASSWORD + "\n+  api_key: " + A36[:24] + "\n" + diff
    out = R.redact_text(json.dumps({"patch": planted}))
    assert len(out) > 100_000
    assert PASSWORD not in out
    assert A36[:24] not in out
    assert json.loads(out)["patch"].count("[REDACTED:") == 2


@pytest.mark.parametrize(
    "text",
    [
        "sk-" * 30_000,
        "\\" * 100_000,
        "passpass" * 12_000,
        "token=" * 15_000,
        "PASSWORD=x" + " " * 100_000 + "y\n",
        "eyJ" * 30_000,
        "%25" * 30_000,
        ("password" + " " * 50) * 2000,
    ],
    ids=["sk-", "backslashes", "names", "name=", "spaces", "eyJ", "%25", "name spaces"],
)
def test_pathological_input_takes_linear_time(text: str) -> None:
    start = time.perf_counter()
    R.redact_text(text)
    assert time.perf_counter() - start < 20  # quadratic rules took minutes here; linear ones well under a second


def test_the_mixed_case_test_says_the_same_as_the_character_predicates_for_ascii_and_other_text() -> None:
    import random

    from skills_store.redact_rules import _mixed

    rng = random.Random(7)
    alphabet = "aZ09_/-+=" + "ßÉé²٣ǅ" + "xyzXYZ"

    def reference(text: str) -> bool:
        return any(c.isdigit() for c in text) and any(c.isupper() for c in text) and any(c.islower() for c in text)

    texts = ["", "abc", "ABC1", "aB1", "src/pkg/mod_12.py", "É1a", "²aB", "ǅ1b", "٣aB"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 30))) for _ in range(3000)]
    assert [_mixed(t) for t in texts] == [reference(t) for t in texts]


def test_a_value_repeating_short_strings_redacts_each_occurrence_as_the_string_alone() -> None:
    token = "gh" + "p_" + A36
    value = {
        "files": [{"action": "modify", "path": f"src/m{i}.py"} for i in range(50)],
        "notes": [f"token {token}", f"token {token}", "plain"],
        "nested": [[f"token {token}"], ("modify",)],
    }
    out = R.redact(value)
    assert out["notes"] == [R.redact_text(f"token {token}")] * 2 + ["plain"]
    assert "[REDACTED:github-token]" in out["notes"][0]
    assert out["nested"] == [[out["notes"][0]], ["modify"]]
    assert out["files"] == [{"action": "modify", "path": f"src/m{i}.py"} for i in range(50)]


def test_a_dict_key_holding_a_secret_is_redacted_like_a_value_and_plain_keys_are_kept() -> None:
    token = "gh" + "p_" + A36
    value = {
        token: "value",
        "path": "src/app.py",
        "Content-Type": "text/plain",
        "nested": {f"Bearer {token}": [1], "exit_code": 0},
        7: "a key that is no string",
    }
    out = R.redact(value)
    assert out == {
        "[REDACTED:github-token]": "value",
        "path": "src/app.py",
        "Content-Type": "text/plain",
        "nested": {"Bearer [REDACTED:github-token]": [1], "exit_code": 0},
        7: "a key that is no string",
    }
    assert list(out)[1:3] == ["path", "Content-Type"]
    assert token not in repr(out)


def test_two_secret_keys_that_redact_alike_keep_both_entries() -> None:
    first, second = "gh" + "p_" + A36, "gh" + "p_" + A36[::-1]
    out = R.redact({first: 1, second: 2, "[REDACTED:github-token] #2": 3})
    assert sorted(out.values()) == [1, 2, 3]
    assert out["[REDACTED:github-token]"] == 1
    assert first not in repr(out)
    assert second not in repr(out)


def test_a_key_holding_a_secret_is_redacted_every_time_not_only_the_first() -> None:
    redactor = Redactor()
    token = "gh" + "p_" + A36
    for _ in range(3):
        assert redactor.redact({token: 1, "plain": 2}) == {"[REDACTED:github-token]": 1, "plain": 2}
    assert redactor.redact({"plain": 3}) == {"plain": 3}


def test_a_key_is_redacted_by_the_extra_patterns_too() -> None:
    redactor = Redactor([r"corp-\d{6}"])
    assert redactor.redact({"corp-123456": "x", "corp": "y"}) == {"[REDACTED:custom]": "x", "corp": "y"}


def test_a_redacted_key_never_takes_the_place_of_a_key_already_there() -> None:
    token = "gh" + "p_" + A36
    out = R.redact({token: 1, "[REDACTED:github-token]": 2})
    assert out == {"[REDACTED:github-token] #2": 1, "[REDACTED:github-token]": 2}


GH = "gh" + "p_" + "Q7wErTy8Ui9OpAsDfGhJkLzXcVbNm1234Ab"
OPENAI = "sk-" + "proj-" + "Xy9ZaBcDeFgHiJkLmNoPqRsTuVwXyZ1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZIh0GfEdCbA9876"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"AssertionError: assert '{GH[:12]}...{GH[-13:-1]}' == '{GH[:12]}...{GH[-12:]}'", "github-token"),
        (f"AssertionError: assert '{OPENAI[:12]}...{OPENAI[-13:-1]}' == 'x'", "openai-key"),
        (f"E   - {GH[:12]}\u2026{GH[-12:]}", "github-token"),
        (f'"message": "assert \\u0027{GH[:12]}...{GH[-12:]}\\u0027 == \\u0027x\\u0027"', "github-token"),
        ("sk-" + "ant-api03-" + A36[:10] + "..." + A36[-10:], "anthropic-key"),
        ("xo" + "xb-1234567890..." + A36[:8], "slack-token"),
        ("sk_" + "live_" + A36[:10] + "...", "stripe-key"),
        (GH[:20] + "...", "github-token"),
    ],
)
def test_a_key_shortened_by_an_elision_is_redacted_with_its_tail(text: str, kind: str) -> None:
    """pytest prints a long string as its head, `...` and its tail: both halves are part of the key."""
    out = R.redact_text(text)
    assert f"[REDACTED:{kind}]" in out
    for secret in (GH, OPENAI, A36):
        for fragment in (secret[4:12], secret[-12:-1], secret[-8:]):
            assert fragment not in out


@pytest.mark.parametrize(
    "text",
    [
        "set OPENAI_API_KEY to your key (sk-" + "proj-...)",
        "a token looks like gh" + "p_...",
        "gh" + "p_xxxxxxxxxxxx... (masked)",
        "Reading hf" + "_token...",
        "Calling hf" + "_hub_download...",
        "the risk-Ab12cd... ratio",
        "loading..." + " done",
    ],
)
def test_an_elided_prefix_without_a_random_looking_body_is_left_alone(text: str) -> None:
    assert R.redact_text(text) == text


def test_pytests_own_shortened_assertion_message_keeps_no_fragment_of_the_key(tmp_path: Path) -> None:
    test = tmp_path / "test_key.py"
    test.write_text(
        f"def test_key():\n    expected = {GH!r}\n    assert expected[:-1] + 'A' == expected\n"
        f"def test_openai():\n    expected = {OPENAI!r}\n    assert expected[:-1] + '7' == expected\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    messages = [line for line in run.stdout.splitlines() if line.startswith("E ")]
    assert any("..." in m for m in messages), run.stdout  # pytest shortened the strings
    assert any("identical leading characters" in m for m in messages), run.stdout  # and diffed their tails
    out = R.redact_text("\n".join(messages))
    assert "[REDACTED:github-token]" in out
    assert "[REDACTED:openai-key]" in out
    for secret in (GH, OPENAI):
        assert secret[4:12] not in out
        assert secret[-8:-1] not in out


def test_pytests_diff_of_ordinary_strings_is_left_alone() -> None:
    message = (
        "AssertionError: assert 'hello wonderful world of tests, version 12' == 'hello wonderful world of tests, "
        "version 13'\n  \n  Skipping 38 identical leading characters in diff, use -v to show\n  - sion 12\n"
        "  ?        ^\n  + sion 13\n  ?        ^"
    )
    assert R.redact_text(message) == message


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("deploy with password: hunter2hunter2 now", "deploy with password: [REDACTED:yaml-secret] now"),
        ("the db password: pass1word, then restart", "the db password: [REDACTED:yaml-secret], then restart"),
        ("const cfg = {token: tokenValue2, user: u}", None),
        ("opts = {password: user_pw1}", None),
        ("{api_key: base64Encoded}", None),
    ],
)
def test_a_lower_case_word_with_digits_inside_after_a_secret_name_mid_line_is_a_password_not_code(
    text: str, redacted: str | None
) -> None:
    assert R.redact_text(text) == (redacted or text)
