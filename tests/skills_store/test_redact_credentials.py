"""Redactor: credentials that stand beside their name or id rather than after it, and random keys with slashes.

AWS secret keys next to their access key id (`aws configure`, the console's credentials CSV, `--output text`), STS
session tokens, URL passwords with an empty user, mysql's glued `-p`, sshpass's `-p`, `password = value` alone on
its line (INI, `.properties`) and base64 keys holding two or more `/` that were taken for paths. Secrets are
assembled at run time so that no credential-shaped literal sits in the repository.
"""

from __future__ import annotations

import json
import random
import string
import time

import pytest

from skills_store.redact import Redactor, looks_random

R = Redactor()
KEY_ID = "AKIA" + "Q3EGRYLHNUXWZ7TK"
TEMP_ID = "ASIA" + "Q3EGRYLHNUXWZ7TK"
#: 40 characters of the secret key alphabet, with three slashes and a plus, as AWS issues them.
SECRET = "wJa1rXUtnFEMI/K7MDENG/bPxRfiC" + "3XAMP/E+KEY"
SESSION = (
    "IQoJb3JpZ2luX2Vj" + "EJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDa" + "x7Pq+Zk9/Lm2Wv4Rt8Ns1Yb3Hc6Jd0Fe5Gg" * 16 + "=="
)
PASSWORD = "s3cretPassw0rd"
ALPHABET = string.ascii_letters + string.digits + "/+"


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"redis://:{PASSWORD}@cache:6379/0", "redis://:[REDACTED:url-password]@cache:6379/0"),
        ("amqp://:pw@rabbit", "amqp://:[REDACTED:url-password]@rabbit"),
        (
            f"DATABASE_URL=postgres://:{PASSWORD}@db:5432/app",
            "DATABASE_URL=postgres://:[REDACTED:url-password]@db:5432/app",
        ),
        (
            f"mongodb+srv://:{PASSWORD}@cluster0.ab1cd.mongodb.net/test",
            "mongodb+srv://:[REDACTED:url-password]@cluster0.ab1cd.mongodb.net/test",
        ),
    ],
)
def test_a_url_password_with_an_empty_user_is_redacted(text: str, redacted: str) -> None:
    assert R.redact_text(text) == redacted


def test_an_empty_user_password_is_redacted_where_placeholders_and_ports_are_not() -> None:
    texts = [
        f"amqp://:{PASSWORD}@rabbit:5672/",
        "redis://:${REDIS_PASSWORD}@cache:6379/0",
        "redis://:****@cache:6379/0",
        "gist://:TOKEN@<gist_id>/file.txt",
        "http://[::1]:8080/health",
        "postgres://localhost:5432/app",
    ]
    assert [R.redact_text(t) for t in texts] == ["amqp://:[REDACTED:url-password]@rabbit:5672/", *texts[1:]]


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"mysql -u root -p'{PASSWORD}' app < dump.sql", "mysql -u root -p'[REDACTED:cli-secret]' app < dump.sql"),
        (f"mysqldump -uroot -p{PASSWORD} shop > shop.sql", "mysqldump -uroot -p[REDACTED:cli-secret] shop > shop.sql"),
        (f'mariadb -h db -p"{PASSWORD}" -e "select 1"', 'mariadb -h db -p"[REDACTED:cli-secret]" -e "select 1"'),
    ],
)
def test_a_mysql_password_glued_to_its_p_option_is_redacted(text: str, redacted: str) -> None:
    assert R.redact_text(text) == redacted


