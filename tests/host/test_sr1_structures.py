# ruff: noqa: E501 - each instance stays on one line, as it would be stored
"""Structures blind rounds 1 to 9 taught (issue 25), each as an instance written here, not taken from any
blind corpus: a secret passed that way is redacted, and text that only looks so is kept. Training
examples: they guard the structures against regressions and measure nothing."""

from __future__ import annotations

import pytest

from reference_host.redaction import Redactor, redact_joined

SECRETS = [
    (
        "2024-06-01T12:00:01.123Z [build] Step 4/9 : RUN npm config set //registry.npmjs.org/:_authToken=npm_Q8zLm2Xv9Wp4Kt7Nr3Ys6Hb1Jd5Fg0Cc8Ze",
        "npm_Q8zLm2Xv9Wp4Kt7Nr3Ys6Hb1Jd5Fg0Cc8Ze",
    ),
    (
        "##[debug]Evaluating: secrets.DEPLOY_KEY\n##[debug]Result: 'Zq81LmN0pWr5TyXv3Bs7Kd2Hf6Jg9'",
        "Zq81LmN0pWr5TyXv3Bs7Kd2Hf6Jg9",
    ),
    (
        "panic: dial tcp: auth failed\n\ngoroutine 1 [running]:\nmain.connect({0x1400012c000, 0x3}, {0x140001a2010, 0x10})\n\tconfig: &{Host:db.internal User:app Password:Wq8!zPm3Kx9 Port:5432}",
        "Wq8!zPm3Kx9",
    ),
    (
        "java.sql.SQLException: Access denied for user 'app'@'10.0.0.4' (using password: YES)\n  url=jdbc:mysql://db:3306/shop?user=app&password=Lm2!xQz8Wp",
        "Lm2!xQz8Wp",
    ),
    (
        '{"cells":[{"cell_type":"code","source":["HF_TOKEN = \\"hf_Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8\\""]}]}',
        "hf_Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8",
    ),
    (
        "Runbook: if the queue stalls, restart the consumer with\n  RABBITMQ_DEFAULT_PASS=Pz9!qL2mXw ./consumer --reset",
        "Pz9!qL2mXw",
    ),
    (
        "Ticket 5531 — Customer: 'I think I leaked our key, it was 7Hq2Xv9LmN4pRt8Ws1Yb3Kd6Fg0Jc5Ze in a public gist'",
        "7Hq2Xv9LmN4pRt8Ws1Yb3Kd6Fg0Jc5Ze",
    ),
    ("El token de acceso es: Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5", "Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5"),
    ("Il mio token: Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5", "Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5"),
    ("サーバーのパスワードは Hx7#pQ2vLm9 です", "Hx7#pQ2vLm9"),
    (
        'resource "google_sql_user" "app" {\n  name     = "app"\n  instance = google_sql_database_instance.main.name\n  password = "Vq9!xLm2Pz7"\n}',
        "Vq9!xLm2Pz7",
    ),
    (
        'provider "aws" {\n  region     = "eu-west-1"\n  access_key = "AKIAQZ8LMN4PXR7VT2WS"\n  secret_key = "q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0QcTu8Ra2"\n}',
        "q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0QcTu8Ra2",
    ),
    (
        "[incident-2211] 14:02 <mara> rotated the stripe key, new one: sk_live_51Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze",
        "sk_live_51Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze",
    ),
    ("Core dump env:\nHOME=/root\nSMTP_PASS=Gq8!mZx2Lp\nPATH=/usr/bin", "Gq8!mZx2Lp"),
    ("ENV REDIS_URL=redis://:Zq8LmN4pXr7Vt2Ws@redis:6379/0", "Zq8LmN4pXr7Vt2Ws"),
    (
        "kubectl -n prod create secret docker-registry regcred --docker-server=ghcr.io --docker-username=bot --docker-password=Qz8LmN4pXr7Vt2Ws9Yb1",
        "Qz8LmN4pXr7Vt2Ws9Yb1",
    ),
    ("helm upgrade api ./chart --set db.password=Wq8!zPm3Kx9 --set image.tag=1.4.2", "Wq8!zPm3Kx9"),
    (
        "az login --service-principal -u 3f9c2a7e-8b1d-4f6a-9c0e-2b5d7f8a1c3e -p 'Xq8~Lm2zPw9.Kt7-Nr3Ys6Hb1Jd5Fg0' --tenant 1a2b3c4d-0000-1111-2222-333344445555",
        "Xq8~Lm2zPw9.Kt7-Nr3Ys6Hb1Jd5Fg0",
    ),
    (
        "mongo \"mongodb+srv://cluster0.ab1cd.mongodb.net/test\" --username admin --password 'Lm2!xQz8Wp7'",
        "Lm2!xQz8Wp7",
    ),
    (
        "In [3]: openai.api_key\nOut[3]: 'sk-proj-Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Ra4Tu'",
        "sk-proj-Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Ra4Tu",
    ),
    ("| service | user | secret |\n|---|---|---|\n| grafana | admin | Kq8#zLm2Wx |", "Kq8#zLm2Wx"),
    ("WIFI:T:WPA;S:office;P:Tq9#xLm2Pz8;;", "Tq9#xLm2Pz8"),
    ("net.core: wpa_passphrase=Tq9xLm2Pz8Wq7", "Tq9xLm2Pz8Wq7"),
    ("Bonjour, voici le mot de passe du VPN : Rq8!zLm2Xw. Merci de le changer.", "Rq8!zLm2Xw"),
    (
        "Hallo Team, das neue Kennwort für den Jenkins ist Hx7#pQ2vLm9 – bitte nicht weitergeben.",
        "Hx7#pQ2vLm9",
    ),
    (
        'curl -X POST https://api.example.com/login -d \'{"username":"svc","password":"Qx8!mL2zPw"}\'',
        "Qx8!mL2zPw",
    ),
    ("$cred = Get-Credential; $pw = ConvertTo-SecureString 'Lz8!qM2xWp' -AsPlainText -Force", "Lz8!qM2xWp"),
    ("SNOWFLAKE_PRIVATE_KEY_PASSPHRASE=Tq9xLm2Pz8Wq7Zr", "Tq9xLm2Pz8Wq7Zr"),
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
    # a public key's shape inside a key's random body is a piece of that key, not a public key
    (
        "OPENAI_API_KEY=sk-proj-Tq4nW8rZ2xK7mP0vB5cL9d_6LHYiBRqVvZDvXMlVYG0kUcJ8Rq9ySfguYcylGlvEI54dT3BlbkFJ",
        "sk-proj-Tq4nW8rZ2xK7mP0vB5cL9d_6LHYiBRqVvZDvXMlVYG0kUcJ8Rq9ySfguYcylGlvEI54dT3BlbkFJ",
    ),
    (
        "Note: 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 end.",
        "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",
    ),
]
CLEAN = [
    '<div class="g-recaptcha" data-sitekey="6LcR3xQpAAAAAKq8Wm2Vn5Tz9Lb4Hd7Jf1Gs0Ye3"></div>',
    '{"login.password": "Contraseña", "apiKeyLabel": "API key", "token_expired": "Your session token has expired"}',
    '{"password": "Passwort", "forgot": "Passwort vergessen?"}',
    "MasterUserPassword: !Ref DBPassword",
    "password: ${ssm:/prod/db/password}",
    'password: "{{resolve:secretsmanager:prod/db:SecretString:password}}"',
    "password = data.aws_secretsmanager_secret_version.db.secret_string",
    "password: $(DB_PASSWORD)",
    "password: %(DB_PASSWORD)s",
    "password: <%= ENV['DB_PASSWORD'] %>",
    'password: ENV.fetch("DB_PASSWORD")',
    "PASSWORD=$(cat /run/secrets/db_password)",
    "password: file:/etc/secrets/db",
    '"token": "${TOKEN:?required}"',
    "password_sha256: 5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
    "Set `API_KEY=your-api-key-here` in .env before running.",
    "Authorization: Basic $(echo -n user:pass | base64)",
    'curl -H "Authorization: Bearer $GITHUB_TOKEN" https://api.github.com/user',
    "https://api.example.com/v1/items?token={token}&page=2",
    "session_id: 8f14e45fceea167a5a36dedd4bea2543",
    "pubkey: 02a1633cafcc01ebfb6d78e39f687a1f0995c62fc95f51ead10a02ee0be551b5dc",
    "DB_PASSWORD=\nDB_USER=app",
    "password: null",
    "api_key: <API_KEY>",
    "token: '********'",
    "secret: REDACTED",
    "password_policy:\n  min_length: 12\n  require_digit: true",
    "aws_secret_access_key = {{ aws_secret }}",
    "$env:API_TOKEN = Read-Host 'Token'",
    "export GITHUB_TOKEN=$(gh auth token)",
    "client_secret: ${CLIENT_SECRET}",
    "kubectl get secret db -o jsonpath='{.data.password}' | base64 -d",
    "The key rotation runs every Sunday at 02:00 UTC.",
    "docker login -u ci --password-stdin < /run/secrets/registry",
    "ssh -i ~/.ssh/deploy_key deploy@10.0.0.4",
    "openssl rand -base64 32",
    "age-keygen -o key.txt\nPublic key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p",
    "Fingerprint: SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "npm notice integrity: sha512-Ax4IaYH3kFHoXwhd0U4Kqa8BGe5Wz2ufWj5ZI1VsRvCXd9tXm1b2Q2lJzpCjqK3Yx9Z8tP1Qz7rUW1Tz2DxH2g==",
    "dummy_password = 'not-a-real-password'",
    "TEST_API_KEY=test_key_1234567890",
    "2024-06-01T12:00:01Z ##[debug]Result: '***'",
    "goroutine 1 [running]:\nmain.main()\n\t/app/main.go:42 +0x1d4\nexit status 2",
    '{"cells":[{"cell_type":"markdown","source":["## Set your API key\\n","Use `os.environ[\'OPENAI_API_KEY\']`"]}]}',
    "Runbook: rotate the DB password with `vault write database/rotate-root/prod` and update the app.",
    "Ticket 5532 — customer asks how to reset their password; sent them the KB link.",
    "El token expira en 3600 segundos.",
    "Das Kennwort muss mindestens 12 Zeichen lang sein.",
    'resource "random_password" "db" {\n  length  = 24\n  special = true\n}',
    "password = random_password.db.result",
    '- name: Create user\n  mysql_user:\n    name: app\n    password: "{{ vault_app_password }}"',
    "[incident-2211] 14:05 <mara> done, old key revoked (key id kid_8f2b1c)",
    "Core dump env:\nHOME=/root\nLANG=C.UTF-8\nPATH=/usr/bin",
    "image: ghcr.io/acme/api:1.4.2@sha256:9c7fcf455a750328ffffeeeb758f49633342f682aa54802c611500693023d06a",
    "X-Request-Id: 7f3c2a1e-9b8d-4c6f-a5e4-3d2c1b0a9f8e",
    "Set-Cookie: theme=dark; Path=/; Max-Age=31536000",
    "Cookie: _ga=GA1.2.1234567890.1712345678; _gid=GA1.2.987654321.1712345678",
    "| service | user | notes |\n|---|---|---|\n| grafana | admin | uses SSO |",
    "The password field is masked as ******** in the UI.",
    "git log --oneline\n3f9c2a7 fix token refresh\n8b1d4f6 add password reset flow",
    "AWS_REGION=eu-west-1\nAWS_ACCOUNT_ID=123456789012\nAWS_ROLE_ARN=arn:aws:iam::123456789012:role/deploy",
    "Bearer tokens expire after 15 minutes; refresh with POST /oauth/token.",
    "sha256sum: 2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824  hello.txt",
    "export VAULT_ADDR=https://vault.internal:8200\nexport VAULT_NAMESPACE=admin",
    "password_reset_token_ttl: 900",
    "const PASSWORD_MIN_LENGTH = 12;",
    "Your verification code is 483921.",
    'BEGIN { FS = "," } { print $1 }',
    "ssh-keygen -lf ~/.ssh/id_ed25519.pub\n256 SHA256:G2QFONh1hATHYgq6uvhMbUWJWU1GxLK7FaiDkTmzw3c ana@laptop (ED25519)",
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


# Structures blind round 2 taught (issue 25), each an instance written here from the structure of
# its class (values drawn for this file: a valid bech32 checksum, real DER, real zlib), not taken
# from the corpus.
SECRETS_ROUND_2 = [
    # a diff's added line still assigns
    (
        "@@ -1,3 +1,3 @@\n-API_TOKEN: ${API_TOKEN}\n+API_TOKEN: 2eb86c3729471a81b09c28b7543dd0269d3cafcd4654fab73bf90dbdde639f61",
        "2eb86c3729471a81b09c28b7543dd0269d3cafcd4654fab73bf90dbdde639f61",
    ),
    # Terraform: a variable's default under a secret's name
    (
        'variable "vendor_api_token" {\n  type      = string\n  default   = "e1e66b7e92ea8669d7bf241a8a9a121e"\n  sensitive = true\n}',
        "e1e66b7e92ea8669d7bf241a8a9a121e",
    ),
    # a flag at the start of a continued line, a .pgpass line under its comment
    (
        "curl -s https://api.example.com/v1/calls \\\n  -d 'x=1' \\\n-u ACd0e1f2a3b4c5d6e7f8091a2b3c4d5e6f:276f4ca3de3f2977d8a77cd2fb636da3",
        "276f4ca3de3f2977d8a77cd2fb636da3",
    ),
    ("# host:port:db:user:password\ndb7.internal:5432:*:svc:Pq$81/mZ@xv2Lk", "Pq$81/mZ@xv2Lk"),
    # a passphrase of dotted words under a strong name, unquoted; and spaced (msmtp, sssd)
    ("STORE_PASSWORD=cinder.walnut.prism.otter42", "cinder.walnut.prism.otter42"),
    (
        "account mail\nhost smtp.example.org\nuser ops@example.org\npassword lantern.moss.quill.ember7",
        "lantern.moss.quill.ember7",
    ),
    ("[domain/corp]\nldap_default_authtok = harbor.velvet.cobalt.fern88", "harbor.velvet.cobalt.fern88"),
    # a session id written into a URL's path
    (
        '10.1.2.3 - - "GET /shop/cart;JSESSIONID=A1F09C44B7E2D3815C6A90F1E2B3C4D5 HTTP/1.1" 200',
        "A1F09C44B7E2D3815C6A90F1E2B3C4D5",
    ),
    # a login pair under a word for access, in another language
    ("Router im Keller, Zugangsdaten: admin / pebble-orbit-saffron-lynx4", "pebble-orbit-saffron-lynx4"),
    ("Access: deploy / Tq7!wLm2zR", "Tq7!wLm2zR"),
    # a reply that answers the question above it, the token on its own line
    (
        "[09:14] lee: does anyone have the Sentry token for staging? mine expired\n[09:20] kai: here\nNq7Rt2Vx9Lp4Mz8Kw3Hs",
        "Nq7Rt2Vx9Lp4Mz8Kw3Hs",
    ),
    # a custom header's random value among a client's headers
    ('OTEL_EXPORTER_OTLP_HEADERS="x-vendor-team=Rk3Tz9Wq2Lm8Xv4Np7Hs1b"', "Rk3Tz9Wq2Lm8Xv4Np7Hs1b"),
    (
        'exporters:\n  otlphttp:\n    headers:\n      "x-ingest-key": "Vb8Mn2Qw7Zx4Lk9Pt3Rs6d"',
        "Vb8Mn2Qw7Zx4Lk9Pt3Rs6d",
    ),
    # a search client's key where the code says it is the admin side
    (
        "// server side only: indexing\nconst client = algoliasearch('QWERTY1234', 'ff389ef4614f6d850e374653aa01b2c3');",
        "ff389ef4614f6d850e374653aa01b2c3",
    ),
    # a search engine's client in a server's code, a note that only says read-only, a secret
    # whose value starts with its field's name
    (
        'es = Elasticsearch("https://es.internal:9200", api_key="Vq2Lm8Xz4Kw9Rt3Np7Hs1Bd6Jf0Gc5Q")',
        "Vq2Lm8Xz4Kw9Rt3Np7Hs1Bd6Jf0Gc5Q",
    ),
    ("# read-only replica\nREPLICA_PASSWORD=Wz7!qLm2Xv9p", "Wz7!qLm2Xv9p"),
    ('{"secret": "secret_Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0"}', "secret_Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0"),
    # base64 of a JSON document that carries a key of its own (a tunnel token)
    (
        "cloudflared service install eyJhIjoiMTIzIiwicyI6IlprOHFMbU40cFhyN1Z0MldzOVliMUtkM0hmNkpnMENjNSJ9",
        "eyJhIjoiMTIzIiwicyI6IlprOHFMbU40cFhyN1Z0MldzOVliMUtkM0hmNkpnMENjNSJ9",
    ),
    # a Solana private key (64 bytes) is no address, even in a line about a wallet
    (
        "wallet secret: 51piWfoyGvquhSqisdpfd5KifYYemHMT5xDxM59XHYSFGpKvLrvqzr6meoaAmogVU6THa6JSBn4jFGyWDcn6sWA6",
        "51piWfoyGvquhSqisdpfd5KifYYemHMT5xDxM59XHYSFGpKvLrvqzr6meoaAmogVU6THa6JSBn4jFGyWDcn6sWA6",
    ),
]

CLEAN_ROUND_2 = [
    # a recipient with a valid checksum, whatever the sentence calls it
    "my age public key is age18jaldrc3wqawr24xnsq3fg3mv42zr7mjd7m5l56rkguxl2aaa2rsx4vql6, encrypt to it",
    # base64 of JSON documents (a JWT's header alone, a message's data)
    "Every token's header is `eyJhbGciOiJFUzI1NiIsInR5cCI6IkpXVCJ9` (ES256).",
    "message data=eyJvcmRlciI6IjQ4MjEzIiwic3RhdHVzIjoic2hpcHBlZCIsImNhcnJpZXIiOiJkaGwifQ== attributes={}",
    # compressed payloads
    '{"kind":"sourcemap","encoding":"base64","data":"eJyrVipLLSrOzM9TsjLWUSrOLy1KTi1WsopWKi5K1k8sKNDPTczM0yspVorVUcoF8jPz0oHSSo5AYO3o6OyoVAsA8dwVjQ=="}',
    "payload: H4sIAAAAAAACA8tIzcnJV8gAkzn56Qo5mXmpxQppRfm5CiUZqQrl+UXZqUUKBfn5OQAr60sDKgAAAA==",
    # a DER signature, and the printed content of a signature or an encrypted file
    '{"signature": {"sig": "MEUCIQAobbrzVGIV4CZOoICP7QAq/1jTIfsBKID8hZvPc2dP/wIgajsppfYs3021vmkTrWdrfcsOV6kwB8henyeu0JoDjls="}}',
    "$ cat release.tar.gz.sig\nKdUHjNIvBPC9SFoRH6TRjiYu1HPjPmZ7TdUwRj32F2DMn1p76tEb8j/NkdRGdGL7dmuoGVjnweTLNH1+",
    "cat secrets/prod.env.enc\nKdUHjNIvBPC9SFoRH6TRjiYu1HPjPmZ7TdUwRj32F2DMn1p76tEb8j/NkdRGdGL7dmuoGVjnweTLNH1+",
    # test vectors: hex beside its expected output
    "# HMAC-SHA256 test vectors\nCount = 3\nKey = 2eb86c3729471a81b09c28b7543dd0269d3cafcd4654fab73bf90dbdde639f61\nMsg = 6869\nMac = e1e66b7e92ea8669d7bf241a8a9a121e",
    '{"tcId": 7, "key": "276f4ca3de3f2977d8a77cd2fb636da3", "iv": "ff389ef4614f6d850e374653", "result": "valid"}',
    "| # | key | input | expected |\n|---|---|---|---|\n| 1 | `e1e66b7e92ea8669d7bf241a8a9a121e` | abc | `276f4ca3de3f2977d8a77cd2fb636da3` |",
    # a 32-byte base58 address in a line about a wallet
    "payouts go to the team wallet 8JYL4QbnAZYbtLfLmLAUoyUgYNSs4TnAa4tXfaWwLvN7 on mainnet",
    # a commit id after a status mark, a key's fingerprint, a pin in its hash notation
    "$ git submodule status\n-1d8c7b93816c1d5c4469be1e385c229c975f01a0 third_party/zlib",
    "Tags are signed with key 1D8C7B93816C1D5C4469BE1E385C229C975F01A0; import it from the keyserver.",
    '<pin digest="SHA-256">uzoTmVFfX4tGftIB8TRVzV0RFFk+8BgqkRrnuJj2VCc=</pin>',
    # a dotted resource id's unique part
    "compartment=ocid1.compartment.oc1..aaaaqz8lmn4pxr7vt2ws9yb1kd3hf6jg0cc5ze8ra4tu2q",
    # typed resource ids in a table's rows
    "i-0a1b2c3d4e5f60718\tvpc-0f1e2d3c4b5a69788\tsubnet-0123456789abcdef0\ni-0f9e8d7c6b5a40312\tvpc-0aa1bb2cc3dd4ee5f\tsubnet-0fedcba9876543210",
    # names that say state or a handshake nonce, a search-only client, a key id that is public
    'saved: {"state":"Tq8Zx3Lm9Wv2Kp7Rn4Ys6Hb1Jd5Fg0Qc","redirect":"/home"}',
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    '<script>\ndocsearch({ appId: "ABCD1234EF", apiKey: "e1e66b7e92ea8669d7bf241a8a9a121e", indexName: "docs" });',
    "// client-side key, shipped to the browser\nconst search = makeClient('APP123', '276f4ca3de3f2977d8a77cd2fb636da3');",
    'var checkout = { "key": "rzp_test_Qz8LmN4pXr7Vt2", "amount": "50000" };',
    # ids spelled with their field's name, a SQL list of ids, a template filled by %
    '{"event":"confirmed","mandate":"mandate_1Qz8LmN4pXr7Vt2Ws9Yb1Kd3"}',
    "SELECT * FROM refunds WHERE refund_id IN ('re_3Qz8LmN4pXr7Vt2Ws9Yb1Kd3', 're_3Hf6Jg0Cc5Ze8Ra4Tu2Qx7P');",
    'url = "mysql://%(user)s:%(password)s@%(host)s/%(name)s" % cfg',
    # a SigV4 header's request signature, a name of one long word and a short random piece, a
    # literal in a minified bundle
    "Authorization: AWS4-HMAC-SHA256 Credential=AKIA************/20250101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=2eb86c3729471a81b09c28b7543dd0269d3cafcd4654fab73bf90dbdde639f61",
    '{"step":"render-x8k2q","pod":"reconciliation-w7zq4-3841207719","phase":"Running"}',
    'function a(n){return n}var t="0.9.1";window.cfg={v:t};!function(){var e=1,k="Tq8Zx3Lm9Wv2Kp7Rn4Ys6Hb1Jd5Fg0QcWw9+",r=2;e.go(k,r)}();var q=function(e){return e*2};q(3);var z=function(){return 1};z();var y=1;',
    # a CSV of ids and timestamps is no .pgpass line
    "id,created\nc0ffee00-1111-4222-8333-944445555666,2024-03-01T10:15:30Z\nc0ffee00-7777-4888-9999-aaaabbbbcccc,2024-03-02T11:45:59Z",
]


@pytest.mark.parametrize("text", CLEAN_ROUND_2, ids=[f"round2-shared-{i}" for i in range(len(CLEAN_ROUND_2))])
def test_round_2_look_alike_is_kept_after_another_entry(redactor: Redactor, text: str) -> None:
    """An entry's own context (a table's header, a `cat` line, a comment) is read from its entry's
    start, also when other entries stand before it in the same memoryRef."""
    parts = ["deploy finished, 3 pods restarted", text]
    assert redactor.redact_parts(parts) == parts


# Round 3's structures (blind round 3 released as training data), again as instances written here.
SECRETS_ROUND_3 = [
    # Asana's version-2 token: `2/<gid>/<16 digits>:<32 hex>`
    (
        "tracker.asana.pat=2/1203344556677889/1209988776655443:0f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "1209988776655443:0f1e2d3c4b5a6978",
    ),
    # a one-letter flag for a key or a token, on a line that names a user: glued, spaced, a UUID, hex
    (
        "$ ./sync.sh -u deploy -tq7wz2xk9mp4lr8vn3ct6yb5hd2jf7sg0ke9qa4 -H sync.example.net",
        "q7wz2xk9mp4lr8vn3ct6yb5hd2jf7sg0ke9qa4",
    ),
    (
        "$ uploader --user ci -k 5c2e9a1f-3b7d-4f6a-8e21-9d0c4b7a6e53 --host files.example.net",
        "5c2e9a1f-3b7d-4f6a-8e21-9d0c4b7a6e53",
    ),
    (
        "$ client -u svc_etl -a9e8d7c6b5a4f30211029384756afbecd01234567 -H etl.example.net",
        "9e8d7c6b5a4f30211029384756afbecd01234567",
    ),
    (
        "http -A bearer -a 4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70 api.example.com/v1/me",
        "4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70",
    ),
    # a reCAPTCHA key under a name that says secret (the site key has the same shape)
    (
        "captcha.recaptcha.secret.key=6LdQz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq",
        "6LdQz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq",
    ),
    (
        '10.1.2.3 - - "POST /verify?token=6LdQz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq HTTP/1.1" 200',
        "6LdQz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq",
    ),
    # a session cookie given to a setter as its two arguments
    (
        'jar.set("sessionid", "w8kq2zt5vm9xr3lp7nc4yb6hs1jd0fgq", path="/")',
        "w8kq2zt5vm9xr3lp7nc4yb6hs1jd0fgq",
    ),
    # a password after the verb of a sentence in another language, holding the `=` that ends a label
    ("le mot de passe de la box c'est Tr8!vQ=4z^Lm", "Tr8!vQ=4z^Lm"),
    # a flag's own assignment after a name that says key (`secret generic <name> --from-literal=…`)
    (
        "kubectl create secret generic signing-key --from-literal=signing_key=7f6e5d4c3b2a19081726354453627180a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4",
        "7f6e5d4c3b2a19081726354453627180a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4",
    ),
    # what a command printed for one field named for a secret, wrapped by the terminal
    (
        "$ vault kv get -field=bot_token kv/chat/prod\nOTk4NzY1NDMyMTA5ODc2NTQz.Gx7Kp2.Zq8Lm4Xv9Wp2Kt7Nr3Ys6Hb1J\ndF5gH0cC8zE\n$",
        "Zq8Lm4Xv9Wp2Kt7Nr3Ys6Hb1J",
    ),
    (
        "$ vault kv get -field=api_jwt kv/web/dev\neyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI5OTEyIiwiaWF0IjoxNzAw\nMDAwMDAwfQ.Zq8Lm4Xv9Wp2Kt7Nr3Ys6Hb1JdF5gH0cC8zE\n$",
        "eyJzdWIiOiI5OTEyIiwiaWF0IjoxNzAw",
    ),
]

CLEAN_ROUND_3 = [
    # a key fetched by its public fingerprint
    "gpg --keyserver hkps://keyserver.example.org --recv-keys 0A1B2C3D4E5F60718293A4B5C6D7E8F901234567",
    # a clause that gives the value as a public key
    "here is my wireguard public key is aGVsbG8tcGVlci1wdWJsaWMta2V5LWZvci13Zy0wMQ8= for the peer list",
    "peer public key: Zm9yLXRoZS1wZWVyLWxpc3Qtd2lyZWd1YXJkLWtleS0yMw= (added)",
    # a log line's words say what the key is for
    "12:00:01Z cache hit key=v3:0a1b2c3d4e5f60718293a4b5c6d7e8f901234567 ttl=60",
    # a test vector: its plaintext given in hex above the key
    "AES-128 example\nPLAINTEXT: 0f1e2d3c4b5a69788796a5b4c3d2e1f0\nKEY:       a0b1c2d3e4f5061728394a5b6c7d8e9f\nOUTPUT:    4e2d1c0b3a29180716f5e4d3c2b1a098",
    # a reCAPTCHA site key, under its own name, and a field whose name is no secret's
    "RECAPTCHA_SITE_KEY=6LdQz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq",
    "$ vault kv get -field=token_ttl kv/web/dev\n768h\n$",
]


# Round 4's structures (blind round 4 released as training data), again as instances written here.
SECRETS_ROUND_4 = [
    # escaped quotes around a name and its value, as a notebook's JSON source holds them
    (
        '{"cell_type": "code", "source": ["os.environ[\\"WEBHOOK_SIGNING_SECRET\\"] = \\"9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f\\"\\n"]}',
        "9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f",
    ),
    # a password a person chose, spelled like an identifier, after a one-letter or a named flag
    ("sshpass -p Copper_Lantern77 ssh ops@bastion.example.net", "Copper_Lantern77"),
    ("./restore.sh --db-password Harbor_Finch2031 --dry-run", "Harbor_Finch2031"),
    # a provider's token glued to a one-letter flag
    ("./publish.sh -u ci -thvs.Qz8LmN4pXr7Vt2Ws9Yb1Kd3H ./out", "hvs.Qz8LmN4pXr7Vt2Ws9Yb1Kd3H"),
    # a Doppler service token names its config between its prefix and its secret
    (
        "doppler run --token dp.st.prd.Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq4Tu -- ./app",
        "dp.st.prd.Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq4Tu",
    ),
    # a label in prose whose last word is another language's, and a CJK colon before the value
    (
        "O token do Sentry de produção: 5c63f3b9451451a6f9444f1af903ce86 (não compartilhe)",
        "5c63f3b9451451a6f9444f1af903ce86",
    ),
    (
        "ステージングのapi keyはこちら：5c63f3b9451451a6f9444f1af903ce86 です",
        "5c63f3b9451451a6f9444f1af903ce86",
    ),
    # kubeadm's bootstrap token
    (
        "kubeadm join 10.2.0.5:6443 --token q7w2e9.z8x1c4v7b2n5m3k6 --discovery-token-unsafe-skip-ca-verification",
        "q7w2e9.z8x1c4v7b2n5m3k6",
    ),
    # a row of a browser's cookie table: name, tab, value, tab, domain
    (
        "laravel_session\teyJpdiI6Ik1qQXlOVFV3TnpreE5qQXlNREEiLCJ2YWx1ZSI6Ik\tshop.example.com\t/\tSession",
        "eyJpdiI6Ik1qQXlOVFV3TnpreE5qQXlNREEiLCJ2YWx1ZSI6Ik",
    ),
    # a settings table's value, set by a key that names the secret, and an INSERT's column list
    ("UPDATE app_settings SET value = 'Tz9!kQm4Lp2x' WHERE name = 'smtp_password';", "Tz9!kQm4Lp2x"),
    (
        "INSERT INTO api_clients (name, client_secret, created_at)\nVALUES ('billing', 'q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0Qc', now());",
        "q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0Qc",
    ),
    # a UUID the same line says was rotated away from an older one, a hex key the next line does
    (
        "b7c6d5e4-f3a2-4b1c-9d8e-7f6a5b4c3d2e, the old one is revoked now",
        "b7c6d5e4-f3a2-4b1c-9d8e-7f6a5b4c3d2e",
    ),
    (
        "5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f\nput it in the vault please",
        "5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f",
    ),
    # hex of an odd number of digits (no bytes are so encoded): a generated key, passed bare
    (
        "$ ./purge-cache.sh ops@example.net 4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c --zone all",
        "4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c",
    ),
    # a Django secret key, bare
    (
        "backup of the old settings: ujz^de8gx@d6ncf10epf91d!ho%%@d!@zdoc9is0j8h!t9*lg@",
        "ujz^de8gx@d6ncf10epf91d!ho%%@d!@zdoc9is0j8h!t9*lg@",
    ),
    # 24 to 31 random letters of both cases and digits, alone in a sentence
    (
        "copy this somewhere safe Qm7Xv2Lp9Rt4Wk8Nz3Bc6Hd1J then delete the message",
        "Qm7Xv2Lp9Rt4Wk8Nz3Bc6Hd1J",
    ),
]

# Secrets sent over two entries: the first announced as a part, or a private block's END in the second.
SPLIT_ROUND_4 = [
    (
        ["(1/2) 7f6e5d4c3b2a19081726", "354453627180a9b8c7d6e5f4"],
        "7f6e5d4c3b2a19081726354453627180a9b8c7d6e5f4",
    ),
    (["first half: Qz8LmN4pXr7Vt2Ws", "9Yb1Kd3Hf6Jg0Cc5"], "Qz8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5"),
    (
        [
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
            "QyNTUxOQAAACBvbGQta2V5LXdpdGgtYS1jb21tZW50LWFuZC1tb3Jl\nYWJvdXQtdGhlLXVzZXI=\n-----END OPENSSH PRIVATE KEY-----",
        ],
        "QyNTUxOQAAACBvbGQta2V5LXdpdGgtYS1jb21tZW50LWFuZC1tb3Jl",
    ),
]

CLEAN_ROUND_4 = [
    # ciphertext at rest under a comment naming its encrypted file
    "# config/credentials/production.yml.enc (committed; the key is elsewhere)\nyVmihA/2O76UMFxFkM/R5Kjp1vRt+1fjORS/6ilI8ihN5KXSc7Tvo/hBKqFYY/kv5ZJr3J1TWDtkwtDDb+xHKas1VOqg6YYZYn9ZhyiA4uoRgnatmUdjAWtGSU8po+799NksnRH9ucAUsdMlHUvTCQCyEZDz/TddJ8HyS5SUkCnD8zRA9a9S--ZPf1Qh6yYTWmE4lBYOvfZ8--UzDzV8fUkkibjL5DZPjN0M==",
    # a cache's key: words, then the digest of what it holds
    "Restored cache from key: pip-cache-Linux-5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f",
    # a git object's path
    "rm .git/objects/7e/288821b2407a05c16ca5032ba9a2cc428cf8ab",
    # an OpenPGP key named by its id in git's config
    "[user]\n  email = ops@example.net\n  signingkey = 9A3C5E7F1B2D4F60\n[gpg]\n  program = gpg2",
    # a WireGuard peer's public key, as `wg show` prints it
    "interface: wg0\npeer: llT1+q10b3kZvEKo6t7975JOtFlv4OknHvx0jF9xXIw=\n  allowed ips: 10.8.0.2/32",
    # a placeholder spelled in words around `change me`
    "SESSION_SECRET=please-change-me-before-deploy",
    # a DSN holding only its public key (Sentry's docs: safe to ship to browsers)
    "SENTRY_DSN=https://5c63f3b9451451a6f9444f1af903ce86@o450021.ingest.sentry.io/6100233",
    # a SigV4 request's header: its scope names the access key id, its signature is one request's
    "Authorization: AWS4-HMAC-SHA256 Credential=AKIAQZ8LMN4PXR7VT2WS/20260301/eu-central-1/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f",
    # a Solana address in a line about a payment to it
    "please send the refund to 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin today",
    # an odd hex length that is a version's build id with its own word, and a byte string (even)
    "tx 0x4f5e6d7c8b9a0f1e2d3c4b5a69788796a5b4c3d2 confirmed",
    "nonce: 7e288821b2407a05c16ca5032ba9a2cc428cf8",
]


def test_cf_ray_is_kept_after_a_secret_word() -> None:
    """A request's ray id after an entry that speaks of a token stays: `ray` names it."""
    parts = ["rotated the token this morning", "cf-ray: 7a1b2c3d4e5f6a7b-AMS\nserver: cloudflare"]
    assert Redactor({}).redact_parts(parts) == parts


# Ways of passing a secret written for round 5's preparation (not from any corpus): a path segment
# named for the secret, Go's MySQL DSN, wpa_passphrase, a network device's clear-text password.
SECRETS_PASSED = [
    (
        "POST https://api.example-sms.io/v2/key/Qm7Xv2Lp9Rt4Wk8Nz3Bc6Hd1Jf5G/send",
        "Qm7Xv2Lp9Rt4Wk8Nz3Bc6Hd1Jf5G",
    ),
    ('db, err := sql.Open("mysql", "app:G0lang!Pw@tcp(db:3306)/shop")', "G0lang!Pw"),
    ('wpa_passphrase HomeNet "w1f1-P@ssphrase!"', "w1f1-P@ssphrase!"),
    ("username admin privilege 15 password 0 C1sc0!Adm1n", "C1sc0!Adm1n"),
    ("snmp-server community Publ1cR0!xyz RO", "Publ1cR0!xyz"),
]
KEPT_PASSED = [
    "GET https://docs.example.com/api/token/refresh-and-rotate",
    "enable secret 5 $1$mERr$hx5rVt7rPNoS4wqbXKX7m0",
]


@pytest.mark.parametrize(
    ("text", "secret"), SECRETS_PASSED, ids=[f"passed-{i}" for i in range(len(SECRETS_PASSED))]
)
def test_passed_secret_is_redacted(redactor: Redactor, text: str, secret: str) -> None:
    assert secret not in redact_joined([text], redactor)


@pytest.mark.parametrize("text", KEPT_PASSED, ids=[f"kept-{i}" for i in range(len(KEPT_PASSED))])
def test_passed_look_alike_is_kept(redactor: Redactor, text: str) -> None:
    assert redact_joined([text], redactor) == text


# Round 5's structures (blind round 5 released as training data), as instances written here.
SECRETS_ROUND_5 = [
    # a wallet's private key in base58, whatever the line calls the wallet: WIF, and 64 bytes plain
    (
        "paper wallet (WIF): KzssyhenvqN1vVNiNvvRG49HTEf774dr1aZsMcGSwPgheYwAFwMy",
        "KzssyhenvqN1vVNiNvvRG49HTEf774dr1aZsMcGSwPgheYwAFwMy",
    ),
    (
        "exported bot wallet: 4oByaS3sXzQpVjbxDW8B49Lq4VaDYXxHnNz3aa2W6d54CNPXPkooigAMtFzDmFPQq1yGvxo8LDmgL5hc8fRczBH5",
        "4oByaS3sXzQpVjbxDW8B49Lq4VaDYXxHnNz3aa2W6d54CNPXPkooigAMtFzDmFPQq1yGvxo8LDmgL5hc8fRczBH5",
    ),
    # a payment card's number (its Luhn digit holds), bare or grouped
    ("card on file: 4539 0182 7364 5121 exp 11/29", "4539 0182 7364 5121"),
    ("order_id,card\n9001,378201938475611", "378201938475611"),
    # five groups of five
    ("volume license: Q7W2E-9R4TY-K8M3N-P5L6J-X2Z9B", "Q7W2E-9R4TY-K8M3N-P5L6J-X2Z9B"),
    # a node provider's key as a URL's path
    (
        "ETH_RPC=https://mainnet.example-node.io/v3/4c9d2e8f1a7b3c6d5e0f9a8b7c6d5e4f",
        "4c9d2e8f1a7b3c6d5e0f9a8b7c6d5e4f",
    ),
    # an assignment through `??=`, an aside before `=`, a conversion around the value
    (
        'process.env.WEBHOOK_TOKEN ??= "e1d2c3b4-a5f6-4789-8abc-def012345678";',
        "e1d2c3b4-a5f6-4789-8abc-def012345678",
    ),
    ("Grafana API token (staging) = Qm7Xv2Lp9Rt4Wk8Nz3Bc", "Qm7Xv2Lp9Rt4Wk8Nz3Bc"),
    ('var signingSecret = []byte("7f3e9a1c5b2d8e4f6a0c9b7d5e3f1a2c")', "7f3e9a1c5b2d8e4f6a0c9b7d5e3f1a2c"),
    # a CLI's login given a token, a key as curl's user with a dummy password, a key's flag given a UUID
    (
        "ops@ci:~$ mltool login 9e8d7c6b5a4f30211029384756afbecd01234567",
        "9e8d7c6b5a4f30211029384756afbecd01234567",
    ),
    ("curl -u Qm7Xv2Lp9Rt4Wk8Nz3Bc:X https://helpdesk.example.com/api/v2/tickets", "Qm7Xv2Lp9Rt4Wk8Nz3Bc"),
    (
        "$ coverage-uploader push -t 0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e --service github",
        "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
    ),
    # files that hold credentials by their format: Bundler's, Postfix's sasl_passwd, PgBouncer's userlist
    ("BUNDLE_GEMS__EXAMPLE__COM=ci-bot:9f3a7c1e5b", "ci-bot:9f3a7c1e5b"),
    ("[mail.example.net]:587 relay@example.net:Tq8!vLm2Pz", "Tq8!vLm2Pz"),
    ('"reporting" "Quartz_Falcon_2027!"', "Quartz_Falcon_2027!"),
    # a service account file's key id beside its key
    (
        '{"type": "service_account", "private_key_id": "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567", "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE"}',
        "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567",
    ),
    # prose: a label of words after the secret's name, a login pair after words, a sessionid in a sentence
    ("passphrase for the backup disk: Wq8xTz2Lm9Rv", "Wq8xTz2Lm9Rv"),
    ("Login for the router admin page: admin / Kestrel-Valley-2291", "Kestrel-Valley-2291"),
    (
        "just paste sessionid=q8w2e4r6t1y3u5i7o9p0a2s4d6f8g1h3 into the browser",
        "q8w2e4r6t1y3u5i7o9p0a2s4d6f8g1h3",
    ),
    # a list of recovery codes
    ("recovery codes for the ops mailbox: 4821 7730, 1964 2205, 8830 4417", "4821 7730"),
    # database clients constructed with the password among their arguments
    ("$link = new mysqli('db.internal', 'app', 'Falcon2027river', 'shop');", "Falcon2027river"),
]

# A note, then its value as the next entry.
ENTRY_ROUND_5 = [
    (["TOTP secret for the root account (backup)", "JBSWY3DPEHPK3PXPQ7W2E9R4"], "JBSWY3DPEHPK3PXPQ7W2E9R4"),
    (["the deploy user's password is in the next note", "Falcon-Harbor-88"], "Falcon-Harbor-88"),
    (
        ["contents of config/master.key:", "4c9d2e8f1a7b3c6d5e0f9a8b7c6d5e4f"],
        "4c9d2e8f1a7b3c6d5e0f9a8b7c6d5e4f",
    ),
]

CLEAN_ROUND_5 = [
    # DNS records are published: an ACME challenge, a DKIM key
    '_acme-challenge.example.org. 300 IN TXT "Zq8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq4TuAb"',
    # Tailscale's public node key, a WireGuard table's public keys
    "node_key: nodekey:5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f",
    "| Peer | PublicKey |\n|---|---|\n| laptop | `llT1+q10b3kZvEKo6t7975JOtFlv4OknHvx0jF9xXIw=` |",
    # a fingerprint as GnuPG prints it, a published test vector, an SSH signature
    "added collaborator key 0A1B2C3D4E5F60718293A4B5C6D7E8F901234567 to git-crypt",
    "NIST SP 800-38A F.2.1 CBC-AES128.Encrypt\nKey 2b7e151628aed2a6abf7158809cf4f3c\nIV 000102030405060708090a0b0c0d0e0f",
    "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQAAADMAAAALc3NoLWVkMjU1MTkAAAAgZm9vYmFyYmF6cXV4\n-----END SSH SIGNATURE-----",
    # a document's path of ids, a source map's mappings, a WebAssembly module inlined as base64
    "db.doc('users/Xq8LmN4pXr7Vt2Ws9Yb1/orders/Kd3Hf6Jg0Cc5Ze8Rq4Tu')",
    '{"version": 3, "mappings": ";;AAAA,Zq8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq4TuAbCdEf;AACA"}',
    'const bytes = atob("AGFzbQEAAAABBgFgAX8BfwMCAQAHBwEDZm9vAAAKCQEHACAAQQFqCw==")',
    # a placeholder in angle brackets after a scheme, a secret manager's reference, a card test number
    "authorization: Bearer <token redacted>",
    "DB_PASSWORD={{resolve:ssm-secure:/prod/db/password:3}}",
    "| Visa (3DS) | 4000002760003184 |",
    # prose in Japanese about where a password is kept, a Solana payer called public
    "パスワードは1Passwordの「共有」に保存してあります。",
    "fee payer (public): 9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
]


def test_a_digest_after_a_note_that_does_not_announce_it_is_kept(redactor: Redactor) -> None:
    """A digest stored after an unrelated note about a password stays: only a note that announces
    a value (`…:`, `in the next note`) makes a digest-long hex entry a key."""
    parts = ["rotated the staging password this morning", "5c63f3b9451451a6f9444f1af903ce86"]
    assert redactor.redact_parts(parts) == parts


# Round 6's structures (blind round 6 released as training data), as instances written here.
SECRETS_ROUND_6 = [
    # a quoted password holding the other quote, in code, a config, a JAAS line, a shell prefix
    ('db = connect(host="db", user="app", password="Maple\'s+Harbor9")', "Maple's+Harbor9"),
    ('ScramLoginModule required username="etl" password="Tuesday\'s#77";', "Tuesday's#77"),
    ("MYSQL_PWD='Quartz\"31!delta' mysql -h db -u etl", 'Quartz"31!delta'),
    ('session = login(auth=("svc", "Autumn\'s=19"))', "Autumn's=19"),
    # an unquoted value with a possessive's apostrophe
    ("spring.datasource.password=Harbor's@77", "Harbor's@77"),
    # a passphrase a person chose: small words and the number they add, quoted or to the line's end
    ("define( 'DB_PASSWORD', 'my copper lantern 1988' );", "my copper lantern 1988"),
    ("[db]\nuser = app\npassword = my river falcon 2003\nport = 5432", "my river falcon 2003"),
    # MySQL's SET PASSWORD, an element named by its attribute, netsh's key content
    ("mysql> SET PASSWORD FOR 'app'@'%' = 'harbor.Quartz77';", "harbor.Quartz77"),
    ('<property name="connection.password">Orbit*Lima2031</property>', "Orbit*Lima2031"),
    ("    Key Content            : Tz9!kQm4Lp2x", "Tz9!kQm4Lp2x"),
    # a list entry whose kind says token, then its value
    ("creds:\n  - name: sms-prod\n    kind: api_token\n    value: 7QmXv2Lp9Rt4Wk8N", "7QmXv2Lp9Rt4Wk8N"),
    # a quoted CSV cell under a Password header
    ('"Site","User","Password"\n"router","admin","Lantern@river.42"', "Lantern@river.42"),
    # prose in other languages, a Wi-Fi pair, a dashed name given a quoted value
    ("A senha do servidor é my copper falcon 1991", "my copper falcon 1991"),
    ("La password della VPN è copper-harbor-lantern-orbit", "copper-harbor-lantern-orbit"),
    ("wifi for the lab: LabNet / falcon-copper-river-orbit", "falcon-copper-river-orbit"),
    ('set system login user ops authentication plain-text-password-value "Tz9%21$Lima"', "Tz9%21$Lima"),
    # a NATS nkey seed, a wallet's private key in hex
    (
        "SUAM3XQ2ZLV7TNY4K6W5PJ2RB7HD3GF2QCS5EYUXWA4MZB6TLKN3VDRPHI",
        "SUAM3XQ2ZLV7TNY4K6W5PJ2RB7HD3GF2QCS5EYUXWA4MZB6TLKN3VDRPHI",
    ),
    (
        "treasury wallet private key: 5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f",
        "5c63f3b9451451a6f9444f1af903ce8615fcdebf0b0902ef88efa52389220e6f",
    ),
]

ENTRY_ROUND_6 = [
    (["Password for the team mailbox (outlook)", '"Falcon@river.21."'], "Falcon@river.21."),
    (["Mot de passe du Wi-Fi invités :", "$Harbor$2027$"], "$Harbor$2027$"),
    (["db-07.internal ssh login deploy", "Lantern's#58"], "Lantern's#58"),
]

CLEAN_ROUND_6 = [
    # a mail's DKIM signature, folded over lines
    "DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s1;\n  bh=Zq8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq4TuAb=;\n  b=Xq8LmN4pXr7Vt2Ws9Yb1Kd3Hf6Jg0Cc5Ze8Rq4TuAbCdEfGhIj",
    # an encrypted file's label, then its content
    "secrets.yml.enc:\nJM5vp/1IHeA4jHpYVsTO8g7hf5GkKXHVTWsuOS1IzMuhhI+kYHew4onD3gZ5pjhRhvnK7po4c1vHMSdfKto+flaz0j1e--GH/Nt7GyJaAXBPNm--7LGkwOXCia6HLBLck7QAMg==",
    # an entity tag, a vault reference, a build property set from a variable, a fixture marked fake
    'ETag: W/"5c63f3b9-_XCJ5IDCcuGfW0NZHc3YD-ik_9R"',
    "https://kv-prod.vault.azure.net/secrets/SqlAdminPassword/",
    "sh './gradlew publish -PrepoUser=$REPO_USER -PrepoPass=$REPO_PASS'",
    '{"user": {"email": "test@example.com", "password": "Hunter2-EXAMPLE"}}',
    # a label as a value (`generate-with:`), a cache's result key, an address in a block explorer's path
    '# SECRET_KEY=generate-with: python -c "import secrets; print(secrets.token_urlsafe(50))"',
    "result key      b375b009ffd666bdf080ef3c4bace27b64d5561d",
    "etherscan.io/address/0xb922fd8be2abd9a75f1d5daf807e7099b5849158#code",
    # JSON inside single quotes: its fields are read one by one, a placeholder among them stays
    'PAYLOAD=\'{"token": "${API_TOKEN}", "ttl": 60}\'',
]


# Round 7's structures (blind round 7 released as training data), as instances written here.
SECRETS_ROUND_7 = [
    # a failed match hides nothing: a value that was no cookie's starts the next assignment's name
    (
        "notes for next session: PAYMENTSKEYSECRET is Qm7Xv2Lp9Rt4Wk8Nz3Bc6Hd1 (pasted by the user)",
        "Qm7Xv2Lp9Rt4Wk8Nz3Bc6Hd1",
    ),
    # a TOTP seed in base32 capitals after a clause about a seed; given to a TOTP
    (
        "shared 2FA seed for the ops@ root account: OLTQNMXMHYFSFGRI2XFHMJCIBIS6N64O (add it)",
        "OLTQNMXMHYFSFGRI2XFHMJCIBIS6N64O",
    ),
    ('otp = pyotp.TOTP("JBSWY3DPEHPK3PXPQ7W2E9R4KL5MN6OP")', "JBSWY3DPEHPK3PXPQ7W2E9R4KL5MN6OP"),
    # a weak name, a space, a random value in a sentence
    (
        "I should use the staging alerting key u+3-nvQEv8JKDnfzzPgX when running the tests",
        "u+3-nvQEv8JKDnfzzPgX",
    ),
    # recovery codes a few a line under the words that say so
    ("GitHub recovery codes (saved today):\nq7wz2-xk9mp\n4lr8v-n3ct6\nyb5hd-2jf7s", "q7wz2-xk9mp"),
    # a custom header's value in a curl command
    ("curl -H 'X-Team-Key: vtrmHKJBlQiiGYTcNp7nM7' https://api.example.io/1/auth", "vtrmHKJBlQiiGYTcNp7nM7"),
    # Hebrew and German prose
    ("הסיסמה לשרת היא Zephyr1990!", "Zephyr1990!"),
    ("Kannst du SMS_API_SECRET auf GhH5VACcdUJsmvo6 setzen?", "GhH5VACcdUJsmvo6"),
]

ENTRY_ROUND_7 = [
    (
        ["User gave me the alerting token, stored below.", "56fd856b-fe9b-4031-8f9b-47c6ad3a407f"],
        "56fd856b-fe9b-4031-8f9b-47c6ad3a407f",
    ),
    (["$ cat config/master.key", "8abcc690addadef0d4a7eb7415795818"], "8abcc690addadef0d4a7eb7415795818"),
]

CLEAN_ROUND_7 = [
    # Rails' encrypted credentials alone, a search-only key under its comment, a go.sum version
    "yOgNfUsHuUjl7Fb3sJOvxon2PyljBnL3+/vJmX1jjRF61+USJ7ZMIih6nPTH9rDOkHbCaqMMIFVzYfy0Q+7TH6hR1tMOCG4LyDRU--O5H1elb2K4YorPs4--1Jsaa+I0zkNTf9PWD2EoBA==",
    "const search = algoliasearch('521NYMRA8E', /* search-only */ 'a3694058a10ea1fed83649266a87392c');",
    "github.com/acme/auth v1.8.3 h1:SWaqRdaKGsY1v0QHZpbdhJ+MtrNzn7sJwBwkARHNdgU=",
    # an account's address, a host key's fingerprint, a variable passed on, a payload named so
    "Token deployed to: 0x37d45d70c74177b2cb7988a799443ebf3da892ef",
    "verify the host key before accepting: SHA256:CF+NjYZZZ8cL2XSAcp50p/tLiftUsLcOInm4HGLhGjk",
    "conn = psycopg.connect(host=host, user=user, password=password)",
    "payload (base64): YnqA+WzflLjVKRf2n0slo7+HXoOPuOmc  len=24",
    "$ solana address\n92q2hVo8BBHKgBx1vjERrjLGyAi3rXPnFv3FpK8Y3H6R",
    # a resource an ARN names, an Application Insights connection string, a Go pseudo-version
    "arn:aws:secretsmanager:eu-west-1:604786754664:secret:prod/billing/stripe-WbvFLf",
    '"ConnectionString": "InstrumentationKey=df426d64-f9ad-4f32-8eb0-86d3b5636fba;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/"',
    "require github.com/fabrikam/basalt v0.0.0-20251111154694-75a7af05b5bc",
]


# Round 8's structures (blind round 8 released as training data), as instances written here.
SECRETS_ROUND_8 = [
    # a typed declaration whose type is a string's
    ('  const alertsToken: string = "_Qm7Xv2Lp9Rt4-31XK5d";', "_Qm7Xv2Lp9Rt4-31XK5d"),
    # a login pair after a sentence's `is`; `pw <value>` at a line's start; smbclient's quoted password
    ("the admin login for the wiki is admin / Harbor_Falcon_Quartz_27", "Harbor_Falcon_Quartz_27"),
    ("pw 7qdJAZ-r.%Hnt@U33rx5", "7qdJAZ-r.%Hnt@U33rx5"),
    ("smbclient //files/fin -U maria%'~_JK7FRj6M4,Og8FoV'", "~_JK7FRj6M4,Og8FoV"),
    # C#'s conversions around the literal
    (
        'static readonly byte[] Key = Convert.FromBase64String("q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0QcTu8Ra2=");',
        "q8Zt3vLw9Xr2Kp7Nm4Yb6Hs1Jd5Fg0QcTu8Ra2=",
    ),
    # a UUID after a token's one-letter flag; a private key's id beside its key in variables
    (
        "coverage-tool upload -t 09f31c1e-d1b0-427a-be3b-1c644f7406d2 -f coverage.xml",
        "09f31c1e-d1b0-427a-be3b-1c644f7406d2",
    ),
    (
        'SA_PRIVATE_KEY_ID=2297424e2522582ece9901196d19fb54041ac8e3\nSA_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\nMIIE"',
        "2297424e2522582ece9901196d19fb54041ac8e3",
    ),
    # a weak name before hex of no digest's length, in a stack trace
    ("ApiError: 401 from https://api.example.com/v1/ using key 07aba5894794aba964f7", "07aba5894794aba964f7"),
]

CLEAN_ROUND_8 = [
    "zone id: e247617133b2f44ab75c5b7caaf3b7eb  account id: 5d957c672600cc3e0dd71ae192261586",
    '<meta name="google-site-verification" content="eRqezFN3yk-9MZvHYvucz2FEEjZUFLoVvfbC6djwSis" />',
    "minisign public key: RWVAthxqgh6gln8oXkedLAhK6OXPMs1wP+m4YlklRFyVUDBO0rKHUNt9",
    "Cookie: _gid=GA1.2.765591533.3736223296; tz=Europe%2FBerlin",
    'token: string = "abc"',
]


# Round 9's structures (blind round 9 released as training data), as instances written here.
SECRETS_ROUND_9 = [
    # a settings CSV: a name column names the value column's secret
    ("service,env,name,value\nAlerts,prod,ALERTS_ROUTING_KEY,y_r8OUFnegk4l0LaThJm", "y_r8OUFnegk4l0LaThJm"),
    # a string literal spelled like an identifier; a value set by `docker run -e`
    ('const SMTP_PASSWORD: &str = "Harbor470_au";', "Harbor470_au"),
    ("docker run -d -e POSTGRES_PASSWORD=harbor.falcon112 postgres:16", "harbor.falcon112"),
    # a word for password in Chinese and its value after a space; a login pair after `->`
    ("VPN 账号 lihua，密码 GBNN%r1krx1+563", "GBNN%r1krx1+563"),
    ("creds for the staging SFTP -> sftpuser : AFC8nJkiwVmBgTTCsq6", "AFC8nJkiwVmBgTTCsq6"),
    # a password element's value child, cloud-init's chpasswd list, a user line then its password
    ("<AdminPassword>\n  <Value>orchid-lantern376</Value>\n</AdminPassword>", "orchid-lantern376"),
    ("#cloud-config\nchpasswd:\n  list: |\n    ubuntu:Copper*orbit67\n  expire: false", "Copper*orbit67"),
    ("opsuser07\nAWEA~nnfm7k!219", "AWEA~nnfm7k!219"),
]

ENTRY_ROUND_9 = [
    (
        [
            "Ledger backup words for signer #2:",
            "gown extra gossip maze neutral decorate become hood else interest forget imitate",
        ],
        "gown extra gossip maze neutral decorate become hood else interest forget imitate",
    ),
]

CLEAN_ROUND_9 = [
    "DEBUG pubsub message data=o40ylaDhfIrsdhkUrR6GVBYa9kcYAHdg attributes={}",
    "const key = urlBase64ToUint8Array('B_0tFEacwCQoxnpCuCtS9Q43iX_WHz4fn5-zgpCWQBmChWIUyihw9byELnRQRv1Sp'); // VAPID public key",
    "JWK thumbprint of the signing key (kid): p7ja8kMu0GRKuawdqz93J0QRgFis79qeTMBH-rXajiw",
    "cluster CA: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUQ5VENDQXQrZ0F3SUJBZ0lVT0psYzZu",
    "  user:\n    client-key-data: DATA+OMITTED\n    token: REDACTED",
]


def test_base64_padding_closes_its_token(redactor: Redactor) -> None:
    """A token ending in base64's padding is complete: the next entry is never glued to it."""
    parts = [
        "Authorization: Basic aW50ZWdyYXRpb246VUNzOH41dio/RWh4Ry0hI2EjWio=",
        "users/Sv3LWLTgL3AltI1Y/carts/b5W5f5RwJg",
    ]
    out = redactor.redact_parts(parts)
    assert out[1] == parts[1] and "aW50ZWdyYXRpb246" not in out[0], out


def test_oracle_ezconnect_password_is_redacted(redactor: Redactor) -> None:
    """Round 10 (after its first grading): Oracle's `user/password@//host:port/service` outside a
    JDBC URL; a path before an address is no such string."""
    out = redact_joined(["ORACLE_CONN=etl_user/H~C3g5O9ap8sUDlv-8M@//ora-prod.corp:1521/ORCLPDB1"], redactor)
    assert "H~C3g5O9ap8sUDlv-8M" not in out
    kept = "see docs/guide@example.com:8080/path"
    assert redact_joined([kept], redactor) == kept


# Round 10's structures (after its first grading), as instances written here.
SECRETS_ROUND_10 = [
    (
        'val adoPat = "tgkan6t7cjeoksrlzehpehdolv5ht53uabq2llb37nmrk2dnfczd" // azure devops',
        "tgkan6t7cjeoksrlzehpehdolv5ht53uabq2llb37nmrk2dnfczd",
    ),
    ("生产环境 Secret：0FYbIpV6183CU8vYCdx341i0nRWnya（请勿外传）", "0FYbIpV6183CU8vYCdx341i0nRWnya"),
    ("le mot de passe du routeur est « Tundra!Nimbus2527 »", "Tundra!Nimbus2527"),
    ("customer_id,card,exp\n88213,4539018273645121,03/29", "4539018273645121"),
]

# Round 11's structures (after its first grading), as instances written here: a name glued by
# underscores in prose of any language, a mnemonic with no word that says so, a name alone in one
# entry and `value: …` in the next; kept: a cursor under `pagination token`, a digest under tags, a
# value the code makes.
SECRETS_ROUND_11 = [
    (
        "KAKAO_CLIENT_SECRET 값은 다음과 같습니다: 3fa81c0e9d72b4a6c5e1f0d8b2a7",
        "3fa81c0e9d72b4a6c5e1f0d8b2a7",
    ),
    (
        "Aqui está o DATADOG_API_KEY da produção: 4c1a9e7f2b8d3c6e5f0a1b2c3d4e5f6a",
        "4c1a9e7f2b8d3c6e5f0a1b2c3d4e5f6a",
    ),
    ("Hier ist der INTERNAL_SERVICE_TOKEN für Staging: q8Z3mW0rT5yV2uX7nB4c", "q8Z3mW0rT5yV2uX7nB4c"),
    (
        "Here is the ACME_INGEST_API_KEY for staging: acmik_qv7reltbk2ozh9wnacpxu4sdmyfgj8ckwe3tlvbqzrn6hmpduxi",
        "qv7reltbk2ozh9wnacpxu4sdmyfgj8ckwe3tlvbqzrn6hmpduxi",
    ),
    (
        "faucet wallet, do not lose:\norbit velvet canyon ladder hobby shrimp divert glance pulse ensure mosquito tilt",
        "orbit velvet canyon ladder hobby shrimp divert glance pulse",
    ),
    (
        "walnut dignity rescue fabric oyster lunar pencil habit ocean tribe verify stumble swallow morning"
        " cactus elegant noble frozen vessel render spice adapt clump wisdom",
        "walnut dignity rescue fabric oyster lunar pencil habit",
    ),
]
CLEAN_ROUND_11 = [
    "pagination token Y3Vyc29yOjEyMzQ1Njc4OTAxMg",
    "continuation token c2tpcD0yMDAmbGltaXQ9NTA",
    "cache key: npm-v4-053150b640a7ce75eff69d1a22cae7f0f94ad64ce9a855db544dda0929316519",
    "restored cache Linux-gradle-v2-053150b640a7ce75eff69d1a22cae7f0f94ad64ce9a855db544dda0929316519",
    "const token = crypto.randomUUID().replaceAll('-', '');",
    "let secret = window.crypto.getRandomValues(new Uint8Array(32));",
    "please ship the build after the review and then tag the release branch today",
]
# A sentence in a script written without spaces, as the entry after a note about a secret.
KEPT_AFTER_A_NOTE_ROUND_11 = [
    [
        "Rotated the Mailgun key this morning; the new one is in the vault.",
        "キーを交換しました。新しい値は1Passwordに保存済みです。",
    ],
    [
        "Rotated the Mailgun key this morning; the new one is in the vault.",
        "密钥已经轮换，新值保存在Vault里。",
    ],
]


@pytest.mark.parametrize("parts", KEPT_AFTER_A_NOTE_ROUND_11)
def test_a_sentence_without_spaces_after_a_note_is_kept(redactor: Redactor, parts: list[str]) -> None:
    assert redactor.redact_parts(parts) == parts


ENTRY_ROUND_11 = [
    (["GRAFANA_ADMIN_PASSWORD", "value: Juniper-Falcon-83!"], "Juniper-Falcon-83!"),
    (["PAYMENTS_SIGNING_SECRET", "value: 9xQ2mV7tL4pK8wR3nB6yZ1c"], "9xQ2mV7tL4pK8wR3nB6yZ1c"),
    (["WEBHOOK_SECRET", "Tq7#rV2m!Lp9xZ4k"], "Tq7#rV2m!Lp9xZ4k"),
]


def test_a_password_under_its_name_two_entries_on_is_redacted(redactor: Redactor) -> None:
    """Round 11 (after its first grading): a heading, the name alone, then `value: …`."""
    parts = ["Orion release checklist", "SMTP_RELAY_PASSWORD", "value: k7!Vx2#Qm9pL4tRz"]
    out = redactor.redact_parts(parts)
    assert out[:2] == parts[:2] and "k7!Vx2#Qm9pL4tRz" not in out[2], out


@pytest.mark.parametrize(
    "parts",
    [
        ["LOG_LEVEL", "value: verbose-debug"],
        ["RELEASE_TAG", "value: v2.14.3-rc1"],
        ["DB_HOST", "value: db.internal"],
    ],
)
def test_a_value_under_a_name_that_is_no_secret_is_kept(redactor: Redactor, parts: list[str]) -> None:
    assert redactor.redact_parts(parts) == parts


# Rounds 12 and 12b's structures (after their first gradings), as instances written here: prose in
# other languages (full-width punctuation ends a value, corner brackets quote one, particles and
# dashes lead to it, words for password, key and secret), a password a person chose in small
# letters where a word for password names it, a kickstart root password, SQL Server's `N'…'`, a
# login then `user / password`, a password with a dot after a word and a year, a WordPress salt with
# `=` in it, Honeycomb's header, mnemonics labelled in Japanese or numbered a word a line; kept:
# caches' keys (versioned, namespaced, a digest with its tags, Gradle's and a CI's cache-key lines),
# references to a Secret object, pagination tokens, a Message-ID, a Solana escrow address, an
# instruction where a value would be, encrypted values, a model field's constructor, BIP-39's
# all-zero test vector, a password manager named where a password is kept.
_SHEET_WORDS = "gadget swamp universe jar oak excuse curtain battle marble sting bleak hurt"
_NUMBERED_WORDS = "\n".join(f"{i}. {w}" for i, w in enumerate(_SHEET_WORDS.split(" "), 1))
SECRETS_ROUND_12 = [
    ("数据库的密码是 Kx9#mQ2v!pL，请勿外传。", "Kx9#mQ2v!pL"),
    ("테스트 서버 비밀번호는 harbor_maple4821 입니다", "harbor_maple4821"),
    ("NAS 비번: tundra_river5533", "tundra_river5533"),
    ("Veritabanı şifresi Kiraz2024!x, kimseyle paylaşma.", "Kiraz2024!x"),
    ("Het wachtwoord van de router is zebra_plum8842, niet delen.", "zebra_plum8842"),
    ("DBのパスワードは「Velvet-Orbit-42x」です", "Velvet-Orbit-42x"),
    (
        "Заметка: секрет Stripe (прода) — 9f3c2b1a0e8d7c6b5a4f3e2d1c0b9a8f, истекает завтра",
        "9f3c2b1a0e8d7c6b5a4f3e2d1c0b9a8f",
    ),
    (
        "Te paso la credencial de Mailjet: 7c1e9a3b5d2f4e6a8c0b1d3f5e7a9c2b",
        "7c1e9a3b5d2f4e6a8c0b1d3f5e7a9c2b",
    ),
    ("이 키 쓰시면 됩니다: q7Wz2Lp9Xk4Rv1Ty8Nb3", "q7Wz2Lp9Xk4Rv1Ty8Nb3"),
    (
        "项目密钥是 3b8f1c9e7a2d4f6b8c0e1a3d5f7b9c2e，节点地址 https://rpc.example.org/v3/status",
        "3b8f1c9e7a2d4f6b8c0e1a3d5f7b9c2e",
    ),
    (
        "ウォレットのシードフレーズ：gadget swamp universe jar oak excuse curtain battle marble sting bleak hurt",
        "gadget swamp universe jar oak excuse curtain",
    ),
    ("Recovery sheet, keep offline\n" + _NUMBERED_WORDS, "5. oak"),
    ('{"Username": "app", "Password": "harbor_maple4821"}', "harbor_maple4821"),
    ('network={\n    ssid="Office"\n    psk="amber_falcon5527"\n}', "amber_falcon5527"),
    ("interface=wlan0\nwpa_passphrase=Harbor1999!\nwpa_key_mgmt=WPA-PSK", "Harbor1999!"),
    ("lang en_US.UTF-8\nrootpw --plaintext Q7!mZ2#kLp9x\nbootloader --location=mbr", "Q7!mZ2#kLp9x"),
    ("ALTER LOGIN [svc_etl] WITH PASSWORD = N'Quartz77!Lm', CHECK_POLICY = ON;", "Quartz77!Lm"),
    ("Note: the NAS login is admin / Tk9!vQ2#mXr", "Tk9!vQ2#mXr"),
    ("password Marlin4417.QZ", "Marlin4417.QZ"),
    ("bind_pw = Lotus7788.Ka", "Lotus7788.Ka"),
    (
        "define('NONCE_SALT', 'Lk#2v(Pz;W8^r!Xm~4@Tn+Yb7$Hc)Ej1&Gu%Fs6*=Dw3_Ra5-Qo0|Vi8<Ze9}q');",
        "Lk#2v(Pz;W8^r!Xm~4@Tn+Yb7$Hc)Ej1&Gu%Fs6*=Dw3_Ra5-Qo0|Vi8<Ze9}q",
    ),
    ("X-Honeycomb-Team: 7fQp2LkZ9wXv3RtY8mNc4b", "7fQp2LkZ9wXv3RtY8mNc4b"),
    (
        "Заметка: токен Mux (стейджа) — 4e8b2c6a0f9d1e3b5a7c, истекает 2026-01-09. Ответственный: Олег.",
        "4e8b2c6a0f9d1e3b5a7c",
    ),
    (
        "codes.txt\n0a3f9-7bc21\n5d8e2-91f0a\n3c7b4-e6d05\n8f1a2-4c9e7\n2b6d0-a8f31\n9e4c7-15b2d",
        "5d8e2-91f0a",
    ),
    ("Backup codes for ana@example.com\n1. 4821 9930\n2. 1174 5582\n3. 6620 3318\n4. 9043 2271", "1174 5582"),
]
CLEAN_ROUND_12 = [
    'msg="cache miss" key=checkout-api:v3:7f2c9e1a4b6d ttl=300',
    "Found a cache from build 9912 at v3-deps-Qm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FybHlr=",
    "# Restoring cache 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b-protected...",
    "Build cache key for task ':lib:jar' is 8d777f385d3dfec8815d20f7496026dc",
    '# cache key resolved to npm|"Linux"|Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FybHlrc3Q=',
    "    existingSecret: payments-postgres-creds",
    '{"items": [], "nextPageToken": "Cg9mb29iYXJiYXpxdXgxMjM0NTY3ODkwYWJjZGVmZ2hpams"}',
    "$ aws dynamodb scan --table-name orders --starting-token Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FybHlrc3Rv",
    "Message-ID: <CAJ7xq2Lm9Pz4Rk8Vw3Nb6Tc1Yf5Hd0Gs@mail.example.com>",
    'escrow = "C8H4v4c2eA6njjgzvWSrCpLdYg3hWSygoVsi4RkUrzjV"',
    "SESSION_SECRET=generate-with-openssl-rand-hex-32",
    '"API_TOKEN_ENCRYPTED": "AQICAHhK2pZ9wQ3xL7vN4bT8yR1cF6mJ0sD5gH2kP9qW3eU7iO4aZ1xC8vB5nM2lK6jH"',
    "    secret_key = EncryptedTextField(blank=True)",
    '"mnemonic": "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"',
    "비밀번호는 Bitwarden 공유 폴더에 있습니다.",
    "다음 페이지 토큰(nextPageToken)은 Ck9vYmFyX2Jhel9xdXV4LTEyMzQ1Njc4OQ 입니다. 인증 정보는 아닙니다.",
    "  dist/chunks/a9c3e1f0-5b7d2e8c4f6a1b3d.js   12.4 kB │ gzip: 4.1 kB",
]


def test_a_digest_after_a_note_saying_the_next_note_holds_it_is_redacted(redactor: Redactor) -> None:
    """Round 12 (after its first grading): `(value in the next note)` announces the entry after it."""
    parts = [
        "Sentry auth secret for the billing project (value in the next note)",
        "5e0a8c2f9b7d4e1a3c6f8b0d2e4a6c8f",
    ]
    out = redactor.redact_parts(parts)
    assert out[0] == parts[0] and "5e0a8c2f9b7d4e1a3c6f8b0d2e4a6c8f" not in out[1], out


# Round 13's structures (after its first grading), as instances written here: a label of Chinese
# words and a full-width comma before its colon, a parenthesis before a verb, recovery codes after a
# blank line or as a checklist, a seed phrase a word a line without numbers, a password a person
# chose in small letters after a prose label, Poetry's credentials, a TOTP seed in base32; kept: a
# certificate's DNS validation record, a record's key that is a UUID, signatures (a header's, a
# transaction's), a secret's name read from a store, a flag, dates and version ranges, placeholders in
# French or German, a wiki page's id and title, a CID, a Message-ID, a resource's path of ids, a
# test vector's input.
_LIST_WORDS = "orbit velvet canyon ladder hobby shrimp divert glance pulse ensure mosquito tilt"
SECRETS_ROUND_13 = [
    (
        "Mailgun 密钥已经轮换，新的生产环境用这个：3c9e1a7b5d2f4e6a8c0b1d3f5e7a9c2b4d",
        "3c9e1a7b5d2f4e6a8c0b1d3f5e7a9c2b4d",
    ),
    (
        "内部 API 的令牌（预发）是 7a1c3e5b9d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c，请勿提交。",
        "7a1c3e5b9d2f4a6c8e0b1d3f5a7c9e2b4d6f8a0c",
    ),
    (
        "Okta recovery codes for ops@example.com (made 2025-01-02)\n\n4821 9930\n1174 5582\n6620 3318",
        "1174 5582",
    ),
    (
        "## backup codes\n- [ ] `0a3f9-7bc21`\n- [ ] `5d8e2-91f0a`\n- [ ] `3c7b4-e6d05`\n- [ ] `8f1a2-4c9e7`"
        "\n- [ ] `2b6d0-a8f31`\n- [ ] `9e4c7-15b2d`",
        "5d8e2-91f0a",
    ),
    ("wallet words\n" + "\n".join(_LIST_WORDS.split(" ")), "shrimp\ndivert"),
    (
        "here's the Grafana password for staging: lantern-copper-drift-falcon71 — rotate it Monday",
        "lantern-copper-drift-falcon71",
    ),
    ("poetry config http-basic.internal ci 'Zq8.vT3mL9xW'", "Zq8.vT3mL9xW"),
    ("MFA_SEED=JBSWY3DPEHPK3PXPQRSTUV", "JBSWY3DPEHPK3PXPQRSTUV"),
]
CLEAN_ROUND_13 = [
    '"resource_record_name": "_4c1e9a7b5d2f3e6a8c0b1d3f5e7a9c2b.api.example.org.",',
    "partition=4 offset=1022 key=3f9a2c7e-5b1d-4e8a-9c6f-0a2b4d6e8f10 value=eyJldmVudCI6ICJjbGljayJ9",
    "svix-signature: v1,Qm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FybHk=",
    "X-Twilio-Signature: Qm9vYmFyYmF6cXV4cXV1eGM=",
    "Tx signature: 4mvk3AV95GEG2hcdwM9kwkQVVnfa3vHcNtBGFGn3LHS1sCF9bZdx5Fa2UZXhqRxXRhXxHnAwAJqHjxe5YYfTmSKV",
    "    DEPLOY_CREDS = credentials('gcp-prod-deployer')",
    '  args: ["eks", "get-token", "--cluster-name", "harbor", "--region", "eu-west-1"]',
    '        "js-tokens": "^4.0.0",',
    "| STRIPE_SECRET_KEY | `sk_live_****` | 2025-04-01 |",
    "export OPENAI_API_KEY=votre-clé-ici",
    "Runbook: https://wiki.example.org/spaces/OPS/pages/731864202/Failover",
    "- legacy: /ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG",
    "Message-ID: <CA+Km4uFoa_1Py0mWnR6XfTJQRml3tfVgzhgcl==HR9B25@mail.example.com>",
    '"uri": "/2010-04-01/Accounts/AC0f1e2d3c4b5a69788796a5b4c3d2e1f0/Calls/CA1f2e3d4c5b6a79808f9e8d7c6b5a4f3e.json"',
    'VECTOR_SEED = "5e3a8c1f9b7d2e4a6c8f0b1d3e5a7c9f2b4d6e8a0c1f3b5d7e9a2c4f6b8d0e1a"',
]

# Round 14's structures (after its first grading), as instances written here: Vietnamese, Hindi and
# Indonesian words for password and key, a recovery phrase with BIP-39's `replace` and `change` in
# it, labelled in Korean or Vietnamese, a phrase wrapped over two lines; kept: a cache's key with its
# digest between tags, KMS ciphertext, a ULID, code that reads an environment variable.
SECRETS_ROUND_14 = [
    ("Mật khẩu máy chủ là Harbor2031!moss nhé.", "Harbor2031!moss"),
    ("Khóa Mailjet cho production là Qz7vT2mL9xW4pK8r , đừng đưa lên git.", "Qz7vT2mL9xW4pK8r"),
    (
        "Jenkins का नया टोकन: 5c2e8a1f9b7d3e6a0c4f2b8d1e7a9c3f5b6d0e2a",
        "5c2e8a1f9b7d3e6a0c4f2b8d1e7a9c3f5b6d0e2a",
    ),
    ("Kata sandi VPN kantor: Melati2029#xr", "Melati2029#xr"),
    (
        "recovery phrase: replace orbit velvet canyon change hobby shrimp divert glance pulse ensure tilt",
        "velvet canyon change hobby",
    ),
    (
        "지갑 복구 문구입니다: gadget swamp universe jar oak excuse curtain battle marble sting bleak hurt",
        "universe jar oak excuse",
    ),
    (
        "gadget swamp universe jar oak excuse\ncurtain battle marble sting bleak hurt",
        "curtain battle marble",
    ),
]
CLEAN_ROUND_14 = [
    "Restoring cache for key: yarn-3a7f9c2e1b5d8f4a6c0e2b9d7f1a3c5e8b0d2f4a-protected",
    "ciphertext blob: AQICAHhK2pZ9wQ3xL7vN4bT8yR1cF6mJ0sD5gH2kP9qW3eU7iO4aZ1xC8vB5nM2lK6jH3gF4dS5aQ",
    "01HX62CPRND2GR6QA825XY79EG",
    "01HX62CPRND2GR6QA825XY79EG\n01HPQQB1H5X3G23C236SKPETNJ\n01HHXPAQH5HQ36CDQ3H3NWF7E5",
    "const pass = process.env.SMTP_PASS;",
]

# Round 15's structures (after its first grading), as instances written here: a verb before a value
# is a word of its own (never the `er` of `service`), `mdp`, a recovery phrase labelled `복구 구문`.
SECRETS_ROUND_15 = [
    ("usuario deploy, contraseña vQ+mT-@R%kLbN_zx (service)", "vQ+mT-@R%kLbN_zx"),
    ("identifiant admin, mdp : Quartz2024!vx (SMTP)", "Quartz2024!vx"),
    ("rede Escritorio_5G, senha harbor-lantern-ticket41", "harbor-lantern-ticket41"),
    (
        "지갑 복구 구문: gadget swamp universe jar oak excuse curtain battle marble sting bleak hurt",
        "universe jar oak excuse",
    ),
]

# Round 16's structures (after its first grading), as instances written here: a value at the end of a
# sentence (its full stop is no member access); kept: an optional chain's call, a field and its hex
# in a build's version line.
SECRETS_ROUND_16 = [
    (
        "Hallo, für den Deploy braucht ihr: NETLIFY_AUTH_TOKEN = Qm7vT2xL9pK4wR8nB3cZ. Danke!",
        "Qm7vT2xL9pK4wR8nB3cZ",
    ),
    (
        "Cześć, konfiguracja: SENTRY_AUTH_TOKEN = b7e2c9a1f4d8e3b6a0c5f2d9e1b4a7c3. Dzięki.",
        "b7e2c9a1f4d8e3b6a0c5f2d9e1b4a7c3",
    ),
]
CLEAN_ROUND_16 = [
    "const token = req.headers.authorization?.split(' ')[1];",
    "go version go1.22.4 linux/arm64 (vcs.revision=9c1e4a7b2d5f8e0a3c6b9d2e5f8a1b4c7d0e3f6a)",
]

# Round 17's structures (after its first grading), as instances written here: a Scandinavian word
# for key in its definite form, a parenthesis and words before the verb; a connection string's
# password holding `#` (no URL fragment outside a URL). Kept: an SSH key type's blob, whatever its
# first bytes; base64 of a sentence that says `passed` or `author`.
SECRETS_ROUND_17 = [
    ("Nøglen (Mailjet API) til produktion er Xk3pQ9mV2rT7wL4nB8cZ5hJ1", "Xk3pQ9mV2rT7wL4nB8cZ5hJ1"),
    ("Nyckeln (PagerDuty) till stagingmiljön är u7Rk2LmQ9xWc4TnB8pZe", "u7Rk2LmQ9xWc4TnB8pZe"),
    ("Nøkkelen til byggserveren er f3a9c1e7b5d2048a6c9e1f3b7d5a2c8e", "f3a9c1e7b5d2048a6c9e1f3b7d5a2c8e"),
    (
        "Data Source=db01.corp.example;Initial Catalog=Billing;User Id=svc_bill;Password=Tr0ub#4dor&3x!;",
        "Tr0ub#4dor&3x!",
    ),
    ('$cs = "Server=sql02;Database=hr;Uid=hr_app;Pwd=pQ7#zL2m#Vx9;"', "pQ7#zL2m#Vx9"),
    (
        "Server=tcp:sql9.example.net,1433;Database=ops;User ID=etl;Password=m4XqT9vL#Rk2Wc7Np3Zs*Hd;Encrypt=True;",
        "m4XqT9vL#Rk2Wc7Np3Zs*Hd",
    ),
]
CLEAN_ROUND_17 = [
    "|1|q8Zk2mV7xR4pL1nT9cB3wY6hJ0s=|a5Df8gH2jK4lZ7xC1vB6nM9qW3e= ssh-ed25519 "
    "Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1Kd5Fs0Gy2Qe7Ua4Io9Pt",
    "github.com ecdsa-sha2-nistp384 Kf9Lm2Qx7Vr4Tw8Nb3Cz6Hj1Kd5Fs0Gy2Qe7Ua4Io9PtRz3Wm8Xn1Bv6",
    "motd.b64: QnVpbGQgIzQxMiBwYXNzZWQgb24gYWxsIHJ1bm5lcnMsIG5pY2Ugd29yayBldmVyeW9uZS4=",
    "credits: VGhpcyB0aGVtZSB3YXMgd3JpdHRlbiBieSBhIHByb2xpZmljIGF1dGhvciBmcm9tIE9zbG8u",
]

# Round 18's structures (after its first grading), as instances written here: Honeycomb's keys by their
# own prefix; Slack's `d` cookie percent-encoded; `… changed, new one is `<value>``; a word for key in
# another language given a password's shape; mosquitto_passwd's and nmcli's passwords; a settings
# row's value with other columns set beside it. Kept: a value whose element or list pair names an id;
# a public key named in a clause (`… public key for the release: …`).
SECRETS_ROUND_18 = [
    (
        "collector ingest key: hcaik_7f3k9q2m8x4v1b6n0p5r2t8w3y7z1c4e6g9h2j5k8m1n4q7s0u3w6y9a2c5",
        "hcaik_7f3k9q2m8x4v1b6n0p5r2t8w3y7z1c4e6g9h2j5k8m1n4q7s0u3w6y9a2c5",
    ),
    (
        "curl https://acme.slack.com/api/users.list -b 'd=xoxd-Qm7vT2xL9pK4wR8nB3cZ%2F5hJ1kD6fS0gY2qE7uA4"
        "%2BiO9pT3rZ8wM1nB%3D%3D; d-s=1700000000'",
        "Qm7vT2xL9pK4wR8nB3cZ%2F5hJ1kD6fS0gY2qE7uA4",
    ),
    ("heads up, the prod Sentry token changed, new one is `Zr8kQ2mW7xLp4Vn9Tc3B`", "Zr8kQ2mW7xLp4Vn9Tc3B"),
    ("heads up, the staging DB password changed, new one is `Walnut_Crab4412`", "Walnut_Crab4412"),
    (
        "    'otlp_headers' => 'hcxik_qwmfkrplszbvnhtydxcejoagu3iwklrmfpzqhsvbndytexcogajuwk2l',",
        "hcxik_qwmfkrplszbvnhtydxcejoagu3iwklrmfpzqhsvbndytexcogajuwk2l",
    ),
    ("Schlüssel für das Staging-Konto: Falke2025#Nord", "Falke2025#Nord"),
    ("sudo mosquitto_passwd -b /etc/mosquitto/pw sensor01 'Kettle2026?77'", "Kettle2026?77"),
    ("nmcli device wifi connect Lab-5G password amber-tidal-fox-91", "amber-tidal-fox-91"),
    (
        "UPDATE config\n   SET value = 'Zr8kQ2mW7xLp4Vn9', modified_by = 'ana'\n WHERE name = 'smtp_password';",
        "Zr8kQ2mW7xLp4Vn9",
    ),
]
CLEAN_ROUND_18 = [
    "<oauthClientId>Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1Kd5Fs0Gy</oauthClientId>",
    '        - name: SLACK_CLIENT_ID\n          value: "Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1Kd5Fs0Gy"',
    "signify public key for the 7.4 release: RWQe8cGk2x0mV7tL4pK8wR3nB6yZ1cHd5Jf9Qs2Tu7Wv3",
    "Ключ: Kubernetes-1.29",
]
ENTRY_ROUND_18 = [
    (["Name of the variable the billing job reads: DB_PASSWORD", "→ Lantern2027$qq"], "Lantern2027$qq"),
    (
        ["ops creds — variable paymentsApiKey", "9f3b2c7d1e8a4f6b0c5d2e9a7b1f3c8d  (set 2026-03-02)"],
        "9f3b2c7d1e8a4f6b0c5d2e9a7b1f3c8d",
    ),
]

# Round 19's structures (after its first grading), as instances written here: words for key, token and
# password in Hebrew, Arabic, Thai and Greek, with their verbs (`הוא`, `คือ`, `είναι`); German's
# `Zugangsdaten`; English's `token` before another language's verb; a TOTP seed under a key word; an id
# and its secret with a spaced slash; a CSV header of titles; FreeRDP's `/p:`; a value printed by
# `kubectl … jsonpath='{.data.…}'`. Kept: `%%NAME%%`, an id beside a secret in a line about one (`client_id:
# … # the secret lives in Vault`), a token contract's address, a path with a spaced slash.
SECRETS_ROUND_19 = [
    (
        "שלום, המפתח של Mailgun לסביבת הייצור הוא 9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c",
        "9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c",
    ),
    (
        "مرحباً، هذا مفتاح Stripe للاختبار: 7Kq2Lm9Vr4Tw8Nb3Cz6Hj1Kd5Fs0GyXp",
        "7Kq2Lm9Vr4Tw8Nb3Cz6Hj1Kd5Fs0GyXp",
    ),
    ("รหัสผ่าน ของเซิร์ฟเวอร์ staging คือ Pine7!harbor#Quill ครับ", "Pine7!harbor#Quill"),
    (
        "Το κλειδί του Mailchimp για το staging είναι: 4f8a2c9e1b7d3f6a0c5e8b2d9f1a4c7e",
        "4f8a2c9e1b7d3f6a0c5e8b2d9f1a4c7e",
    ),
    ("Zugangsdaten Sentry (Staging): 5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d", "5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d"),
    (
        "Gửi anh, token GitLab runner môi trường dev là Qm7vT2xL9pK4wR8nB3cZ5hJ1 nhé",
        "Qm7vT2xL9pK4wR8nB3cZ5hJ1",
    ),
    (
        "Το κλειδί 2FA για τον λογαριασμό ops είναι: JBSWY3DPEHPK3PXPKRZTQ4LMNB2GS6YA",
        "JBSWY3DPEHPK3PXPKRZTQ4LMNB2GS6YA",
    ),
    ("the Nexmo key for prod is 4a7c9e21 / Tq8Vx2Lm9Rk4Wc7N, rotate monthly", "Tq8Vx2Lm9Rk4Wc7N"),
    ("Mailjet Api Key,Mailjet Secret Key\n8d2f4a6c1e9b,Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1", "Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1"),
    ("wfreerdp /u:svc_rdp /p:Kx7#mQ2vL9zR /v:win-jump-02", "Kx7#mQ2vL9zR"),
    (
        "$ kubectl -n billing get secret stripe -o jsonpath='{.data.secret-key}'\nU3RyaXBlS2V5OTkhQWJj",
        "U3RyaXBlS2V5OTkhQWJj",
    ),
    ("> what's the Grafana admin password?\nOtter#Lamp2291 - same login as prod", "Otter#Lamp2291"),
]
ENTRY_ROUND_19 = [
    (
        [
            "Q: where's the Sentry key for staging?",
            "A: it's 7d3f9a2c1e8b4f6a0c5d2e9b7a1f3c8d (rotate Friday)",
        ],
        "7d3f9a2c1e8b4f6a0c5d2e9b7a1f3c8d",
    ),
]
CLEAN_ROUND_19 = [
    "api_token: %%API_TOKEN%%",
    "oauth client_id: Iv1.8a2c4e6f1b3d5a7c  # public; the client secret is in Vault",
    'const TOKEN_CONTRACT = "0x9b3c1a7e5d2f4b6a8c0e2d4f6a8b1c3e5d7f9a0b"; // token on mainnet',
    "key rotation notes live in runbooks/rotation-2024 / security-handbook-v2 for now",
    "> which tag did we ship?\nrelease-2024.06 - merged yesterday",
]

# Round 20's structures (after its first grading), as instances written here: a name's own assignment
# after a sentence's label that failed (`Memo: for the … key secret: <key>`); an XML element whose name
# ends in the secret's word; a .pgpass line as a string literal; a Markdown table whose `What` column
# names the value; English's `API key` before another language's verb. Kept: S3's ExtendedRequestId,
# a keyword argument named as an id, a pod's name; a keyword argument named as a key is still a secret.
SECRETS_ROUND_20 = [
    ("Memo: for the billing app key secret: Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1", "Zq7Xp2Lm9Vr4Tw8Nb3Cz6Hj1"),
    ("  <smtpRelayPassword>Harbor#2291x!Q</smtpRelayPassword>", "Harbor#2291x!Q"),
    ('PGPASS_ENTRY = "db-prod.lan:5432:*:backup:Qx7#Lm2Vr9Tw"', "Qx7#Lm2Vr9Tw"),
    (
        "| Service | What | Value | Owner |\n|---|---|---|---|\n| mailjet | mailjet secret key | Zr8kQ2mW7xLp4Vn9 | Ana |",
        "Zr8kQ2mW7xLp4Vn9",
    ),
    (
        "Nota: el Sentry API key nuevo es 5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d (el viejo ya no vale).",
        "5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d",
    ),
    (
        'client = Client(api_key="3f2a9c1e-4b7d-4e8a-9c2f-1a3b5c7d9e0f")',
        "3f2a9c1e-4b7d-4e8a-9c2f-1a3b5c7d9e0f",
    ),
]
CLEAN_ROUND_20 = [
    "S3 error: RequestId 8f2c9a1e, ExtendedRequestId Qm7vT2xL9pK4wR8nB3cZ5hJ1kD6fS0gY2qE7uA4iO9pT3rZ8wM1nB",
    'app = PublicClientApplication(client_id="3f2a9c1e-4b7d-4e8a-9c2f-1a3b5c7d9e0f")',
    "pod/billing-worker-7c9d8f6b5x-q2w8z   1/1   Running   0   5m",
]

# Round 21's structures (after its first grading), as instances written here: a name that reads like a
# placeholder is the next assignment's name (`key: stripe_api_key = <key>`); a value whose name stands
# above it (a plist's key, a Terraform output, a cookie jar's pair); a session cookie named in a
# sentence; `… via <NAME>. Value:` then the value in the next entry. Kept: an OAuth query's state and
# nonce beside its code challenge; a cookie jar's theme.
SECRETS_ROUND_21 = [
    ("- Notes: key: stripe_api_key = 9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c", "9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c"),
    (
        "<dict>\n  <key>SentryAuthToken</key>\n  <string>Qm7vT2xL9pK4wR8nB3cZ5hJ1</string>\n</dict>",
        "Qm7vT2xL9pK4wR8nB3cZ5hJ1",
    ),
    (
        '"db_admin_password": {\n    "sensitive": true,\n    "type": "string",\n    "value": "Kx7#mQ2vL9zR!p"\n  }',
        "Kx7#mQ2vL9zR!p",
    ),
    (
        '{\n  "name": "JSESSIONID",\n  "value": "9F3B2C7D1E8A4F6B0C5D2E9A7B1F3C8D"\n}',
        "9F3B2C7D1E8A4F6B0C5D2E9A7B1F3C8D",
    ),
    (
        "SUP-1182: logout broken, their PHPSESSID is q7vx2lm9rk4wc8np3zs5hd6ty1 still",
        "q7vx2lm9rk4wc8np3zs5hd6ty1",
    ),
]
ENTRY_ROUND_21 = [
    (
        ["Reminder: the worker reads its SMTP password via SMTP_RELAY_PASSWORD. Value:", "Quill#Harbor#7731"],
        "Quill#Harbor#7731",
    ),
]
CLEAN_ROUND_21 = [
    "code_challenge=Qm7vT2xL9pK4wR8nB3cZ5hJ1kD6fS0gY2qE7uA4iO9p&code_challenge_method=S256"
    "&state=9f3b2c7d1e8a4f6b0c5d2e9a7b1f3c8d&nonce=Zq7Xp2Lm9Vr4Tw8Nb3Cz6H",
    '{"name": "theme", "value": "dark-mode-2024"}',
]

# Round 22's structures (after its first grading), as instances written here: words and digits a person
# joined under a strong name (`storePassword=rocket-orbit_5906`, `authtok = Tiger81.Falcon`); Redis's
# `ACL SETUSER … >password`. Kept: a placeholder before a comma (`password=<redacted>,`), addresses in a
# transfer's `from … to …`, filler words and repeated digits under a key's name.
SECRETS_ROUND_22 = [
    ("keyPassword=harbor-lantern_7204", "harbor-lantern_7204"),
    ('  KIBANA_PASSWORD: "maple.otter_2718"', "maple.otter_2718"),
    ("ldap_default_authtok = Quill42.Harbor", "Quill42.Harbor"),
    ("ACL SETUSER reporter on >Zq7Xp2Lm9Vr4Tw8Nb3Cz ~reports:* +@read", "Zq7Xp2Lm9Vr4Tw8Nb3Cz"),
]
CLEAN_ROUND_22 = [
    "log excerpt (scrubbed): password=<redacted>, token=[FILTERED]",
    "Transfer confirmed: from 7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU to 9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
    '  "apiKey": "sample-api-key-1111"',
]

# Round 23's structures (after its first grading), as instances written here: a Markdown list's bold
# name and an arrow (`* **NAME** → value`); a value offered in a question and named after it; an id
# and its secret after `until I rotate it`; a variable's name anywhere in the note before a value, or
# a session cookie's. Kept: a mail header's encoded word, a placeholder percent-encoded, where a token
# is kept told in Japanese, and an arrow in prose (`Personal access tokens → Fine-grained`).
SECRETS_ROUND_23 = [
    ("* **SMTP_RELAY_PASSWORD** → Harbor#2291x!Q", "Harbor#2291x!Q"),
    (
        "Lena: can you try with Qm7vT2xL9pK4wR8nB3cZ5hJ1kD6f? that's the webhook signing secret",
        "Qm7vT2xL9pK4wR8nB3cZ5hJ1kD6f",
    ),
    (
        "@tom use this Mailgun until I rotate it: key-4a7c9e21 / 9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c",
        "9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c",
    ),
]
ENTRY_ROUND_23 = [
    (
        ["note to self: SENTRY_AUTH_TOKEN for the billing job", "5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d"],
        "5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d",
    ),
    (
        ["Saving the JSESSIONID support sent:", "9F3B2C7D1E8A4F6B0C5D2E9A7B1F3C8D"],
        "9F3B2C7D1E8A4F6B0C5D2E9A7B1F3C8D",
    ),
]
CLEAN_ROUND_23 = [
    "Subject: =?UTF-8?B?QmVzdGVsbHVuZyB2ZXJzZW5kZXQgLSBWaWVsZW4gRGFuayE=?=",
    "POST /oauth/token grant_type=client_credentials&client_secret=%5BREDACTED%5D",
    "トークンは1Passwordの共有保管庫にあります。",
    "open Settings → Developer settings → Personal access tokens → Fine-grained, then pick the repo",
]

# Round 24's structures (after its first grading), as instances written here: a value in parentheses
# after the secret's name in prose; a value offered and named in a parenthesis after it; a secret
# store's audit line (`path=/…/<secret> … new=<value>`); a YAML key whose child `value:` holds it; a CSV
# whose `key_name` column names the row's value. Kept: a detached JWS, a gpg key id, a format field
# where a URL's password would be.
SECRETS_ROUND_24 = [
    (
        "Standup: wiring Redis — ana gave me the password (Zr8kQ2mW7xLp4Vn9), moving it to vault",
        "Zr8kQ2mW7xLp4Vn9",
    ),
    ("Can you try with this one? Quill_harbor7731# (it's the preprod admin password)", "Quill_harbor7731#"),
    (
        "2024-05-02T10:00:00Z audit user=ops action=secret.update path=/billing/stripe-secret-key old=<none> "
        "new=9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c",
        "9c4e1a7b3f8d2e6a0b5c9f1d4e7a2b8c",
    ),
    ('billing:\n  smtpPassword:\n    existingSecret: ""\n    value: "Harbor#2291x!Q"', "Harbor#2291x!Q"),
    (
        'service,env,key_name,value,rotated\nSentry,prod,SENTRY_AUTH_TOKEN,"5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d",2024-06-01',
        "5b9e2d7a1c4f8b3e6a0d9c2f7e1b4a8d",
    ),
]
CLEAN_ROUND_24 = [
    "x-jws-signature: eyJhbGciOiJQUzI1NiJ9..Qm7vT2xL9pK4wR8nB3cZ5hJ1kD6fS0gY2qE7uA4iO9pT3rZ8wM1nB6yV0cX4eF7g",
    'gpg: Good signature from "ana <ops@example.com>" [ultimate], key 4F9A2C7D1E8B3F6A',
    "DSN: postgres://report:%s@10.0.3.17/analytics (password filled in at runtime)",
    '  theme:\n    value: "dark-mode-2024"',
]
SECRETS_ROUND_25 = [
    # a console's read that names the value printed under it
    ("> sessionStorage.getItem('stripeSecretKey')\n< 'Wq8Zr2Lp5Xv9Tb3N'", "Wq8Zr2Lp5Xv9Tb3N"),
    (">>> os.environ[\"SENDGRID_PASSWORD\"]\n'kV9#pL2mQ7xR'", "kV9#pL2mQ7xR"),
    ("$ printenv MAILGUN_API_KEY\n3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e", "3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e"),
    ("PS C:\\ops> $env:JIRA_API_TOKEN\nQ7rT2yU8iO4pA6sD9fG1hJ3k", "Q7rT2yU8iO4pA6sD9fG1hJ3k"),
    (
        '$ kubectl -n pay get secret pay-db -o jsonpath="{.data.db_password}" | base64 --decode\nHm4!pQ8zR2vL6wX',
        "Hm4!pQ8zR2vL6wX",
    ),
    # an Android manifest's name and value attributes
    (
        '<meta-data android:name="io.acme.SIGNING_SECRET" android:value="7d3f9b1e5c8a2f6d0b4e9a7c3f1d8b5e"/>',
        "7d3f9b1e5c8a2f6d0b4e9a7c3f1d8b5e",
    ),
    # an aside that names the variable
    ("Ops handover — Mailjet secret (MAILJET_API_SECRET): Tz8qW3nB6vY1mK4p", "Tz8qW3nB6vY1mK4p"),
    # words and digits joined, and `now`, in other languages' prose
    ("A senha do banco de homologação é falcon-river-83", "falcon-river-83"),
    ("Das Admin-Passwort ist jetzt Rk7#mQ2vX9pL", "Rk7#mQ2vX9pL"),
    (
        "Zugang für das Grafana-Staging: 4f7b2d9e1a6c3f8b5d0e7a2c9f4b1d6e8a3c5f7b",
        "4f7b2d9e1a6c3f8b5d0e7a2c9f4b1d6e8a3c5f7b",
    ),
    # a value kept with its expiry
    ("Reminder — Sendinblue (prod): Vb7nQ2xZ9kL4pR8w. Expires in March.", "Vb7nQ2xZ9kL4pR8w"),
    # a row whose cell before names the variable; a Basic credential's base64 as a literal
    (
        "billing,Braintree,BRAINTREE_PRIVATE_KEY,9f3b7d1a5c8e2f6b4d0a7c3e1f5b9d2a,2023-11-02",
        "9f3b7d1a5c8e2f6b4d0a7c3e1f5b9d2a",
    ),
    ('basic_auth = "ZGVwbG95X2JvdDpUcjcja1cycFo5eFE="', "ZGVwbG95X2JvdDpUcjcja1cycFo5eFE="),
    ("use this SMTP password until I change it on Monday: lantern_k8w2q_41", "lantern_k8w2q_41"),
]
CLEAN_ROUND_25 = [
    '{"DbPasswordSecret": "https://corp-kv.vault.azure.net/secrets/DbPassword/7c1e4b9f2a5d8c3e6b0f1a4d7e9c2b5f"}',
    "Cookie: cookie_prefs=analytics%3Dtrue%26ads%3Dfalse; lang=de",
    "> localStorage.getItem(\"tokenExpiresAt\")\n< '1735689600000'",
    'String pw = System.getenv("SMTP_PASSWORD");\nmailer.login(user, pw);',
    "$ echo $API_TOKEN_PATH\n/var/run/secrets/api-token",
    "Das Passwort ist jetzt im Tresor hinterlegt.",
    "binaryData:\n  logo.png: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    'ETag: "5d41402abc4b2a76b9719d911017c592"\nExpires: Thu, 01 Jan 2026 00:00:00 GMT',
    "Invoice id: 7c9e6679-7425-40de-944b-e07fc1f90ae7 (expires 2025-01-31)",
    '{"ok": true, "response_metadata": {"next_cursor": "dXNlcjpVMEc5UUY5QzY="}}',
]
ENTRY_ROUND_25 = [
    (
        [
            "Note to self — Postmark for invoices",
            "9b2f7d4e-1c6a-4e8b-a3f5-7d9c1e2b4a6f\n(expires 2025-03-01)",
        ],
        "9b2f7d4e-1c6a-4e8b-a3f5-7d9c1e2b4a6f",
    ),
    (
        ["Mailgun for billing", "4c8e2a7f1d9b3e6a5c0f8d2b7e4a1c9f\n(valid until end of June)"],
        "4c8e2a7f1d9b3e6a5c0f8d2b7e4a1c9f",
    ),
]

SECRETS_ROUND_26 = [
    # a lookup's default in Rust; Gradle's escaped literal; a hex key parsed where it is given
    (
        'let token = std::env::var("SENTRY_AUTH_TOKEN").unwrap_or("c41f9a2e7b3d8c5f1a6e0b9d4c7f2a8e".to_string());',
        "c41f9a2e7b3d8c5f1a6e0b9d4c7f2a8e",
    ),
    ('buildConfigField "String", "MAPS_SECRET", "\\"Xq7Lp2Zr9Tb4Wn6Vk8Yc\\""', "Xq7Lp2Zr9Tb4Wn6Vk8Yc"),
    (
        'final byte[] hmacKey = HexFormat.of().parseHex("8e3c1f7a9b2d4e6f0a5c8b1d3e7f9a2c4b6d8e0f1a3c5e7b9d2f4a6c8e0b1d3f");',
        "8e3c1f7a9b2d4e6f0a5c8b1d3e7f9a2c4b6d8e0f1a3c5e7b9d2f4a6c8e0b1d3f",
    ),
    # a label whose secret's word is followed by a participle, and ends in an aside
    (
        "- Staging Mailgun API token generated for the migration (revoke next week): Kd8vQ3xP7mZ2nL5w",
        "Kd8vQ3xP7mZ2nL5w",
    ),
    # a tool's `New value:` under the line that names a password
    (
        "Reset done. Password for the [admin] account successfully changed.\nNew value: pQ7vX2mK9rT4wZ8n",
        "pQ7vX2mK9rT4wZ8n",
    ),
    # a contraction between the name and its verb
    ("the password we're rotating to is Harbor!Lantern2291", "Harbor!Lantern2291"),
    # a browser's cookie export: other fields between the cookie's name and its value
    (
        '[\n  {\n    "name": "JSESSIONID",\n    "path": "/",\n    "secure": true,\n'
        '    "value": "9F2C7A1E4B8D3F6A0C5E9B2D7F1A4C8E"\n  }\n]',
        "9F2C7A1E4B8D3F6A0C5E9B2D7F1A4C8E",
    ),
]
CLEAN_ROUND_26 = [
    "support asked for the charge id ch_3Nq and the idempotency key 7d1e9c4a-2b5f-4e8a-9c3d-1f6b8a2e4c7d",
    '    pin_spki: "q9Xb7Lm2Zr4Tn6Wc8Vk1Yp3Hs5Jd0Fg7Ka9Ub2Ne4Mo="',
    "export OPENAI_API_KEY=sk-proj-<your key here>",
    "  nginx.conf: c2VydmVyIHsKICBsaXN0ZW4gODA4MDsKICBsb2NhdGlvbiAvIHsgcHJveHlfcGFzcyBodHRwOi8vYXBwOjMwMDA7IH0KfQo=",
    "Restoring cache... # restored key: node-modules-Xq7Lp2Zr9Tb4Wn6Vk8YcPq",
    "minisign -Vm app.tar.gz -P RWw2aCqp+YREwSLViBAqYWVtvIVjghHA61vSQfAAfeV73nipLu0vXluM",
    "[512.004211] RSP: 0018:ffffa3c1d2e4f680 EFLAGS: 00010202",
    '  "Key": "reports/2025-11-30/daily-summary.json",',
    "Supabase creds — variable supabaseUrl\nvalue: https://abcdefghijklmnop.supabase.co",
]
ENTRY_ROUND_26 = [
    # a chat's value, and the next message says a secret was pasted
    (
        [
            "[09:01] ana: why is the billing sync failing?",
            "[09:02] li: fine here with Tz4mQ8vK2xP7nL9w",
            "[09:03] ana: don't paste tokens here please, rotating it now",
        ],
        "Tz4mQ8vK2xP7nL9w",
    ),
    # an agent's tool call reading a named secret, and its result in the next entry
    (
        [
            '[tool_use] bash {"command": "kubectl get secret app -o jsonpath=\'{.data.SMTP_PASSWORD}\' | base64 -d"}',
            "[tool_result] Wq8Zr2Lp5Xv9Tb3Nq",
        ],
        "Wq8Zr2Lp5Xv9Tb3Nq",
    ),
]

SECRETS_ROUND_27 = [
    # a lookup's default on the next line; a diff's added line quoted in a review
    (
        'var secret = configuration["Stripe:SecretKey"]\n             ?? "Lq8vT3xZ7mK2pW9n";',
        "Lq8vT3xZ7mK2pW9n",
    ),
    (
        "review: this adds\n> +SMTP_PASSWORD=Gravel!Puzzle5521#\nplease drop it from history",
        "Gravel!Puzzle5521#",
    ),
    # a Terraform state's random_password result
    (
        '{"type": "random_password", "name": "api", "instances": [{"attributes": {"length": 20, '
        '"result": "q7!Zr2#LmX9v@Tb4Wn6k"}}]}',
        "q7!Zr2#LmX9v@Tb4Wn6k",
    ),
    # words and digits glued to `-p`; two words that say secret together in a chat's label
    ("  412  psql -h db -Ureport -pharbor-tiger-lamp-rose58 -c 'select 1'", "harbor-tiger-lamp-rose58"),
    ("[10:02] ana: here's the app key for qa: Xb7%Qm29Lp4r", "Xb7%Qm29Lp4r"),
]
CLEAN_ROUND_27 = [
    "nostr: npub1qpzry9x8gf2tvdw0s3jn54khce6mua7lqpzry9x8gf2tvdw0s3jn54khce",
    "2025-03-02T08:11:40 INFO settle: signature=4Kq9ZtRwX7mN2vB8cL5pJ3hF6gD1sA9eU4yT7rW2qE5oP8iM3nB6vC1xZ9kL4jH7fG2dS5aQ8"
    "wE3rT6yU9iO2p slot=1 status=finalized",
    "quarkus.oidc.credentials.secret=${OIDC_SECRET:__set_me__}",
    "Server=myServerAddress;Database=myDataBase;User Id=myUsername;Password=myPassword;",
    '{"user": "ana@example.org", "apiKey": "sk-\\u2026Zk3Q"}',
    'level=info msg="dial" dsn="mysql://svc:<redacted>@db-7.internal:3306/orders"',
    'create(:admin, password: "password123")',
    '  "arweave_tx": "Zr9Tb4Wn6Vk8YcPq2Lm7Xv3Nk5Jd0Fg7Ka9Ub2Ne4Mo",',
]
ENTRY_ROUND_27 = [
    # a chat reply that is only a value, after a message asking for a session cookie by its name
    (
        [
            "kim: what goes in PHPSESSID? staging keeps logging me out",
            "tom: use this one -> 9f2c7a1e4b8d3f6a0c5e9b2d7f",
        ],
        "9f2c7a1e4b8d3f6a0c5e9b2d7f",
    ),
    # a note naming the variable with an arrow, the value in the next entry
    (["move to vault -> REDIS_PASSWORD; current value below", "Vt7#qLz9Xm2Kp4Rw"], "Vt7#qLz9Xm2Kp4Rw"),
]

SECRETS_ROUND_28 = [
    # Redis's directive; kubectl's literal; a list's variable and an arrow
    ("requirepass Vq7#Lm2xZ9pT4wKn", "Vq7#Lm2xZ9pT4wKn"),
    ("kubectl create secret generic pay-db --from-literal=db-password=HarborFox2291", "HarborFox2291"),
    ("- SENDGRID_API_SECRET → Qm7!xT2vLp9Zr4Wk", "Qm7!xT2vLp9Zr4Wk"),
    # tab-separated rows: the cell before names the variable or the session cookie
    ("Redis\tREDIS_PASSWORD\tK8v~Tq2_Zm7Lp4=Rw9\tprod", "K8v~Tq2_Zm7Lp4=Rw9"),
    (
        "Django session\tsessionid\tq8v2m7x4k9z3t6w1p5n0r8b2c7d4f9g1\texpires soon",
        "q8v2m7x4k9z3t6w1p5n0r8b2c7d4f9g1",
    ),
    # a TOTP seed given to an OTP library; a base64 password whose padding ends it
    ('otp = pyotp.TOTP("KZXW6YTBOI3DEMRSHA4TGNBV")', "KZXW6YTBOI3DEMRSHA4TGNBV"),
    ("Backup:\n  rootPasswordB64: WSFsai1URFZSQ3pEMipvJXBqX1R6Nzg=", "WSFsai1URFZSQ3pEMipvJXBqX1R6Nzg="),
]
CLEAN_ROUND_28 = [
    "Le fingerprint de la clé est SHA256:Xq7Lp2Zr9Tb4Wn6Vk8YcPq3Hs5Jd0Fg7Ka9Ub2Ne4M, à vérifier.",
    "set DBCONN=Server=db01;User Id=app;Password=%DB_PASSWORD%;",
    "Set-Cookie: consent=ads:false,stats:true; Path=/",
    "KMS key: arn:aws:kms:us-east-1:123456789012:key/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0",
    "Der Cookie _fbp=fb.1.1733000000000.123456789 wird gesetzt.",
    "| Prefix | Meaning |\n|---|---|\n| `ghp_` | classic PAT |\n| `github_pat_` | fine-grained PAT |",
    "rclone lsd gdrive: --drive-root-folder-id 1aB2cD3eF4gH5iJ6kL7mN8oP9qR0sT_uV",
    "# account public key (safe to publish)\naccount: GBXK7QZ3MLWPRT2UVYE5HDNA4FJS6KCOIQ7XW3ZL2MPRTV5UYEHDNAFJ",
    "Cookie: _ga=GA1.2.123456789.1700000000; theme=dark",
    "to get one: Settings → Developer settings → Personal access tokens → Fine-grained",
]

SECRETS_ROUND_29 = [
    # a block's name (a path ending in the secret's name), then its value fields below
    (
        'resource "aws_ssm_parameter" "smtp_password" {\n  name  = "/prod/mailer/smtp_password"\n'
        '  type  = "SecureString"\n  value = "Kestrel~4471"\n}',
        "Kestrel~4471",
    ),
    # a URL's password of a word, a dot and digits
    ("amqp://app:Sunsetmeadow.6074@mq:5671/ is the broker", "Sunsetmeadow.6074"),
]
CLEAN_ROUND_29 = [
    "archived at https://arweave.net/Zr9Tb4Wn6Vk8YcPq2Lm7Xv3Nk5Jd0Fg7Ka9Ub2Ne4Mo",
    "| `API_TOKEN` | the service's token | `<api_token>` |",
    'resource "aws_ssm_parameter" "db_host" {\n  name  = "/prod/app/db_host"\n  type  = "String"\n'
    '  value = "db-7.internal.example"\n}',
]
ENTRY_ROUND_29 = [
    # a chat reply after a question that names the key in another language
    (
        ["Chen: ¿Alguien tiene la clave de Twilio para prod?", "Elif: 4c8e2a7f1d9b3e6a5c0f8d2b7e4a1c9f"],
        "4c8e2a7f1d9b3e6a5c0f8d2b7e4a1c9f",
    ),
]

SECRETS_ROUND_30 = [
    # a session cookie's value in the row under its name, as a browser's cookie pane lists them
    (
        "Cookies for the staging app:\nName: JSESSIONID\nValue: 7F3C9A1E5B2D8F4A6C0E9B1D3F5A7C2E\nPath: /",
        "7F3C9A1E5B2D8F4A6C0E9B1D3F5A7C2E",
    ),
    (
        "name: laravel_session\nvalue: eyJpdiI6Ik1xT3pWbDd%3D%3Dk2s9Fq81ZpLw0Tc\nsecure: true",
        "eyJpdiI6Ik1xT3pWbDd%3D%3Dk2s9Fq81ZpLw0Tc",
    ),
    # a host's dotted name between the secret's name and `is`
    (
        "fyi the admin password for grafana.ops.eu-west-1.internal.example is Vq7#mZ2!pL9xR4 until Friday",
        "Vq7#mZ2!pL9xR4",
    ),
]
CLEAN_ROUND_30 = [
    # bytes in colon-separated hex, with a word before the secret's name that says fingerprint
    "the SHA1 thumbprint of the new signing key is 4a:9c:01:7e:bb:23:5f:d0:11:8a:6c:e2:93:47:0f:d5:2e:b8:c1:09",
    "md5 fingerprint of the old deploy key was 3f:08:c2:77:1a:d9:4e:b5:60:2c:9f:e1:7a:44:d3:0b",
    # a cookie pane's row under a name that is no session's
    "Name: theme\nValue: dark-compact\nPath: /",
]

SECRETS_ROUND_31 = [
    # a CSV row: the cell before the `value` column names the secret (kebab-case)
    (
        "region,app,kind,value,updated\nap-south,payments,sendgrid-api-key,Q7mK2xP9vL4wR8tN3bJ6,2026-01-09",
        "Q7mK2xP9vL4wR8tN3bJ6",
    ),
    # a state file's object: `"name": "/<path>/<secret's name>"`, then its `"value"` under another key
    (
        '{"attributes": {\n  "name": "/prod/billing/smtp-password",\n  "type": "SecureString",\n'
        '  "value": "Harbor-violet2291"\n}}',
        "Harbor-violet2291",
    ),
    # a sentence about a secret, an arrow, the value
    (
        "Farah: the new SFTP password for the vendor drop is live -> Lantern#owl4418 (please don't forward)",
        "Lantern#owl4418",
    ),
    # a clause whose noun is `one`, the secret the sentence before named
    (
        "the Mailjet secret expired overnight. I made a fresh one: 9f2c7a41d08e5b63c1a7 . rotate it later",
        "9f2c7a41d08e5b63c1a7",
    ),
    # Redis's AUTH at its prompt
    ("sessions-02:6380> AUTH default Saffron-kettle-57\nOK", "Saffron-kettle-57"),
    # a rotation ticket's `Old value (…):` under its title and its status
    (
        "SEC-118 Rotate webhook secret (prod)\nStatus: Done\nOld value (kept until Monday): 4d8aQz71Lw0pX5",
        "4d8aQz71Lw0pX5",
    ),
]
CLEAN_ROUND_31 = [
    # an xpub with a derivation path below it, in a wallet descriptor
    "descriptor: pkh(xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8/1/*)",
    # a URL whose userinfo is a placeholder, then its port and path
    "mysql://USER:PASS@HOST:3306/appdb?charset=utf8mb4",
    # CloudFront's request id after its header name
    "cache miss at 03:12, X-Amz-Cf-Id Lk3RfZ0y_9QpWmE2vH8bT1xA6cN4uJ7sD5gK0oP2iY3rV8nB==",
    # an arrow in code, and a menu path
    "val mapped = tokens.map { token -> token.trim() }",
]
ENTRY_ROUND_31 = [
    # a note that says the value is in the next entry, naming the secret before that
    (
        [
            "Reminder (billing, prod): the Braintree private key is kept in the following memory note.",
            "8c1f4e7a9b2d6053f1e8a7c4b9d2e6f0",
        ],
        "8c1f4e7a9b2d6053f1e8a7c4b9d2e6f0",
    ),
]

SECRETS_ROUND_32 = [
    # a header's value set before its name (Objective-C this time)
    (
        '[req setValue:@"4be1c9a07d3f52e86a1b0c7d9e2f4a6b" forHTTPHeaderField:@"X-Api-Token"];',
        "4be1c9a07d3f52e86a1b0c7d9e2f4a6b",
    ),
    # an XML element with attributes whose tag names the password
    ('<Credential>\n  <Password type="plain">Tundra_ember93</Password>\n</Credential>', "Tundra_ember93"),
    # a key's bytes in hex under a name that says key
    (
        "static const unsigned char hmac_key[] = {0x4f, 0xa2, 0x19, 0xd7, 0x3c, 0x88, 0xe1, 0x06, 0xb5, 0x7a};",
        "0x4f, 0xa2, 0x19, 0xd7, 0x3c, 0x88, 0xe1, 0x06, 0xb5, 0x7a",
    ),
    # an aside about `it` between the secret's name and the label's colon
    (
        "the Sentry auth token for prod, keep it out of tickets: Wq81nXz4Pt0cRvB7sLm2Ke",
        "Wq81nXz4Pt0cRvB7sLm2Ke",
    ),
]
CLEAN_ROUND_32 = [
    # an OAuth client's id before its Google domain
    "GIDClientID = 318840277615-a7kq3r2x9b1m5n0c8v6t4z2w1y7u3s9p.apps.googleusercontent.com",
    # a TrustKit list of pins under a key that says public key hashes
    "<key>TSKPublicKeyHashes</key>\n<array>\n  <string>Yq2Kx8vB1nR4tW7mZ0aF3cH6jL9pS5dG2eU8oI1rT4Y=</string>\n</array>",
    # a URI's path after its scheme
    "model stored at runs:/8e2f4c1a9b7d3e5f6a0c2b4d8e1f3a5c/model",
    # a member read with a fallback, in minified code
    'function(e){this.apiKey=e.apiKey||"",this.secret=e.secret||null}',
    # an AES test key under its NIST heading
    "/* FIPS-197 C.1 AES-128 */\nconst uint8_t key[16] = {0x00,0x01,0x02,0x03,0x04,0x05,0x06,0x07,0x08,0x09,0x0a,0x0b,0x0c,0x0d,0x0e,0x0f};",
]
ENTRY_ROUND_32 = [
    # a note that names a passphrase for a key under the home folder, its value in the next entry
    (["passphrase for ~/.ssh/deploy_ed25519 on the runner:", "Vn6#rTq!82pLmZe"], "Vn6#rTq!82pLmZe"),
]

SECRETS_ROUND_33 = [
    # a line in another language that names a key, its value alone on the next line
    ("Hier der Schlüssel für Mailgun\n3f9c0a7e5d2b8146c9e1f0a3b7d5c2e8", "3f9c0a7e5d2b8146c9e1f0a3b7d5c2e8"),
    ("Пароль от стенда\nLynx_harbor2291", "Lynx_harbor2291"),
    # an arrow after a sentence about a password in another language
    ("已经更新了数据库密码 → Orchid!5520kx", "Orchid!5520kx"),
]
CLEAN_ROUND_33 = [
    # a key's fingerprint in hex, the line naming the fingerprint before the key
    "Fingerprint of the signing key: 5A1C9E7B3D2F08E6A4B1C7D9E3F5A2B8C0D4E6F1",
    "Empreinte de la clé : 5A1C9E7B3D2F08E6A4B1C7D9E3F5A2B8C0D4E6F1",
    # a password manager's name where the value would be
    "smtp password -> Bitwarden (folder Mail)",
    # base64 of text in UTF-8
    "b64: SGVqIHbDpHJsZGVuLCBow6RyIMOkciByYXBwb3J0ZW4gZsO2ciBtYXJz",
    # a card number the line calls a test card
    "use test card 5200 8282 8282 8210 in the sandbox",
]
ENTRY_ROUND_33 = [
    # a note that points down at its value in the next entry
    (
        ["Stripe webhook signing secret (staging) ↓", "9d4e2b7a1c8f6035e2d9b4a7c1f8e3d6"],
        "9d4e2b7a1c8f6035e2d9b4a7c1f8e3d6",
    ),
]

SECRETS_ROUND_34 = [
    # JDBC's password, the third argument
    ('var conn = DriverManager.getConnection(dbUrl, "billing_ro", "Quartz#river88");', "Quartz#river88"),
    # an account and its password as a cracking tool prints them
    ("Cracked hash: ACME\\backup_svc : Willow7!harbor", "Willow7!harbor"),
    # base64 of user:password after a line that says basic auth, in another language
    (
        "voici le header Basic auth pour staging : ZGVwbG95OlJpdjNyLVN0b25lLTQ0Mg==",
        "ZGVwbG95OlJpdjNyLVN0b25lLTQ0Mg==",
    ),
    # a table whose header says credential in words
    (
        "| Team | Tool | Password on record |\n|---|---|---|\n| sales | Hubspot | Mosaic!7741rtq |",
        "Mosaic!7741rtq",
    ),
]
CLEAN_ROUND_34 = [
    # a signing key named by its id
    "Release v2.4.0 signed with key 3A9F0C12B7E45D68",
    "git config --global user.signingkey 0x9E21B4C7D03A5F86",
    # an OkHttp pin, a JOSE thumbprint, a DKIM record's public key, an encrypted value
    "CertificatePinner pin: sha256/k8vQ2mZr4Tn1Wx7Yb0Cs3Pd6Fg9Hj2Kl5Mn8Qr1St4=",
    'jwk header: {"alg": "RS256", "x5t#S256": "Zq3Lw8Nx2Vr5Tb7Hy1Kc4Pd9Fg6Sj0Mm3Qn8Rt2Wv5"}',
    "dkim._domainkey: v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC7kQ2mZr4Tn1Wx7Yb0Cs3Pd6Fg9",
    "EncryptedValue in the export: Vm9pY2kgdW4gY2hpZmZyZSBjb3JyZWN0IGV0IGxvbmcgcG91ciBsZSB0ZXN0|bQk3Zz==",
    # a file's name after a key's rule id, a commit with its subject
    "rule=aws-secret-key file=deploy/values.prod.yaml line=12",
    'reverted in 3c1f7a9e2b8d4c6e0f5a7b9d1e3c5a7f9b1d3e5f ("drop leaked token from ci.yml")',
    # published test keys
    "RFC 7748 X25519 test vector, Alice's private key: 77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
]

SECRETS_ROUND_35 = [
    # a label in an Indic script between the secret's name and its colon
    ("Mira: staging का DB password यह है: Tamarind42!orbit — शेयर मत करना", "Tamarind42!orbit"),
    # a value written into a text file whose name says pass
    ("printf 'Kq7vLm2xPz9w' > /etc/app/smtp_pass.txt", "Kq7vLm2xPz9w"),
]
CLEAN_ROUND_35 = [
    # an id under a name for an id, a document's path after `doc`, a value its aside calls public
    "GCS object generation 1733402211, ObjectId Yq8vR2mXc5tL0nP4sD7fG1hJ3kW6zB9e, 4.1 MiB",
    "Firestore document orders/Xk2mQ9vL4pR7tN1sC8wF",
    "Paddle client token: live_9f3a7c21e05b48d6a1c4e7b2f08 (public by design)",
]

SECRETS_ROUND_36 = [
    # a sentence about a secret, a dash, then `it's` and the value
    ("Nadia sent the Vertica password for the churn model — it's Hemlock#5521quiver", "Hemlock#5521quiver"),
    # a password `was reset to` a value ending in `!` (no type follows a verb)
    (
        "Ticket OPS-77: the Airflow admin password was reset to Marble_9043tundra! by Kenji",
        "Marble_9043tundra!",
    ),
    # a literal passed to an HMAC as its key, as Python bytes
    (
        'sig = hmac.new(b"3f9d0c1e7a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9b1c3d", msg, sha256)',
        "3f9d0c1e7a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d1e3f5a7b9c1d3e5f7a9b1c3d",
    ),
    # a label's aside in CJK parentheses, then a full-width colon
    ("Redshift password（etl 用）：Qv7#mLw2Xp9t ，请勿外传", "Qv7#mLw2Xp9t"),
    # a JSON object named for the secret whose `Value` (capital V) holds it
    ('{\n  "SnowflakePassword": {\n    "Value": "tK4pW9zQ2mXv7LrB"\n  }\n}', "tK4pW9zQ2mXv7LrB"),
]
CLEAN_ROUND_36 = [
    # a feature flag's bucketing salt, among its variations and rollout
    '{"key": "beta-export", "variations": [true, false], "fallthrough": {"rollout": {"bucketBy": "key"}},'
    ' "salt": "5c1e0a9b7d3f4e2a8b6c0d1e2f3a4b5c"}',
    # `reset` as the name's word, not the verb (`the password reset code is …`)
    "the password reset code is 8f3kLq92Xz",
]

SECRETS_ROUND_37 = [
    # a list item naming a secret, an arrow, the value
    ("Credentials (to the vault soon):\n* Redshift password → Qm7#vLx2pR9t\n* Console: SSO", "Qm7#vLx2pR9t"),
    # `here you go →` under a line that asks for a session cookie (a session's id: lower case and digits)
    (
        "[10:02] ana: anyone have the session cookie for staging?\n[10:04] raj: here you go → "
        "k3m9x2p7q1w8e5r4t6y0u2i9o8p7a6s5",
        "k3m9x2p7q1w8e5r4t6y0u2i9o8p7a6s5",
    ),
    # base64 of `user:password` pasted under a line that asks for a basic auth header
    (
        "[09:00] li: which Basic auth header does the partner API take?\n[09:01] jo: c3ZjOk5vcnRoU3RhcjQ0IQ==",
        "c3ZjOk5vcnRoU3RhcjQ0IQ==",
    ),
    # a label line that is only a secret's name, its value on the next line (a settings screen in a box)
    ("│ RabbitMQ password\n│ Orchid_8841delta\n│ [Copy]  [Regenerate]", "Orchid_8841delta"),
    # Oracle's `user/password` under a connection's name
    ("TNS_CONN: reporting/Velvet*2231harbor", "Velvet*2231harbor"),
]
CLEAN_ROUND_37 = [
    # a digest column, whatever a row's file is named; media files named by random stems
    "| Artifact | SHA-256 |\n|---|---|\n| release.tar.gz.sig | `9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081` |",
    "Attachment: capture_Xk29LmQp7v.png, logs attached",
    "2025-04-01 09:12:03  88123 media/2025/04/3c9f1e7a5b2d4f6081a3c5e7f9b1d3f5.pdf",
    # `here you go →` under a request that names no secret
    "[1] a: session replay link?\n[2] b: here you go → 45ilmjahvrebq39lyzs5omlcs0",
]
ENTRY_ROUND_37 = [
    # a note naming a password, then `value below:`, the value the next entry
    (["Kafka SASL password (variable KAFKA_PW), value below:", "Quartz-7719-ember"], "Quartz-7719-ember"),
    # `here you go →` in the entry after the one asking for a PHP session id
    (
        [
            "[11:00] mo: anyone have the PHPSESSID for the demo tenant?",
            "[11:02] ed: here you go → 9f2k4m6p8r0t2v4x6z8b0d2f4h",
        ],
        "9f2k4m6p8r0t2v4x6z8b0d2f4h",
    ),
]

SECRETS_ROUND_38 = [
    # base64 of `user:password` under a name that says auth, whatever else the name says
    ("ENV PARTNER_AUTH_HEADER=ZGVwbG95OkhhcmJvci1MeW54NDQ3", "ZGVwbG95OkhhcmJvci1MeW54NDQ3"),
    # a sentence naming a password, then ` = ` and the value
    ("reminder: the password for the kibana admin = Thistle82#Quarry", "Thistle82#Quarry"),
]
CLEAN_ROUND_38 = [
    # a hash after a word that could be a user's name (`user hash: …`); a message's payload in base64
    "billing user hash: 5f2c9e1a7b3d4f6081a2c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4",
    "avro payload (base64) from the retry topic: EhJvcmRlcnMtcmV0cnktMDA0Mg",
]

SECRETS_ROUND_39 = [
    # a function named for a secret that returns a literal (a test fixture, a comment between)
    (
        '@pytest.fixture\ndef sendgrid_api_key():\n    # TODO swap for a fake\n    return "5c0e9b7a2d4f6e8c1a3b5d7f9e2c4a6b"',
        "5c0e9b7a2d4f6e8c1a3b5d7f9e2c4a6b",
    ),
    # a commit's subject naming a secret's variable, the value in parentheses at its end
    ("    fix: hardcode REDIS_PASSWORD for qa (Lm9#tQ2v!Rx7Pz)", "Lm9#tQ2v!Rx7Pz"),
    # a literal handed to a password-hashing call
    ("const hashed = await bcrypt.hash('Sparrow!8834copper', 10);", "Sparrow!8834copper"),
    # a session cookie's name given a session's id (lower-case letters and digits)
    ("process.env.SESSIONID = 'q8w2e4r6t8y0u2i4o6p8a0s2d4f6g8h0';", "q8w2e4r6t8y0u2i4o6p8a0s2d4f6g8h0"),
    # `New value:` under a ticket line naming an encryption key (two words that say secret together)
    (
        "OPS-77 | Done\nRotated the data encryption key for svc 'ledger'.\nNew value: 9c1e5a7f3b2d4e6081a2c3e4f5a6b7c8",
        "9c1e5a7f3b2d4e6081a2c3e4f5a6b7c8",
    ),
]
CLEAN_ROUND_39 = [
    # code between two string literals; a field named for a key's digest; a digest a line verifies
    "jest.mock('../auth', () => ({ getToken: jest.fn().mockResolvedValue('mock-refresh-token') }));",
    "        migrations.AddField('apitoken', 'token_sha256', models.CharField(max_length=64)),",
    # an algorithm's name given to a hash call
    "digest = hash('sha256')",
]


def test_round_36_a_literal_whose_inner_token_was_taken_first_goes_whole(redactor: Redactor) -> None:
    """A literal passed to a call whose inner token an earlier rule took (a runner token and its
    routing suffix, round 36's Tableau `'<base64>==:<secret>'`): the call's rule widens over that
    finding, so no piece of the literal is left."""
    text = (
        "INSERT INTO tenants (flag, runner_token) VALUES ('true', 'glrt-Xk29LmQp7vR4tW8zN1cB.01.1a00gc29t');"
    )
    out = redactor.redact(text)
    assert "Xk29LmQp7vR4" not in out and "1a00gc29t" not in out, out
    assert out.endswith("VALUES ('true', '[REDACTED:positional-secret]');"), out


def test_round_39_a_digest_its_line_verifies_is_kept_after_an_entry_naming_a_token(
    redactor: Redactor,
) -> None:
    """`Verified: <sha256> matches SHA256SUMS` read after an entry about a token: what follows the hex
    says it is a digest, whatever the entry before named."""
    parts = [
        'const slackToken = "x" // move to env',
        "Checked: 3b7e9a1c5d2f4e6081a2c3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4 matches SHA256SUMS",
    ]
    assert redactor.redact_parts(parts) == parts


SECRETS_ROUND_40 = [
    # a line that is only a secret's label with an aside, its value on the next line
    (
        "Next note: Cohere API key (staging)\n7c2e9a4f1b3d5e6081a2c3e4f5a6b7c8d9e0f1a2",
        "7c2e9a4f1b3d5e6081a2c3e4f5a6b7c8d9e0f1a2",
    ),
    # an app password's four groups, unquoted, in a logged map's field
    ("INFO mailer config: {imap_password=qwer tyui opas dfgh, port=993}", "qwer tyui opas dfgh"),
    # a random value a sentence says to authenticate with
    (
        "when you call the ledger API for me, authenticate with 5e8b2c1d9f7a3e4b6c0d2f8a1b3c5d7e.",
        "5e8b2c1d9f7a3e4b6c0d2f8a1b3c5d7e",
    ),
]
CLEAN_ROUND_40 = [
    # a cookie its line calls base64 JSON; a SealedSecret's ciphertext under a label and `encryptedData:`
    "The preferences cookie is plain base64 JSON: eyJ0aGVtZSI6ICJkYXJrIiwgImJldGEiOiB0cnVlfQ==",
    "sealed: encryptedData:\n  api_token: AgCx7Rk2mQ9vL4pW8zT1nY6bH3dF5gJ0sA2eC4iK6oM8qU0wZ2xV4...(truncated)",
]


def test_round_36_a_key_as_curls_user_at_an_entrys_end_is_redacted_with_an_entry_after_it(
    redactor: Redactor,
) -> None:
    """`curl … -u <key>:` ends its entry; read with the next entry, the key is still a whole value."""
    key = "5be0c2d9a47f13e86b2c9d0f7a1e4b3c"
    parts = [f"curl https://api.example.com/export -u {key}:", "OPS-412: export job retried at 02:10"]
    out = redactor.redact_parts(parts)
    assert key not in out[0] and out[1] == parts[1], out


def test_round_32_a_row_after_a_token_that_ends_an_entry_is_kept(redactor: Redactor) -> None:
    """A provider's URL at an entry's end, a placeholder alone, does not become a token by taking the
    next entry's CSV row as its rest: both entries stay."""
    parts = [
        "the hook format is https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "run_id,owner,minutes\n9c2e41d7-5a3b-4f80-b6e1-7d2c9a0f4e83,ana,12",
    ]
    assert redactor.redact_parts(parts)[1] == parts[1]


def test_round_28_id_under_a_note_that_names_it_is_kept(redactor: Redactor) -> None:
    """A program's id in the entry after a note that calls it an id."""
    parts = ["Solana program id (devnet)", "i8n7UWS3jWS5NxAep5GiQHDPymsan2VGBdDsMF2ippaj"]
    assert redactor.redact_parts(parts) == parts


def test_round_25_password_two_entries_below_its_login_note_is_redacted(redactor: Redactor) -> None:
    """A login's note, its user, then its password, an entry each."""
    parts = ["the staging Jenkins login", "deploy", "Wz4!kP9qR2mX7vL"]
    out = redactor.redact_parts(parts)
    assert out[:2] == parts[:2] and "Wz4!kP9qR2mX7vL" not in out[2], out
    kept = ["the staging Jenkins login", "deploy", "release-notes"]
    assert redactor.redact_parts(kept) == kept


# Every round's instances, one test for each kind of instance; the ids stay `round<N>-<kind>-<i>`.
_SECRET_LISTS = (
    (2, SECRETS_ROUND_2), (3, SECRETS_ROUND_3), (4, SECRETS_ROUND_4), (5, SECRETS_ROUND_5),
    (6, SECRETS_ROUND_6), (7, SECRETS_ROUND_7), (8, SECRETS_ROUND_8), (9, SECRETS_ROUND_9),
    (10, SECRETS_ROUND_10), (11, SECRETS_ROUND_11), (12, SECRETS_ROUND_12), (13, SECRETS_ROUND_13),
    (14, SECRETS_ROUND_14), (15, SECRETS_ROUND_15), (16, SECRETS_ROUND_16), (17, SECRETS_ROUND_17),
    (18, SECRETS_ROUND_18), (19, SECRETS_ROUND_19), (20, SECRETS_ROUND_20),
    (21, SECRETS_ROUND_21), (22, SECRETS_ROUND_22), (23, SECRETS_ROUND_23),
    (24, SECRETS_ROUND_24), (25, SECRETS_ROUND_25), (26, SECRETS_ROUND_26),
    (27, SECRETS_ROUND_27), (28, SECRETS_ROUND_28), (29, SECRETS_ROUND_29), (30, SECRETS_ROUND_30),
    (31, SECRETS_ROUND_31), (32, SECRETS_ROUND_32), (33, SECRETS_ROUND_33),
    (34, SECRETS_ROUND_34), (35, SECRETS_ROUND_35), (36, SECRETS_ROUND_36), (37, SECRETS_ROUND_37), (38, SECRETS_ROUND_38), (39, SECRETS_ROUND_39), (40, SECRETS_ROUND_40),
)  # fmt: skip
_CLEAN_LISTS = (
    (2, CLEAN_ROUND_2), (3, CLEAN_ROUND_3), (4, CLEAN_ROUND_4), (5, CLEAN_ROUND_5), (6, CLEAN_ROUND_6),
    (7, CLEAN_ROUND_7), (8, CLEAN_ROUND_8), (9, CLEAN_ROUND_9), (11, CLEAN_ROUND_11),
    (12, CLEAN_ROUND_12), (13, CLEAN_ROUND_13), (14, CLEAN_ROUND_14), (16, CLEAN_ROUND_16),
    (17, CLEAN_ROUND_17), (18, CLEAN_ROUND_18), (19, CLEAN_ROUND_19), (20, CLEAN_ROUND_20),
    (21, CLEAN_ROUND_21), (22, CLEAN_ROUND_22), (23, CLEAN_ROUND_23),
    (24, CLEAN_ROUND_24), (25, CLEAN_ROUND_25), (26, CLEAN_ROUND_26),
    (27, CLEAN_ROUND_27), (28, CLEAN_ROUND_28), (29, CLEAN_ROUND_29), (30, CLEAN_ROUND_30),
    (31, CLEAN_ROUND_31), (32, CLEAN_ROUND_32), (33, CLEAN_ROUND_33),
    (34, CLEAN_ROUND_34), (35, CLEAN_ROUND_35), (36, CLEAN_ROUND_36), (37, CLEAN_ROUND_37), (38, CLEAN_ROUND_38), (39, CLEAN_ROUND_39), (40, CLEAN_ROUND_40),
)  # fmt: skip
_ENTRY_LISTS = (
    (5, ENTRY_ROUND_5), (6, ENTRY_ROUND_6), (7, ENTRY_ROUND_7), (9, ENTRY_ROUND_9), (11, ENTRY_ROUND_11),
    (18, ENTRY_ROUND_18), (19, ENTRY_ROUND_19), (21, ENTRY_ROUND_21),
    (23, ENTRY_ROUND_23), (25, ENTRY_ROUND_25), (26, ENTRY_ROUND_26),
    (27, ENTRY_ROUND_27), (29, ENTRY_ROUND_29), (31, ENTRY_ROUND_31), (32, ENTRY_ROUND_32), (33, ENTRY_ROUND_33),
    (37, ENTRY_ROUND_37),
)  # fmt: skip


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        pytest.param(t, s, id=f"round{n}-secret-{i}")
        for n, cases in _SECRET_LISTS
        for i, (t, s) in enumerate(cases)
    ],
)
def test_round_structure_is_redacted(redactor: Redactor, text: str, secret: str) -> None:
    out = redact_joined([text], redactor)
    assert secret not in out, out


@pytest.mark.parametrize(
    "text",
    [pytest.param(t, id=f"round{n}-clean-{i}") for n, cases in _CLEAN_LISTS for i, t in enumerate(cases)],
)
def test_round_look_alike_is_kept(redactor: Redactor, text: str) -> None:
    assert redact_joined([text], redactor) == text


@pytest.mark.parametrize(
    ("parts", "secret"),
    [
        pytest.param(p, s, id=f"round{n}-entry-{i}")
        for n, cases in _ENTRY_LISTS
        for i, (p, s) in enumerate(cases)
    ],
)
def test_round_value_in_the_next_entry_is_redacted(redactor: Redactor, parts: list[str], secret: str) -> None:
    out = redactor.redact_parts(parts)
    assert out[0] == parts[0] and secret not in out[1], out


@pytest.mark.parametrize(
    ("parts", "secret"), SPLIT_ROUND_4, ids=[f"round4-split-{i}" for i in range(len(SPLIT_ROUND_4))]
)
def test_round_4_split_secret_is_redacted(redactor: Redactor, parts: list[str], secret: str) -> None:
    out = "".join(redactor.redact_parts(parts))
    assert secret[:16] not in out and secret[-16:] not in out, out
