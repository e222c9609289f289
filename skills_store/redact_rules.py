"""The rules of `skills_store.redact`: what a secret looks like, by its format (`redact_formats`), by its name, by
the id it stands beside (`redact_aws`), or by its randomness (`redact_random`).

Every rule starts at something literal (a provider prefix, `://`, a secret-ish name, `--`): the regex engine
then skips the text between candidates at C speed, which is what keeps redaction of a 10 MB patch affordable.
Rules never require a word boundary before a provider prefix: agents glue tokens to letters (`xghp_...`) and
escaped text puts an `n` or a `D` before them (`\\nghp_...`, `%3Dghp_...`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from skills_store.redact_aws import AWS_RULES
from skills_store.redact_formats import PROVIDER_RULES, Rule, _mixed, _rule
from skills_store.redact_random import HEX_RE, TOKEN_RE, WORD_RE, looks_random, shannon_entropy

__all__ = [
    "PROVIDER_RULES",
    "RULES",
    "SECRET_NAME_RE",
    "TOKEN_RE",
    "Rule",
    "looks_random",
    "secretish",
    "shannon_entropy",
]

#: A word in a name that says its value is a secret; the text around it in the name does not matter.
SECRET_WORD = (
    r"(?:secret|token(?!s|iz|_?count|_?type|_?len|_?ids?\b)|passw(?:or)?d|passwd|pass(?![a-z])|pwd|api[_\-]?key|"
    r"apikey|access[_\-]?key|private[_\-]?key|auth[_\-]?key|credentials?|signing[_\-]?key|encryption[_\-]?key|"
    r"session[_\-]?key|client[_\-]?secret|dsn)"
)
SECRET_NAME = rf"[A-Za-z0-9_.\-]{{0,64}}{SECRET_WORD}[A-Za-z0-9_.\-]{{0,64}}"
SECRET_NAME_RE = re.compile(rf"^{SECRET_NAME}$", re.IGNORECASE)
#: Names of URL query parameters that carry credentials although they do not say "secret".
_QUERY_NAMES = re.compile(r"^(?:key|sig|signature|code|x-amz-signature|x-amz-security-token|x-goog-signature)$", re.I)
#: Names that hold where a secret is, or something about it, not the secret itself.
_ABOUT_A_SECRET = re.compile(
    r"[_.\-](?i:file|path|dir|name|id|type|len|length|count|size|ttl|timeout|url|env)$"
    r"|[a-z](?:File|Path|Dir|Name|Id|Type|Len|Length|Count|Size|Ttl|Timeout|Url|Env)$"
)
#: Values that are placeholders, references or code rather than secrets.
_NOT_A_VALUE_RE = re.compile(
    r"^(?:|none|null|nil|true|false|undefined|\*+|x{3,}|\.{3}|<[^>]*>|\$\{?[A-Za-z_][\w.]*\}?|\{\{.*\}\}|%\(?\w*\)?s|"
    r"\{[\w.\[\]'\"]*\}|pass|password|passwd|secret|changeme|example|placeholder|your[_\-]?\w*|my[_\-]?\w*)$",
    re.IGNORECASE,
)
_CODE_LIKE_RE = re.compile(r"[A-Za-z_][A-Za-z_.]*(?:\[.*\]|\(.*\))?,?")
_EXPRESSION_RE = re.compile(r"[A-Za-z_]\w*(?:\.\w+)+(?:\[.*|\(.*)?|[A-Za-z_]\w*[(\[].*")
_MASKED_RE = re.compile(r"[*xX#./\- ]+")
#: An absolute or relative path (`PWD=/home/me/app`, `token_file: ./run/secrets/t`): where a secret is, not one.
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/(?:[\w.\-]+/)+[\w.\-]*")
_INNER_DIGITS_RE = re.compile(r"[a-z][0-9]+[a-z]")
_CAPITALS_RE = re.compile(r"[A-Z][A-Z_]*")
#: A port mapping (`3306:3306`, `127.0.0.1:3306:3306/tcp`), what `docker run -p` takes.
_PORTS_RE = re.compile(r"[\d.]+(?::[\d.]+)+(?:/\w+)?")


def plain(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value


def value_ok(value: str) -> bool:
    """Not a placeholder, a reference to another variable, a boolean or a number."""
    value = plain(value)
    if _NOT_A_VALUE_RE.match(value) or _MASKED_RE.fullmatch(value) or _PATH_RE.fullmatch(value):
        return False
    return not value.replace(".", "").replace("_", "").isdigit()  # `1.5`, `10_000`


def secretish(value: str) -> bool:
    """A value that could be a password or key: no spaces, and either long or not a plain lowercase word."""
    value = plain(value)
    if not value_ok(value) or len(value) < 6 or any(c.isspace() for c in value):
        return False
    return len(value) >= 16 or not (value.isalpha() and (value.islower() or value.isupper()))


def _yaml_value_ok(value: str) -> bool:
    """A YAML/annotation value that is a secret, not a type or an expression (`token: object,`, `Token: Style()`)."""
    return secretish(value) and not _CODE_LIKE_RE.fullmatch(plain(value))


def _identifier_like(value: str) -> bool:
    """`user_pw1`, `tokenValue2`: mostly words, as code names are; random passwords are not, nor are lower-case
    words with digits inside (`hunter2hunter2`, `pass1word`: what people pick; code names put a digit at the end
    or between words it separates by case or `_`)."""
    words = sum(len(w) for w in WORD_RE.findall(value))
    if not (re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) and words / len(value) > 0.45):
        return False
    return not (value.islower() and "_" not in value and _INNER_DIGITS_RE.search(value))


def _named_ok(match: re.Match[str]) -> bool:
    """`NAME=value` / `name: value` inside a line: a secret name, and a literal value rather than code."""
    name, value = match["name"], match["s"]
    if not SECRET_NAME_RE.match(name) or _ABOUT_A_SECRET.search(name):
        return False
    if value[0] in "\"'":
        return secretish(value)
    if len(value) >= 20 and _mixed(value) and shannon_entropy(value) >= 4.0:
        return True
    if match["sep"] == "=" and name.isupper():  # an environment variable: its value is a literal
        return secretish(value) and not _EXPRESSION_RE.fullmatch(value)
    return _yaml_value_ok(value) and not _identifier_like(value) and not _EXPRESSION_RE.fullmatch(value)


def _url_password_ok(match: re.Match[str]) -> bool:
    """`user:pass@`: a password of 4 characters or more; with no user (`redis://:pw@`) the part is the password.
    A name in capitals is a placeholder of the docs (`gist://:TOKEN@<id>`)."""
    value = match["s"]
    if not value_ok(value) or _CAPITALS_RE.fullmatch(value):
        return False
    return len(plain(value)) >= 4 or not match["user"]


def _query_ok(match: re.Match[str]) -> bool:
    name = match["name"]
    return bool(SECRET_NAME_RE.match(name) or _QUERY_NAMES.match(name)) and secretish(match["s"])


def _spaced_ok(match: re.Match[str]) -> bool:
    """`password = value` alone on its line (INI, `.properties`, a config printed by a tool): a secret name and a
    literal value, not a code name or an expression (`password = get_password()` never gets here, `= self._pw`
    does and is kept), whatever the name's case: `SECRET_KEY = settings_key` is Python, not an env file."""
    name, value = match["name"], match["s"]
    if not SECRET_NAME_RE.match(name) or _ABOUT_A_SECRET.search(name):
        return False
    if _EXPRESSION_RE.fullmatch(value):  # `= rust_openssl.hpke.MLKEM768X25519PrivateKey`
        return False
    if len(value) >= 20 and _mixed(value) and shannon_entropy(value) >= 4.0:
        return True
    # A digit inside a word (`s3cretPassw0rd`) is how people make a password; code names put one at the end of a
    # word (`OAuth2Auth`, `Base64Encoder`).
    return _yaml_value_ok(value) and (not _identifier_like(value) or bool(_INNER_DIGITS_RE.search(value)))


