"""The samples of the redaction benchmark (`bench.redact`): secrets of 21 kinds generated from a seed in realistic
formats, the contexts they are placed in beyond `bench/data/redaction/contexts.json`, the clean look-alikes, the
forms agents store text in (JSON escapes, JSON of JSON, URL encoding), and the test of whether a secret leaked."""

from __future__ import annotations

import base64
import json
import random
import string
import urllib.parse
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "redaction"
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "/+"


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _jwt(rng: random.Random) -> str:
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(json.dumps({"sub": _r(rng, 10), "iat": rng.randrange(10**9, 2 * 10**9)}).encode())
    return f"{head}.{body}.{_b64url(rng.randbytes(32))}"


def _pem(rng: random.Random) -> str:
    label = rng.choice(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"])
    lines = [base64.b64encode(rng.randbytes(48)).decode() for _ in range(6)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _slashed(rng: random.Random) -> str:
    """A 40-character AWS-alphabet key holding two or more `/` (one in seven does), which paths look like."""
    while True:
        key = _r(rng, 40, B64)
        if key.count("/") >= 2 and key[0] != "/":
            return key


GENERATORS: dict[str, Callable[[random.Random], str]] = {
    "openai": lambda g: "sk-" + _r(g, 48),
    "openai-project": lambda g: "sk-proj-" + _r(g, 74, URLSAFE) + _r(g, 2, string.digits),
    "anthropic": lambda g: "sk-ant-api03-" + _r(g, 93, URLSAFE) + "AA",
    "aws-access-key": lambda g: g.choice(["AKIA", "ASIA"]) + _r(g, 16, string.ascii_uppercase + string.digits),
    "aws-secret": lambda g: _r(g, 40, B64),
    "github-classic": lambda g: g.choice(["ghp_", "gho_", "ghs_"]) + _r(g, 36),
    "github-fine-grained": lambda g: "github_pat_" + _r(g, 22) + "_" + _r(g, 59),
    "slack-token": lambda g: f"xoxb-{g.randrange(10**11, 10**12)}-{g.randrange(10**11, 10**12)}-{_r(g, 24)}",
    "slack-webhook": lambda g: f"https://hooks.slack.com/services/T{_r(g, 8).upper()}/B{_r(g, 8).upper()}/{_r(g, 24)}",
    "google-api-key": lambda g: "AIza" + _r(g, 35, URLSAFE),
    "google-oauth": lambda g: "ya29." + _r(g, 80, URLSAFE),
    "stripe": lambda g: g.choice(["sk_live_", "rk_live_"]) + _r(g, 24),
    "huggingface": lambda g: "hf_" + _r(g, 34),
    "jwt": _jwt,
    "private-key": _pem,
    "password": lambda g: _r(g, g.randrange(12, 21), ALNUM + "!#%^*_+=~"),
    "generic-token": lambda g: _r(g, g.randrange(32, 41)),
    "hex-secret": lambda g: _r(g, 40, "0123456789abcdef"),
    "aws-session-token": lambda g: (
        "IQoJb3JpZ2luX2VjE" + _r(g, 2) + "//////////wEaC" + _r(g, g.randrange(500, 900), B64)
    ),
    "base64-key": lambda g: base64.b64encode(g.randbytes(g.choice([24, 30, 32, 33, 48]))).decode(),
    "slashed-key": _slashed,
}
#: Contexts keyed by which secrets they suit; `{s}` is the secret.
KEYED = {
    "aws-secret": ("aws", "aws-beside", "inline"),
    "password": ("password", "password-more", "inline"),
    "generic-token": ("token", "any", "inline"),
    "hex-secret": ("token", "inline"),
    "aws-session-token": ("session", "any"),
    "base64-key": ("token", "any", "inline"),
    "slashed-key": ("token", "any", "inline", "aws-beside"),
}
_ID = "AKIA" + "Q3EGRYLHNUXWZ7TK"
#: Contexts beyond `contexts.json`: secrets that stand beside their access key id or prompt rather than after a
#: name (the AWS CLI's and console's output), STS session tokens, URL passwords with no user, mysql's glued `-p`,
#: INI `password = value` and sshpass `-p`.
MORE_CONTEXTS = {
    "aws-beside": [
        f"ACCESSKEY\t{_ID}\t2026-03-02T10:15:22Z\t{{s}}\tActive\tbob",
        f"AWS Access Key ID [None]: {_ID}\nAWS Secret Access Key [None]: {{s}}\nDefault region name [None]: eu-west-1",
        "AWS Secret Access Key [****************WZ7T]: {s}",
        f"Access key ID,Secret access key\n{_ID},{{s}}",
        "User name,Password,Access key ID,Secret access key,Console login link\n"
        f"bob,,{_ID},{{s}},https://123456789012.signin.aws.amazon.com/console",
        f"{_ID} {{s}}",
        f"{_ID}\n{{s}}",
        "aws configure set aws_secret_access_key {s} --profile ci",
        f'{{"AccessKey": {{"UserName": "bob", "AccessKeyId": "{_ID}", "Status": "Active", '
        '"SecretAccessKey": "{s}"}}',
    ],
    "session": [
        '{\n    "Credentials": {\n        "AccessKeyId": "ASIAQ3EGRYLHNUXWZ7TK",\n        "SessionToken": "{s}",\n'
        '        "Expiration": "2026-03-02T22:15:22+00:00"\n    }\n}',
        "export AWS_SESSION_TOKEN={s}",
        "aws_session_token = {s}",
        "AWS_SESSION_TOKEN: {s}",
    ],
    "password-more": [
        "redis://:{s}@cache:6379/0",
        "amqp://:{s}@rabbit:5672/",
        "DATABASE_URL=postgres://:{s}@db:5432/app",
        "mongodb+srv://:{s}@cluster0.ab1cd.mongodb.net/test",
        "mysql -u root -p'{s}' app < dump.sql",
        'mysqldump -h db -uroot -p"{s}" shop > shop.sql',
        "User name,Password,Access key ID,Secret access key,Console login link\n"
        f"bob,{{s}},{_ID},,https://123456789012.signin.aws.amazon.com/console",
        "[database]\nhost = db.internal\npassword = {s}\nport = 5432",
        "secret_key = {s}",
        "sshpass -p '{s}' ssh deploy@web1 uptime",
        "sshpass -p {s} rsync -a dist/ deploy@web1:/srv/app",
    ],
}
#: Clean samples beyond `clean.txt`: paths and URLs whose parts look random (an id, a commit, a temp dir), the
#: look-alikes of the contexts above (no key beside the id, placeholders, `-p` of other commands).
MORE_CLEAN = [
    "password = get_password(user)",
    "token = self._token",
    "SECRET_KEY = settings_key",
    "password = password_input  # from the form",
    "sshpass -f ~/.ssh/pw ssh -p 2222 deploy@web1",
    "sshpass -e ssh -p 22 deploy@web1",
    "/usr/lib/python3.11/site-packages/x.py",
    "src/pkg/mod.py",
    "a/b/c",
    "tests/test_x.py::TestA::test_b",
    "https://github.com/SeanLee97/AnglE/blob/5155458cfa6f7fbc7a8a19a66960cd86eadfd534/angle_emb/loss.py",
    "https://github.com/lyuwenyu/RT-DETR/blob/94f5e16708329d2f2716426868ec89aa774af016/RTDetrV2_pytorch/src/zoo/RTDetrV2/hybrid_encoder.py",
    "https://cdn-uploads.huggingface.co/production/uploads/66d732effe6684fc16b12c28/Io_5OCmftsmH-n158ZtPs.png",
    "https://huggingface.co/stepfun-ai/GOT-OCR-2.0-hf",
    "ftp://ftp.example.ca/obj/s4/f2/dsk2/ftp01/MQ57336.pdf",
    "/var/folders/4q/kr2t0_bs3gx2s7bdyf4z7hr40000gn/T/pytest-of-me/pytest-3/test_a0",
    "/private/var/folders/7g/kx0r2bq97fgb4x8v0ql1z0xh0000gn/T/tmpab3x9q",
    "https://forms.gle/forms/PP1AGvNHpSaJP8to1",
    "/usr/share/alsa/ucm2/OMAP/abe-twl6040/SDP4430/HiFiLP.conf",
    "/usr/include/llvm-14/llvm/CodeGen/VirtRegMap.h",
    "/usr/share/icons/Adwaita/cursors/08e8e1c95fe2fc01f976f1e063a24ccd",
    "0/unicore/lib/InPC/TopAndBottom.pl",
    "https://www.journal.org/Volume_17/PDF/v17i1r66.pdf",
    "redis://:${REDIS_PASSWORD}@cache:6379/0",
    "amqp://:****@rabbit:5672/",
    "http://[::1]:8080/health",
    "mysql -u root -p app < dump.sql",
    "mysql -h db -P3306 -u app --protocol=tcp",
    "mkdir -p src/pkg && pytest -p no:cacheprovider",
    "Access key ID,Secret access key",
    "access_key     ****************WZ7T shared-credentials-file",
    "    region                eu-west-1      config-file    ~/.aws/config",
    "AWS Access Key ID [None]: ",
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f",
]
#: How agents store a text: (name, the sample in that form, the secret in that form).
FORMS: tuple[tuple[str, Callable[[str], str], Callable[[str], str]], ...] = (
    ("plain", lambda t: t, lambda s: s),
    ("json after \\n", lambda t: json.dumps({"stdout": "ok\n" + t}), lambda s: json.dumps(s)[1:-1]),
    ("json after \\t", lambda t: json.dumps({"out": "x\t" + t}), lambda s: json.dumps(s)[1:-1]),
    (
        "json of json",
        lambda t: json.dumps(json.dumps({"stdout": "ok\n" + t})),
        lambda s: json.dumps(json.dumps(s)[1:-1])[1:-1],
    ),
    (
        "url-encoded",
        lambda t: "GET /cb?next=" + urllib.parse.quote(t, safe="") + " HTTP/1.1",
        lambda s: urllib.parse.quote(s, safe=""),
    ),
)
Sample = tuple[str, str, str, str, str]  # kind, form, secret, secret in that form, text


def positives(rng: random.Random) -> list[Sample]:
    """(kind, form, secret, encoded secret, text) for every kind in every context it suits, in every form."""
    contexts = json.loads((DATA / "contexts.json").read_text()) | MORE_CONTEXTS
    out = []
    for kind, gen in GENERATORS.items():
        groups = KEYED.get(kind, ("any", "named", "inline"))
        for template in [t for g in groups for t in contexts[g]]:
            secret = gen(rng)
            if kind == "private-key" and "\n" not in template and "{s}" in template:
                template = "{s}"  # a key block stands on its own lines
            for form, wrap, encode in FORMS:
                out.append((kind, form, secret, encode(secret), wrap(template.replace("{s}", secret))))
    return out


def leaked(secrets: tuple[str, ...], original: str, redacted: str) -> bool:
    """Whether an 8-character piece of a secret (one not found elsewhere in the sample) survived."""
    around = original
    for secret in secrets:
        around = around.replace(secret, "\0")
    pieces = {s[i : i + 8] for s in secrets for i in range(0, max(len(s) - 7, 1), 4)}
    return any(p in redacted for p in pieces if len(p) == 8 and p.strip() and p not in around)
