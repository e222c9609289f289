"""AWS credentials that stand beside their access key id rather than after a name, part of the rules of
`skills_store.redact`.

A secret access key is 40 characters of base64 with nothing of its own to tell it by, and the CLI and the console
print it without a `KEY=` before it: `aws iam create-access-key --output text` puts it in a row after the id,
`aws configure` on the line after the id's prompt, the console's credentials CSV in the column after the id's. So a
key is looked for after an `AKIA`/`ASIA` id, on its line and the lines that follow up to a blank one. The console's
CSV also holds the user's password, in the column before the id. (Keys after a name, `aws_secret_access_key = ...`,
and session tokens, known by their prefix, are rules of `redact_rules` and `redact_formats`.)
"""

from __future__ import annotations

import re

from skills_store.redact_formats import Rule, _rule
from skills_store.redact_random import decodes_to_text, path_like, shannon_entropy, word_share

#: The ids that come with a secret key: a user's (`AKIA`) and a temporary one (`ASIA`).
_KEY_ID = r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
#: From the id to its key: the rest of the line and the lines after it, up to a blank line, 400 characters at most.
_GAP = r"(?:[^\n]|\n(?![ \t]*\n)){0,400}?"
#: 40 characters of base64 standing alone, with an upper- and a lower-case letter: a SHA (hex) is not one.
_SECRET_KEY = (
    r"(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]{0,39}[A-Z])(?=[A-Za-z0-9/+]{0,39}[a-z])"
    r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
)


def _secret_key_ok(match: re.Match[str]) -> bool:
    """Random, not a name (`getUserAccountSettingsHandlerFactory2ab`) nor a path (`org/cpython/file/<sha>/Lib/x`).

    Laxer than the randomness test of a token standing anywhere: next to its id, a key without a digit (one in
    a thousand) or with runs of capitals that read as words (one in fifty) is still a key."""
    key = match["s"]
    if word_share(key) > 0.75 or shannon_entropy(key) < 4.2 or decodes_to_text(key):
        return False  # a name, or base64 of text (an ETag, test data)
    return key.count("/") < 2 or not path_like(key)


AWS_RULES: tuple[Rule, ...] = (
    _rule("aws-secret-key", _KEY_ID + _GAP + _SECRET_KEY, "AKIA", "ASIA", group="s", check=_secret_key_ok),
    _rule(
        "aws-console-password",
        r"User name,Password,Access key ID,Secret access key[^\n]*\n[^,\n]*,(?P<s>[^,\n]+),(?:AKIA|ASIA)",
        "user name,password,access key",
        group="s",
    ),
)