def test_mysqls_p_option_is_redacted_where_a_prompt_a_port_and_other_commands_p_are_not() -> None:
    texts = [
        f"mysql -h db -p{PASSWORD}",
        "mysql -u root -p app < dump.sql",
        "mysql -h db -P3306 -u app --protocol=tcp",
        "mkdir -p src/pkg && pytest -p no:cacheprovider",
        "mysql -h db -e 'select 1' && mkdir -pv out",
    ]
    assert [R.redact_text(t) for t in texts] == ["mysql -h db -p[REDACTED:cli-secret]", *texts[1:]]


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (f"sshpass -p {PASSWORD} ssh deploy@web1", "sshpass -p [REDACTED:cli-secret] ssh deploy@web1"),
        (f"sshpass -p{PASSWORD} scp f web1:", "sshpass -p[REDACTED:cli-secret] scp f web1:"),
        ("sshpass -p 'two words' ssh web1", "sshpass -p '[REDACTED:cli-secret]' ssh web1"),
        (
            f'sshpass -v -P assword -p "{PASSWORD}" rsync -a d/ web1:/srv',
            'sshpass -v -P assword -p "[REDACTED:cli-secret]" rsync -a d/ web1:/srv',
        ),
    ],
)
def test_sshpasss_own_p_option_is_redacted(text: str, redacted: str) -> None:
    assert R.redact_text(text) == redacted


def test_the_p_of_the_command_sshpass_runs_and_sshpass_without_p_are_kept() -> None:
    texts = [
        "sshpass -f ~/.ssh/pw ssh -p 2222 deploy@web1",
        "sshpass -e ssh -p 22 web1",
        "sshpass -d 3 scp -P 2222 f web1:",
        "sshpass -p $SSHPASS ssh web1",
    ]
    assert [R.redact_text(t) for t in texts] == texts


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        ("secret_key = hunter2pass", "secret_key = [REDACTED:assignment-secret]"),
        ("[db]\nhost = db\npassword = s3cr3t!x\n", "[db]\nhost = db\npassword = [REDACTED:assignment-secret]\n"),
        ("SECRET_KEY = django-insecure-8x!k2", "SECRET_KEY = [REDACTED:assignment-secret]"),
        (f"+db_password = {PASSWORD}  # staging", "+db_password = [REDACTED:assignment-secret]  # staging"),
        (
            f'{{"stdout": "[db]\\npassword = {PASSWORD}"}}',
            '{"stdout": "[db]\\npassword = [REDACTED:assignment-secret]"}',
        ),
    ],
)
def test_a_secret_name_equals_a_bare_value_alone_on_its_line_is_redacted(text: str, redacted: str) -> None:
    assert R.redact_text(text) == redacted


def test_a_spaced_assignment_of_code_is_kept() -> None:
    texts = [
        "password = get_password(user)",
        "password = self._password",
        "token = tokens[0]",
        "SECRET_KEY = settings_key",
        "password = password_input  # from the form",
        "password = password1",
        "password = None",
        "key = keyfunc",
        f"password = {PASSWORD} if strict else None",
        "MLKEM768X25519PrivateKey = rust_openssl.hpke.MLKEM768X25519PrivateKey",
        "SECRETS_DIR_MAX_ENTRIES = 10_000",
        "pwd = /home/me/app",
    ]
    assert [R.redact_text(t) for t in texts] == texts


@pytest.mark.parametrize(
    ("text", "redacted"),
    [
        (
            f"ACCESSKEY\t{KEY_ID}\t2026-03-02T10:15:22Z\t{SECRET}\tActive\tbob",
            "ACCESSKEY\t[REDACTED:aws-access-key]\t2026-03-02T10:15:22Z\t[REDACTED:aws-secret-key]\tActive\tbob",
        ),
        (
            f"AWS Access Key ID [None]: {KEY_ID}\nAWS Secret Access Key [None]: {SECRET}\nDefault region name [None]: ",
            "AWS Access Key ID [None]: [REDACTED:aws-access-key]\nAWS Secret Access Key [None]: "
            "[REDACTED:aws-secret-key]\nDefault region name [None]: ",
        ),
        (
            f"AWS Secret Access Key [****************WZ7T]: {SECRET}",
            "AWS Secret Access Key [****************WZ7T]: [REDACTED:aws-secret-key]",
        ),
        (
            f"Access key ID,Secret access key\n{KEY_ID},{SECRET}\n",
            "Access key ID,Secret access key\n[REDACTED:aws-access-key],[REDACTED:aws-secret-key]\n",
        ),
        (
            "User name,Password,Access key ID,Secret access key,Console login link\n"
            f"bob,{PASSWORD},{KEY_ID},{SECRET},https://123456789012.signin.aws.amazon.com/console",
            "User name,Password,Access key ID,Secret access key,Console login link\n"
            "bob,[REDACTED:aws-console-password],[REDACTED:aws-access-key],[REDACTED:aws-secret-key],"
            "https://123456789012.signin.aws.amazon.com/console",
        ),
        (f"{KEY_ID}\n{SECRET}", "[REDACTED:aws-access-key]\n[REDACTED:aws-secret-key]"),
        (
            f"aws configure set aws_secret_access_key {SECRET} --profile ci",
            "aws configure set aws_secret_access_key [REDACTED:aws-secret-key] --profile ci",
        ),
    ],
)
def test_an_aws_secret_key_beside_its_access_key_id_or_its_prompt_is_redacted(text: str, redacted: str) -> None:
    assert R.redact_text(text) == redacted