def _env_ok(match: re.Match[str]) -> bool:
    name = match["name"]
    return bool(SECRET_NAME_RE.match(name)) and not _ABOUT_A_SECRET.search(name) and value_ok(match["s"])


def _group_ok(test: Callable[[str], bool], group: str = "s") -> Callable[[re.Match[str]], bool]:
    return lambda m: test(m[group])


#: Every secret name contains one of these (see SECRET_WORD).
NAME_NEEDLES = ("secret", "token", "pass", "pwd", "key", "credential", "dsn")


#: An unquoted value inside a line ends at white space, quotes, escapes and the punctuation around values.
_BARE = r"[^\s\"'`\\,;&|<>(){}\[\]]+"
_SSHPASS = r"(?<![\w\-/.])sshpass(?:[ \t]+-(?:[vhV]+|P[ \t]*[^\s]{1,64})){0,4}[ \t]+-p[ \t]*"
CONTEXT_RULES: tuple[Rule, ...] = (
    _rule(
        "aws-secret-key",
        r"(?i:aws)[\w.\- ]{0,30}?(?i:secret|key)[\w.\- ]{0,20}(?:\[[^\]\n]{0,64}\])?[\"']?(?:\s*[:=]\s*|[ \t]+)[\"']?"
        r"(?P<s>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        "aws",
        group="s",
        windowed=True,
        check=_group_ok(lambda v: not HEX_RE.match(v)),
    ),
    _rule(
        "aws-session-token",
        r"(?i:aws)[\w.\-]{0,30}?(?i:session)[_\-]?(?i:token)[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<s>[A-Za-z0-9/+]{32,}={0,2})",
        "aws",
        group="s",
        windowed=True,
        check=_group_ok(lambda v: len(v) > 256 or looks_random(v)),  # not `awsSessionTokenProviderFromEnv...`
    ),
    _rule(
        "url-password",
        r"://(?P<user>[^\s:/@\"'<>\\]{0,128}):(?P<s>[^\s@/\"'<>\\]{1,256})@",
        "://",
        group="s",
        check=_url_password_ok,
    ),
    _rule(
        "url-secret",
        r"[?&;](?P<name>[A-Za-z0-9_.\-]{1,64})=(?P<s>[^&#\s\"'<>\\]{1,1024})",
        "=",
        group="s",
        check=_query_ok,
    ),
    _rule(
        "auth-header",
        r"(?i:(?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token|bot)\s+|bearer\s+)"
        r"(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)",
        "bearer",
        "authorization",
        group="s",
        windowed=True,
        check=_group_ok(secretish),
    ),
    _rule(
        "env-secret",
        r"^[+\-]?[ \t]*(?:export[ \t]+)?(?P<name>[A-Z][A-Z0-9_]*)="
        r"(?P<s>\"[^\"\n]+\"|'[^'\n]+'|[^\s\"'#](?:[^\n#]*[^\s#])?)[ \t]*(?:#.*)?$",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        flags=re.MULTILINE,
        check=_env_ok,
    ),
    _rule(
        "env-secret",
        rf"(?P<name>(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}})(?P<sep>=)(?P<s>{_BARE})",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        check=_named_ok,
    ),
    _rule(
        "assignment-secret",
        rf"(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}}[\"']?[ \t]{{0,8}}(?::=|=|:|=>)\s{{0,16}}"
        r"(?P<q>[\"'])(?P<s>(?:(?!(?P=q))[^\n]){1,512}?)(?P=q)",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        check=_group_ok(secretish),
    ),
    _rule(
        "assignment-secret",
        # The name starts its line or a tab-separated field (a diff's `+`/`-` and indentation aside: also what makes
        # the rule cheap); the value runs to the end of the line, a `#`/`;` comment or the quote closing the string
        # the line is in (a tool's output in JSON): `password = x if y else z` is code.
        r"(?:^[+\-]?|(?<=\t))[ \t]*[A-Za-z0-9_.\-]{0,64}?"
        rf"(?P<name>(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}})[ \t]+=[ \t]+(?P<s>{_BARE})"
        r"(?=[ \t]*(?:[#;].*)?$|[\"'])",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        flags=re.MULTILINE,
        check=_spaced_ok,
    ),
    _rule(
        "cli-secret",
        r"(?i:--(?:password|passwd|token|api-key|apikey|secret|client-secret|access-key))(?:=|\s+)(?P<s>[^\s\"'-][^\s\"']*)",
        "--",
        group="s",
        check=_group_ok(secretish),
    ),
    _rule(
        "cli-secret",
        # The client as a word of its own (not `/usr/include/mysql`, `mysqlclient`, `mysql-connector`), then its
        # `-p` on the same command: `gcc -I/usr/include/mysql ... -pthread` and `find /var/lib/mysql -print` are not.
        r"(?<![\w\-/.])(?:mysql|mariadb)(?:dump|admin|import|show|check|slap|-dump|-admin)?[ \t][^\n|;&]{0,256}?"
        r"(?<=[ \t])-p(?P<q>[\"']?)(?P<s>[^\s\"']+)(?P=q)(?![^\s|;&])",
        "mysql",
        "mariadb",
        group="s",
        check=_group_ok(lambda v: value_ok(v) and not _PORTS_RE.fullmatch(v)),  # `docker run ... mysql -p3306:3306`
    ),
    # sshpass's own `-p` (after its other options, before the command it runs: not `ssh -p 2222`), quoted or not.
    _rule(
        "cli-secret",
        _SSHPASS + r"(?P<q>[\"'])(?P<s>(?:(?!(?P=q))[^\n]){1,256})(?P=q)",
        "sshpass",
        group="s",
        check=_group_ok(value_ok),
    ),
    _rule(
        "cli-secret",
        _SSHPASS + r"(?P<s>[^\s\"'|;&][^\s|;&]{0,255})",
        "sshpass",
        group="s",
        check=_group_ok(value_ok),
    ),
    _rule(
        "cli-secret",
        r"-(?<![\w-]-)(?:u|-user)[ =][\"']?[^\s:\"'/@]{1,128}:(?P<s>[^\s\"'@]{1,256})",
        "-u",
        group="s",
        check=_group_ok(lambda v: value_ok(v) and len(v) >= 4),
    ),
    _rule(
        "yaml-secret",
        rf"^[+\-]?[ \t]*-?[ \t]*(?i:{SECRET_NAME})[ \t]*:[ \t]+(?P<s>[^\s\"'#|>&*!\[{{][^\s]*)[ \t]*$",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        flags=re.MULTILINE,
        check=_group_ok(_yaml_value_ok),
    ),
    _rule(
        "yaml-secret",
        rf"(?P<name>(?i:{SECRET_WORD})[A-Za-z0-9_.\-]{{0,64}})[\"']?(?P<sep>:)[ \t]{{1,8}}(?P<s>{_BARE})",
        *NAME_NEEDLES,
        group="s",
        windowed=True,
        check=_named_ok,
    ),
)
RULES: tuple[Rule, ...] = (*PROVIDER_RULES, *AWS_RULES, *CONTEXT_RULES)
