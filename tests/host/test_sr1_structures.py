# ruff: noqa: E501 - each instance stays on one line, as it would be stored
"""Structures blind round 1 taught (issue 25), each as an instance written here, not taken from any
blind corpus: a secret passed that way is redacted, and text that only looks so is kept. Training
examples: they guard the structures against regressions and measure nothing."""

from __future__ import annotations

import pytest

from reference_host.redaction import Redactor, redact_joined

SECRETS = [
    (
        "Parameters:\n  DBPassword:\n    Type: String\n    NoEcho: true\n    Default: Tr0ub4dor&3x\n  DBUser:\n    Type: String",
        "Tr0ub4dor&3x",
    ),
    ('val creds = Map("user" -> "svc", "password" -> "Zq8!Lm2xPw")', "Zq8!Lm2xPw"),
    ("Step 3: login with admin / Kq8#zLm2Wx then open settings", "Kq8#zLm2Wx"),
    (
        '{"cell_type": "code", "source": ["import openai\\n", "openai.api_key = \\"q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0Qc\\"\\n"]}',
        "q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0Qc",
    ),
    (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ntype: Opaque\ndata:\n  DB_URL: cG9zdGdyZXM6Ly9hcHA6cGFzc0Bob3N0L2Ri\n  region: ZXUtd2VzdC0x",
        "cG9zdGdyZXM6Ly9hcHA6cGFzc0Bob3N0L2Ri",
    ),
    ("smtp:\n  password: >-\n    Gr8vK!qz91Lm", "Gr8vK!qz91Lm"),
    (
        'command: ["/app/server", "--api-key", "Zq81LmN0pWr5TyXv3Bs7Kd2Hf6Jg9"]',
        "Zq81LmN0pWr5TyXv3Bs7Kd2Hf6Jg9",
    ),
    (
        "[2024-05-02 10:11:12] incident-42 > @oncall db creds rotated, new pw is Tr0ub4dor&3x — pls update vault",
        "Tr0ub4dor&3x",
    ),
    (
        "Ticket #4411: customer pasted their key by mistake: 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    ("Das Passwort für den Testserver lautet: Hx7#pQ2vLm9", "Hx7#pQ2vLm9"),
    ("La contraseña de la base de datos es K9m!xT4qW2z", "K9m!xT4qW2z"),
    ("API-Schlüssel: 7Hq2Xv9LmN4pRt8Ws1Yb3Kd6Fg0Jc5Ze", "7Hq2Xv9LmN4pRt8Ws1Yb3Kd6Fg0Jc5Ze"),
    (
        "Traceback (most recent call last):\n  File \"app.py\", line 3\nValueError: bad config {'user': 'svc', 'password': 'V3ry!S3cret#42'}",
        "V3ry!S3cret#42",
    ),
    (
        'runner: Run curl -sS -X POST https://api.example.com/deploy -H "X-Deploy-Token: 4f9d2c7e8b1a6f3d9c2e7b8a1f6d3c9e"',
        "4f9d2c7e8b1a6f3d9c2e7b8a1f6d3c9e",
    ),
    (
        'resource "azurerm_key_vault_secret" "db" {\n  name  = "db-password"\n  value = "Pq7!zLm2Xv9#Kw"\n}',
        "Pq7!zLm2Xv9#Kw",
    ),
    (
        "mysql> SELECT user, authentication_string FROM users;\n| user | password |\n|------|----------|\n| app  | H7k!mP2xQz |",
        "H7k!mP2xQz",
    ),
    ("user\tpassword\tnote\nsvc\tWq8!zPm3Kx\tprod", "Wq8!zPm3Kx"),
    (
        "export SLACK_TOKEN=xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy1hYmNkZWZnaGlqa2xtbm9w",
        "xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAtMTIzNDU2Nzg5MDEyMy1hYmNkZWZnaGlqa2xtbm9w",
    ),
    (
        "-----BEGIN OpenVPN Static key V1-----\ne5a3f0b9c1d2e3f4a5b6c7d8e9f0a1b2\nc3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8\n-----END OpenVPN Static key V1-----",
        "e5a3f0b9c1d2e3f4a5b6c7d8e9f0a1b2",
    ),
    ('jwt.sign(payload, "hs256-Sup3rS3cr3t!", { expiresIn: "1h" })', "hs256-Sup3rS3cr3t!"),
    ('conn = pymysql.connect(host="db", user="root", passwd="Qw9!xLp2Zm", db="shop")', "Qw9!xLp2Zm"),
    (
        '{"level":"debug","msg":"login","body":"username=alice&password=Zx8%21qLm2Pw&remember=1"}',
        "Zx8%21qLm2Pw",
    ),
    ("wifi: SSID office-5g / WPA2 key: tq7#Lm2xPz9W", "tq7#Lm2xPz9W"),
    (
        'psql "host=db.internal port=5432 user=app password=Nq4!xTz8Lm dbname=app sslmode=require"',
        "Nq4!xTz8Lm",
    ),
    ('$ docker run -e "MYSQL_ROOT_PASSWORD=Pz9!qL2mXw" mysql:8', "Pz9!qL2mXw"),
    (
        'INFO  Loaded config: {"stripe": {"secret": "sk_live_51Hx7QpL2mZ9vW4tK8nR3yB6cD1fG5hJ0"}}',
        "sk_live_51Hx7QpL2mZ9vW4tK8nR3yB6cD1fG5hJ0",
    ),
    (
        'const client = new Client({ auth: "secret_Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Ra4Tu" })',
        "secret_Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Ra4Tu",
    ),
    (
        "aws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDxl0q8",
        "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQDxl0q8",
    ),
    ("ключ API: Zq8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5", "Zq8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5"),
    ("The service account password was reset to `Lq9!mZx2Wp`. Please log in and change it.", "Lq9!mZx2Wp"),
    ("ssh deploy@10.0.0.4 # pass: Kw8#zLq2Mx", "Kw8#zLq2Mx"),
]
CLEAN = [
    "Parameters:\n  Environment:\n    Type: String\n    Default: production",
    "db.password=ENC(G6N718UuyPE5bHyWKyuLQSm02auQPUtm)",
    "spring.datasource.password={cipher}AQA8hRp3OG0vZAxA9Kaj1ZTrqtOJvZ3Xq5l7T0uLkNyMdQ",
    "ls /nix/store/5rrnw6b7qiqggaih7xrrf5b0c5b3y8iy-glibc-2.38/lib",
    "untrusted comment: minisign public key 1A2B3C4D\nRWQf6LRCGA9i53mlYecO4IzT51TGPpvWucNSCh1CBM0QTaLn73Y7GFO3",
    "onion service: zqktlwiuavvvqqt4ybvgvi7tyo4hjl5xgfuvpdf6otjiycgwqbym2qad.onion",
    "admin:$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
    'password_hash: "$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"',
    "Bitte ändern Sie Ihr Passwort alle 90 Tage.",
    "Le mot de passe doit contenir au moins 12 caractères.",
    "password: ${{ secrets.DB_PASSWORD }}",
    "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n        name: db\n        key: password",
    "commit 3f9c2a7e8b1d4f6a9c0e2b5d7f8a1c3e6b9d0f2a\nAuthor: Ana <ana@example.com>",
    "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    '"integrity": "sha512-9Uy8yBx1ZPqN5YrWmVz2G8rKnSp7Lq3Xw4Ht6Jd0Fb1Cv8Ns5Em2Ak9Ro7Tu3Yi=="',
    "The API key must be sent in the X-Api-Key header; rotate keys every 90 days.",
    'def get_password(user):\n    return keyring.get_password("svc", user)',
    'if (password.length < 12) { throw new Error("password too short") }',
    'kubectl create secret generic db --from-literal=password="$DB_PASSWORD"',
    "I forgot my password again, can you reset it?",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ana@laptop",
    "image: registry.example.com/api@sha256:7d8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f",
    "Request ID: 8a7b6c5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d, took 231 ms",
    "| Setting | Value |\n|---|---|\n| LOG_LEVEL | info |\n| PORT | 8080 |",
    "user\tstatus\tlast_login\nalice\tactive\t2024-05-01",
    "Hey team, the new wifi name is office-5g, password on the whiteboard.",
    "token_endpoint: https://auth.example.com/oauth/token",
    "password_policy: {min_length: 12, require_symbol: true}",
    "session_timeout: 3600",
    '"pk_live_51HcDqWLmN8pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Ra4Tu" is our publishable key',
    "The recovery phrase must be written down on paper and stored offline, never in a file.",
    "cipher: AES-256-GCM, iv: 3f9c2a7e8b1d4f6a9c0e2b5d",
]


@pytest.fixture(scope="module")
def redactor() -> Redactor:
    return Redactor({})


@pytest.mark.parametrize(("text", "secret"), SECRETS, ids=[f"secret-{i}" for i in range(len(SECRETS))])
def test_structure_is_redacted(redactor: Redactor, text: str, secret: str) -> None:
    out = redact_joined([text], redactor)
    assert secret not in out, out


@pytest.mark.parametrize("text", CLEAN, ids=[f"clean-{i}" for i in range(len(CLEAN))])
def test_look_alike_is_kept(redactor: Redactor, text: str) -> None:
    assert redact_joined([text], redactor) == text