def test_after_an_access_key_id_only_a_secret_key_is_redacted_not_a_sha_a_path_or_a_name() -> None:
    after = [
        f"Active {SECRET}",
        "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f",  # a git SHA is 40 characters too
        "written to src/skills_store/trajectories/sqlite_store.py",
        "getUserAccountSettingsHandlerFactory2ab",
    ]
    expected = ["Active [REDACTED:aws-secret-key]", *after[1:]]
    assert [R.redact_text(f"{KEY_ID} {a}") for a in after] == [f"[REDACTED:aws-access-key] {e}" for e in expected]
    # a blank line ends the credentials: the key after it is left to the randomness test
    assert Redactor(entropy=False).redact_text(f"{KEY_ID}\n\n{SECRET}") == f"[REDACTED:aws-access-key]\n\n{SECRET}"


def test_sts_credentials_with_a_long_session_token_are_redacted_in_json_and_config_forms() -> None:
    output = json.dumps(
        {
            "Credentials": {
                "AccessKeyId": TEMP_ID,
                "SecretAccessKey": SECRET,
                "SessionToken": SESSION,
                "Expiration": "2026-03-02T22:15:22+00:00",
            }
        },
        indent=4,
    )
    assert len(SESSION) > 600
    assert json.loads(R.redact_text(output)) == {
        "Credentials": {
            "AccessKeyId": "[REDACTED:aws-access-key]",
            "SecretAccessKey": "[REDACTED:aws-secret-key]",
            "SessionToken": "[REDACTED:aws-session-token]",
            "Expiration": "2026-03-02T22:15:22+00:00",
        }
    }
    assert R.redact_text(f"aws_session_token = {SESSION}\n") == "aws_session_token = [REDACTED:aws-session-token]\n"
    assert (
        R.redact_text(f"export AWS_SESSION_TOKEN={SESSION}") == "export AWS_SESSION_TOKEN=[REDACTED:aws-session-token]"
    )
    assert R.redact_text(f"token {SESSION} expires") == "token [REDACTED:aws-session-token] expires"


def _slashed_keys(n: int, seed: int) -> list[str]:
    """Random 40-character keys of the AWS secret alphabet that hold two or more `/` (one key in seven does)."""
    rng = random.Random(seed)
    keys: list[str] = []
    while len(keys) < n:
        key = "".join(rng.choice(ALPHABET) for _ in range(40))
        if key.count("/") >= 2 and not key.startswith("/") and looks_random(key.replace("/", "A")):
            keys.append(key)
    return keys


PATHS = [
    "/usr/lib/python3.11/site-packages/x.py",
    "src/pkg/mod.py",
    "a/b/c",
    "tests/test_x.py::TestA::test_b",
    "https://github.com/SeanLee97/AnglE/blob/5155458cfa6f7fbc7a8a19a66960cd86eadfd534/angle_emb/loss.py",
    "https://cdn-uploads.huggingface.co/production/uploads/66d732effe6684fc16b12c28/Io_5OCmftsmH-n158ZtPs.png",
    "https://huggingface.co/stepfun-ai/GOT-OCR-2.0-hf",
    "ftp://ftp.example.ca/obj/s4/f2/dsk2/ftp01/MQ57336.pdf",
    "/var/folders/4q/kr2t0_bs3gx2s7bdyf4z7hr40000gn/T/pytest-of-me/pytest-3/test_a0",  # macOS $TMPDIR
    "/private/var/folders/7g/kx0r2bq97fgb4x8v0ql1z0xh0000gn/T/tmpab3x9q",
    "https://forms.gle/forms/PP1AGvNHpSaJP8to1",
]


