"""The held-out third of the secrets corpus: written before the redactor's patterns, and measured
once, when they were final (``python -m benchmarks.secrets_rates --corpus held_out``).

Each template is drawn twice (seeds 2718 and 2719), so every secret and look-alike is fresh.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.secrets_bank.fakes import Case, Gen

SEEDS = (2718, 2719)


def dotenv(g: Gen) -> Case:
    text = (
        "# .env.production (do not commit)\n"
        "NODE_ENV=production\n"
        f"STRIPE_SECRET_KEY={g.stripe()}\n"
        f"STRIPE_WEBHOOK_SECRET={g.stripe_webhook()}\n"
        "STRIPE_PUBLISHABLE_KEY=pk_live_"
        + g.plain("publishable_key", g.chars("abcdefXYZ0123456789", 40))
        + "\n"
        f"SENTRY_RELEASE={g.commit()}\n"
        f"SESSION_SECRET={g.random_key('secret', 48)}\n"
        "LOG_LEVEL=info\n"
    )
    return g.case("dotenv", text)


def shell_history(g: Gen) -> Case:
    text = (
        "  501  cd ~/src/billing\n"
        f"  502  export GITHUB_TOKEN={g.github()}\n"
        "  503  gh pr list --state open\n"
        f"  504  git checkout {g.commit(12)}\n"
        f"  505  psql postgresql://{g.user()}:{g.password_random()}@{g.host()}:5432/billing\n"
        "  506  history | grep psql\n"
    )
    return g.case("shell history", text)


def aws_credentials_file(g: Gen) -> Case:
    text = (
        "[default]\n"
        f"aws_access_key_id = {g.aws_key_id()}\n"
        f"aws_secret_access_key = {g.aws_secret()}\n"
        "region = ap-northeast-2\n\n"
        "[ci]\n"
        f"aws_access_key_id = {g.aws_key_id('ASIA')}\n"
        f"aws_secret_access_key = {g.aws_secret()}\n"
        f"aws_session_token = {g.aws_session_token()}\n"
    )
    return g.case("aws credentials", text)


def chat_message(g: Gen) -> Case:
    password = g.password_human()
    text = (
        "hey, can you check why the staging deploy fails? the db user is app_rw and the password "
        f"is {password} - I rotated it this morning. Also the openai key we use for the "
        f"summaries is {g.openai_project()} if you need to rerun the job."
    )
    return g.case("chat message", text)


def stack_trace(g: Gen) -> Case:
    url = f"redis://:{g.password_random(24)}@{g.host()}:6379/0"
    text = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/worker.py", line 88, in connect\n'
        "    client = redis.Redis.from_url(settings.REDIS_URL)\n"
        '  File "/srv/app/.venv/lib/python3.12/site-packages/redis/client.py", line 141, '
        "in from_url\n"
        f"redis.exceptions.ConnectionError: Error connecting to {url}. Connection refused.\n"
        f"request_id={g.uuid()}\n"
    )
    return g.case("stack trace", text)


def k8s_manifest(g: Gen) -> Case:
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: payments\nspec:\n"
        "  template:\n    spec:\n      containers:\n      - name: api\n"
        f"        image: registry.example.com/payments@{g.digest()}\n"
        "        env:\n"
        "        - name: DATABASE_PASSWORD\n"
        f"          value: {g.password_random(20)}\n"
        "        - name: SENDGRID_API_KEY\n"
        f'          value: "{g.sendgrid()}"\n'
        "        - name: REDIS_PASSWORD\n"
        "          valueFrom:\n            secretKeyRef:\n              name: redis-auth\n"
        "              key: password\n"
    )
    return g.case("k8s manifest", text)


def docker_compose(g: Gen) -> Case:
    text = (
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        f"      - POSTGRES_PASSWORD={g.password_human()}\n"
        "      - POSTGRES_USER=app\n"
        "  worker:\n    build: .\n    environment:\n"
        f"      HF_TOKEN: {g.huggingface()}\n"
        f"      MODEL_REVISION: {g.commit()}\n"
    )
    return g.case("docker compose", text)


def tool_output_curl(g: Gen) -> Case:
    token = g.jwt()
    text = (
        f"$ curl -s -H 'Authorization: Bearer {token}' https://api.internal.example/v2/orders?limit=5\n"
        '{"orders": [], "next_cursor": null, "trace_id": "' + g.uuid() + '"}\n'
    )
    return g.case("curl with jwt", text)


def json_config(g: Gen) -> Case:
    text = (
        "{\n"
        '  "service": "notifier",\n'
        f'  "slack": {{"webhook_url": "{g.slack_webhook()}", "channel": "#alerts"}},\n'
        '  "twilio": {"account_sid": "AC'
        f'{g.plain("twilio_sid", g.chars("0123456789abcdef", 32))}", '
        f'"api_key": "{g.twilio_key()}", "api_secret": "{g.random_key("secret", 32)}"}},\n'
        f'  "build": "{g.version()}"\n'
        "}\n"
    )
    return g.case("json config", text)


def gcp_service_account(g: Gen) -> Case:
    key = g.pem("PRIVATE KEY", lines=26).replace("\n", "\\n")
    planted = g._planted[-1]
    g._planted[-1] = type(planted)(planted.kind, key, planted.core.replace("\n", "\\n"))
    text = (
        "{\n"
        '  "type": "service_account",\n'
        '  "project_id": "acme-analytics-prod",\n'
        f'  "private_key_id": "{g.sha1()}",\n'
        f'  "private_key": "{key}\\n",\n'
        '  "client_email": "etl@acme-analytics-prod.iam.gserviceaccount.com",\n'
        '  "client_id": "1083' + g.digits(17) + '"\n'
        "}\n"
    )
    return g.case("gcp service account", text)


def python_code(g: Gen) -> Case:
    text = (
        "import anthropic\n\n"
        f'client = anthropic.Anthropic(api_key="{g.anthropic()}")\n'
        "def summarize(text: str) -> str:\n"
        '    """Summarize with the small model."""\n'
        "    password = os.environ['SMTP_PASSWORD']\n"
        "    return client.messages.create(model='claude-haiku', max_tokens=300, messages=[])\n"
    )
    return g.case("python code", text)


def cli_flags(g: Gen) -> Case:
    text = (
        f"$ mysql -h {g.host()} -u root --password={g.password_random(14)} -e 'SHOW DATABASES'\n"
        f"$ twine upload --repository pypi -u __token__ --password {g.pypi()} dist/*\n"
        f"$ pip install -r requirements.txt --require-hashes  # pinned to {g.sha256()}\n"
    )
    return g.case("cli flags", text)


def azure_strings(g: Gen) -> Case:
    text = (
        "appsettings.json:\n"
        '  "ConnectionStrings": {\n'
        '    "Blob": "DefaultEndpointsProtocol=https;AccountName=acmefiles;AccountKey='
        f'{g.azure_account_key()};EndpointSuffix=core.windows.net",\n'
        '    "Sql": "Server=tcp:acme.database.windows.net,1433;Database=orders;User ID=orders_app;'
        f'Password={g.password_human()};Encrypt=true;"\n'
        "  },\n"
        f'  "AzureAd": {{"ClientId": "{g.uuid()}", "ClientSecret": "{g.azure_client_secret()}"}}\n'
    )
    return g.case("azure settings", text)


def npmrc_and_gitlab(g: Gen) -> Case:
    text = (
        "~/.npmrc\n"
        f"//registry.npmjs.org/:_authToken={g.npm()}\n"
        "@acme:registry=https://gitlab.example.com/api/v4/packages/npm/\n"
        f"//gitlab.example.com/api/v4/packages/npm/:_authToken={g.gitlab()}\n"
        "\n"
        "package-lock.json excerpt:\n"
        '  "node_modules/lodash": {\n    "version": "4.17.21",\n'
        '    "resolved": "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",\n'
        f'    "integrity": "{g.integrity()}"\n  }}\n'
    )
    return g.case("npmrc and lockfile", text)


def slack_bot_log(g: Gen) -> Case:
    text = (
        "2024-11-03T09:14:22Z INFO bolt-app starting with "
        f"SLACK_BOT_TOKEN={g.slack_bot()} SLACK_APP_TOKEN=xapp-1-A0{g.digits(9)}-"
        f"{g.digits(13)}-{g.random_key('slack_token', 64, '0123456789abcdef')}\n"
        "2024-11-03T09:14:23Z INFO connected as U"
        f"{g.plain('slack_id', g.chars('ABCDEFGHJKLMNPQRSTUVWXYZ0123456789', 10))}\n"
    )
    return g.case("slack bot log", text)


def google_oauth_debug(g: Gen) -> Case:
    text = (
        "DEBUG oauth2client: refreshing access token\n"
        f'DEBUG response: {{"access_token": "{g.google_access()}", "expires_in": 3599, '
        '"token_type": "Bearer", "scope": "https://www.googleapis.com/auth/drive.readonly"}\n'
        f"DEBUG client_secret loaded from env (GOOGLE_CLIENT_SECRET={g.google_client_secret()})\n"
        f"maps key for the frontend: {g.google_api()}\n"
    )
    return g.case("google oauth debug", text)


def private_keys_in_output(g: Gen) -> Case:
    text = (
        "$ cat ~/.ssh/id_ed25519\n"
        f"{g.openssh_key()}\n"
        "$ cat ~/.ssh/id_ed25519.pub\n"
        f"{g.ssh_public()} dev@laptop\n"
    )
    return g.case("ssh key cat", text)


def pgp_export(g: Gen) -> Case:
    text = (
        "gpg --export-secret-keys --armor release@acme.example > release.asc\n"
        f"{g.pgp_key()}\n"
        "fingerprint: " + g.plain("fingerprint", g.chars("0123456789ABCDEF", 40)) + "\n"
    )
    return g.case("pgp export", text)


def mongo_and_amqp(g: Gen) -> Case:
    text = (
        "settings.py\n"
        f'MONGO_URI = "mongodb+srv://{g.user()}:{g.password_random(18)}@cluster0.ab1cd.mongodb.net/'
        'app?retryWrites=true&w=majority"\n'
        f'CELERY_BROKER_URL = "amqp://celery:{g.password_human()}@mq.example.org:5672//"\n'
        'STATIC_URL = "https://cdn.example.com/static/"\n'
    )
    return g.case("mongo and amqp", text)


def basic_auth_request(g: Gen) -> Case:
    text = (
        "> GET /api/v1/metrics HTTP/1.1\n> Host: grafana.internal:3000\n"
        f"> Authorization: Basic {g.basic_auth()}\n> User-Agent: curl/8.5.0\n"
        f"< HTTP/1.1 200 OK\n< X-Request-Id: {g.uuid()}\n"
    )
    return g.case("basic auth request", text)


def https_userinfo(g: Gen) -> Case:
    text = (
        "git remote -v\n"
        f"origin  https://{g.user()}:{g.github('ghs_')}@github.com/acme/infra.git (fetch)\n"
        "upstream  https://github.com/acme/infra.git (fetch)\n"
        f"HEAD is now at {g.commit(7)} fix: pin terraform provider\n"
    )
    return g.case("git remote with token", text)


def yaml_app_config(g: Gen) -> Case:
    text = (
        "database:\n  host: db.internal\n  port: 5432\n  username: app\n"
        f"  password: '{g.password_human()}'\n"
        "  pool_size: 10\n"
        "auth:\n"
        f"  jwt_signing_key: {g.hex_key('api_key', 64)}\n"
        "  token_ttl_seconds: 3600\n"
    )
    return g.case("yaml config", text)


def django_settings(g: Gen) -> Case:
    text = (
        f"SECRET_KEY = '{g.django_secret()}'\n"
        "DEBUG = False\n"
        "ALLOWED_HOSTS = ['app.example.com']\n"
        f"# cache busting: {g.sha1()}\n"
    )
    return g.case("django settings", text)


def prose_credentials(g: Gen) -> Case:
    text = (
        "For the demo tomorrow use the shared test account; its API token is "
        f"{g.random_key('token', 32)} "
        "and it expires on Friday. Don't paste it in the public channel."
    )
    return g.case("prose token", text)


# -- look-alikes only -------------------------------------------------------------------------


def git_log(g: Gen) -> Case:
    text = (
        f"commit {g.commit()}\nAuthor: Jane Doe <jane@example.com>\n"
        "Date:   Tue Oct 8 14:02:11 2024\n\n"
        f"    Bump api-key rotation schedule (token ttl 3600)\n\ncommit {g.commit()}\n"
        f"Merge: {g.commit(7)} {g.commit(7)}\n"
    )
    return g.case("git log", text)


def sha_sums(g: Gen) -> Case:
    text = (
        f"{g.sha256()}  release-{g.version()}-linux-amd64.tar.gz\n"
        f"{g.sha256()}  release-checksums.txt\n"
        f"md5: {g.plain('md5', g.chars('0123456789abcdef', 32))}\n"
    )
    return g.case("sha sums", text)


def data_uri(g: Gen) -> Case:
    text = (
        '<img alt="logo" src="data:image/png;base64,' + g.base64_data(180) + '" width="32">\n'
        "<p>Contact us for an API key.</p>\n"
    )
    return g.case("data uri", text)


def api_docs_placeholders(g: Gen) -> Case:
    text = (
        "## Authentication\n\nPass your key in the header:\n\n"
        "    curl https://api.example.com/v1/items \\\n"
        f'      -H "Authorization: Bearer {g.placeholder("<YOUR_API_TOKEN>")}"\n\n'
        f"or set `export EXAMPLE_API_KEY={g.placeholder('your-api-key-here')}` in your shell. "
        f"In CI use `EXAMPLE_API_KEY={g.placeholder('${{ secrets.EXAMPLE_API_KEY }}')}`.\n"
        f"Keys look like `{g.placeholder('sk_test_xxxxxxxxxxxxxxxxxxxxxxxx')}`.\n"
    )
    return g.case("api docs", text)


def uuids_in_logs(g: Gen) -> Case:
    text = (
        f'level=info msg="job finished" job_id={g.uuid()} tenant={g.uuid()} duration_ms=418\n'
        f'level=warn msg="retrying" correlation_id={g.uuid()} attempt=2\n'
    )
    return g.case("uuids in logs", text)


def minified_js(g: Gen) -> Case:
    ident = g.identifier()
    text = (
        '!function(e,t){"object"==typeof exports?module.exports=t():e.'
        + ident
        + '=t()}(this,function(){"use strict";var e="'
        + g.plain(
            "minified_js", g.chars("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 64)
        )
        + '".split("");return function(t){for(var n=0,r="";n<t;n++)r+=e[Math.random()*e.length|0];'
        "return r}});\n"
    )
    return g.case("minified js", text)


def public_material(g: Gen) -> Case:
    text = (
        "authorized_keys:\n"
        f"{g.ssh_rsa_public()} ops@bastion\n\n"
        "server certificate:\n"
        f"{g.pem_public('CERTIFICATE')}\n"
    )
    return g.case("public keys", text)


def env_refs(g: Gen) -> Case:
    text = (
        "env:\n"
        f"  DB_PASSWORD: {g.placeholder('${DB_PASSWORD}')}\n"
        f"  API_TOKEN: {g.placeholder('{{ vault.api_token }}')}\n"
        f"  ADMIN_PASSWORD: {g.placeholder('changeme')}\n"
        f"  SECRET_KEY: {g.placeholder('<generate with openssl rand -hex 32>')}\n"
        f"  build_sha: {g.sha1()}\n"
    )
    return g.case("env references", text)


def long_identifiers(g: Gen) -> Case:
    text = (
        f"class {g.identifier()}(BaseModel):\n"
        f"    {g.identifier()}: int = 0\n"
        f"    password_min_length: int = 12\n"
        f"    token_count = {g.plain('number', g.digits(7))}\n"
    )
    return g.case("long identifiers", text)


def urls_no_credentials(g: Gen) -> Case:
    text = (
        "See "
        + g.plain("url", "https://docs.example.com/guides/auth?tab=tokens&lang=en#rotating-keys")
        + " and "
        + g.plain("url", f"http://localhost:{g.rng.randrange(3000, 9000)}/api/v1/health")
        + ". Mirror at "
        + g.plain("url", "ssh://git@git.example.org:2222/platform/infra.git")
        + ".\n"
    )
    return g.case("urls without credentials", text)


def aws_docs_example(g: Gen) -> Case:
    text = (
        "The AWS docs use "
        f"{g.placeholder('AKIAIOSFODNN7EXAMPLE')} and "
        f"{g.placeholder('wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY')} in their examples; "
        "arn:aws:iam::" + g.plain("account_id", g.digits(12)) + ":role/deploy is our role.\n"
    )
    return g.case("aws docs example", text)


def base64_json_field(g: Gen) -> Case:
    payload = g.base64_text('{"event": "signup", "plan": "pro", "referrer": "newsletter"}')
    text = (
        f'{{"type": "pubsub", "message": {{"data": "{payload}", "messageId": "{g.digits(16)}"}}}}\n'
    )
    return g.case("base64 json field", text)


def pip_hashes(g: Gen) -> Case:
    text = (
        f"requests=={g.version()} \\\n"
        f"    --hash=sha256:{g.sha256()} \\\n"
        f"    --hash=sha256:{g.sha256()}\n"
    )
    return g.case("pip hashes", text)


TEMPLATES: tuple[Callable[[Gen], Case], ...] = (
    dotenv, shell_history, aws_credentials_file, chat_message, stack_trace, k8s_manifest,
    docker_compose, tool_output_curl, json_config, gcp_service_account, python_code, cli_flags,
    azure_strings, npmrc_and_gitlab, slack_bot_log, google_oauth_debug, private_keys_in_output,
    pgp_export, mongo_and_amqp, basic_auth_request, https_userinfo, yaml_app_config,
    django_settings, prose_credentials,
    git_log, sha_sums, data_uri, api_docs_placeholders, uuids_in_logs, minified_js,
    public_material, env_refs, long_identifiers, urls_no_credentials, aws_docs_example,
    base64_json_field, pip_hashes,
)  # fmt: skip


def cases() -> list[Case]:
    out = []
    for seed in SEEDS:
        rng = random.Random(seed)
        for template in TEMPLATES:
            out.append(template(Gen(rng, "held_out")))
    return out
