"""Redactor: secrets become `[REDACTED:<kind>]`; ordinary code, hashes, UUIDs and base64 data stay as they are.

Secrets are assembled at run time so that no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

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
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("") == 0.0


def test_empty_and_secret_free_texts_come_back_as_they_were() -> None:
    assert R.redact_text("") == ""
    assert R.redact(None) is None
    assert R.redact(3.5) == 3.5