def test_a_random_key_holding_slashes_is_redacted_and_a_path_with_random_looking_parts_is_not() -> None:
    keys = _slashed_keys(500, seed=3)
    line = "INFO got credentials {} for eu-west-1"
    kept = [k for k in keys if R.redact_text(line.format(k)) != line.format("[REDACTED:high-entropy]")]
    assert len(kept) <= 10, kept[:5]  # the few left hold a lower-case word between two slashes, as paths do
    assert [R.redact_text(p) for p in PATHS] == PATHS
    assert [R.redact_text(f"{KEY_ID} {p}") for p in PATHS] == [f"[REDACTED:aws-access-key] {p}" for p in PATHS]


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ((KEY_ID + " ") * 30_000 + SECRET, SECRET),
        ((KEY_ID + "\n" + "aB3+/" * 7 + "\n") * 10_000 + KEY_ID + "\n" + SECRET, SECRET),
        ("mysql -p -p " * 30_000 + f"-p{PASSWORD}", PASSWORD),
        ("mysql" * 40_000 + f" ok\nmysql -p{PASSWORD}", PASSWORD),
        ("mysql-" * 40_000 + f" ok\nmysql -p{PASSWORD}", PASSWORD),
        ("aws secret key " * 30_000 + SECRET, SECRET),
        ("aws_session_token=" * 30_000 + f" {SESSION}", SESSION),
        ("User name,Password,Access key ID,Secret access key\n" * 10_000 + f"bob,{PASSWORD},{KEY_ID},", PASSWORD),
        (("aB3/" * 60 + " ") * 2_000 + SECRET, SECRET),
        ("sshpass -v " * 30_000 + f"-p {PASSWORD}", PASSWORD),
        ("sshpass -P " * 30_000 + f"ok\nsshpass -p {PASSWORD}", PASSWORD),
        ("password = " * 30_000 + f"\npassword = {PASSWORD}", PASSWORD),
        ("password = " + "x" * 100_000 + f" y\npassword = {PASSWORD}", PASSWORD),
    ],
    ids=[
        "key ids",
        "ids and near-keys",
        "mysql -p",
        "mysql run",
        "mysql- run",
        "aws names",
        "session names",
        "csv headers",
        "slashes",
        "sshpass options",
        "sshpass prompts",
        "spaced assignments",
        "a long value",
    ],
)
def test_a_credential_after_pathological_input_is_found_in_linear_time(text: str, secret: str) -> None:
    start = time.perf_counter()
    out = R.redact_text(text)
    assert time.perf_counter() - start < 20  # each is well under a second; a quadratic rule takes minutes
    assert secret[:16] not in out
    assert secret[-16:] not in out


BUILD_AND_SHELL_LINES = [
    "gcc -I/usr/include/mysql -c MySQLdb/_mysql.c -o build/_mysql.o -pthread -pipe",
    "find /var/lib/mysql -name '*.ibd' -print",
    "find /var/lib/mysql -path '*/tmp' -prune -o -type f -print",
    "docker run --name mysql -p3306:3306 -e MYSQL_DATABASE=app mysql:8",
    "docker run --name mysql -p 127.0.0.1:3306:3306/tcp mysql:8",
    "pip install mysqlclient --no-binary -preload",
    "make mysql-connector -parallel",
    "awsSessionToken: awsSessionTokenProviderFromEnvironmentConfig",
]


def test_options_of_other_commands_near_mysql_and_names_near_aws_are_not_secrets() -> None:
    assert [R.redact_text(line) for line in BUILD_AND_SHELL_LINES] == BUILD_AND_SHELL_LINES
    etag = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo"  # base64 of text, beside a key id: not its secret key
    assert R.redact_text(f"{KEY_ID}  ETag: {etag}") == f"[REDACTED:aws-access-key]  ETag: {etag}"
    assert R.redact_text(f"docker exec -it db mysql -uroot -p'{PASSWORD}' app") == (
        "docker exec -it db mysql -uroot -p'[REDACTED:cli-secret]' app"
    )
