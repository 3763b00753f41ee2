"""The tuning two thirds of the secrets corpus: written with the redactor's patterns and
measured while they were made (``python -m benchmarks.secrets_rates --corpus tuning``).

Each template is drawn three times (seeds 31, 32 and 33).
"""

from __future__ import annotations

import base64
import random
from collections.abc import Callable

from benchmarks.secrets_bank.fakes import ALNUM, B64, HEX, UPPER_DIGITS, URLSAFE, Case, Gen

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

SEEDS = (31, 32, 33)


def env_local(g: Gen) -> Case:
    text = (
        "# .env.local\n"
        f"OPENAI_API_KEY={g.openai_legacy()}\n"
        f"ANTHROPIC_API_KEY={g.anthropic()}\n"
        f"DATABASE_URL=postgres://{g.user()}:{g.password_random()}@{g.host()}:5432/app\n"
        "NEXT_PUBLIC_SITE_URL=https://app.example.com\n"
        f"BUILD_ID={g.commit(12)}\n"
    )
    return g.case("env local", text)


def shell_exports(g: Gen) -> Case:
    text = (
        f"$ export SLACK_BOT_TOKEN={g.slack_bot()}\n"
        f"$ export NPM_TOKEN={g.npm()}\n"
        f'$ export PGPASSWORD="{g.password_human()}"\n'
        "$ psql -h db.internal -U app -c 'select 1'\n"
        f"$ echo $PATH\n/usr/local/bin:/usr/bin:/bin\n"
    )
    return g.case("shell exports", text)


def tool_output_env(g: Gen) -> Case:
    text = (
        "$ env | sort\n"
        f"AWS_ACCESS_KEY_ID={g.aws_key_id()}\n"
        f"AWS_SECRET_ACCESS_KEY={g.aws_secret()}\n"
        "HOME=/home/runner\n"
        f"GITHUB_SHA={g.commit()}\n"
        f"GITHUB_TOKEN={g.github('ghs_')}\n"
        f"RUNNER_TRACKING_ID=github_{g.uuid()}\n"
    )
    return g.case("env dump", text)


def github_actions_log(g: Gen) -> Case:
    text = (
        "Run actions/checkout@v4\n"
        f"  with:\n    repository: acme/api\n    token: {g.github('ghp_')}\n"
        f"    ref: {g.commit()}\n"
        "Syncing repository: acme/api\n"
    )
    return g.case("actions log", text)


def fine_grained_chat(g: Gen) -> Case:
    text = (
        "I made a fine-grained PAT for the release bot, scoped to the infra repo only: "
        f"{g.github_fine()} - please put it in the vault and delete this message."
    )
    return g.case("chat fine-grained pat", text)


def gitlab_ci(g: Gen) -> Case:
    text = (
        "variables:\n"
        f"  GITLAB_TOKEN: {g.gitlab()}\n"
        '  DOCKER_AUTH_CONFIG: \'{"auths": {"registry.example.com": '
        f'{{"auth": "{g.basic_auth()}"}}}}}}\'\n'
        "  GIT_DEPTH: 10\n"
        f"build:\n  image: python:3.12@{g.digest()}\n"
    )
    return g.case("gitlab ci", text)


def slack_webhook_code(g: Gen) -> Case:
    text = (
        "import requests\n\n"
        f'WEBHOOK = "{g.slack_webhook()}"\n\n'
        "def notify(text):\n"
        "    requests.post(WEBHOOK, json={'text': text}, timeout=5)\n"
    )
    return g.case("slack webhook code", text)


def slack_user_token_chat(g: Gen) -> Case:
    text = (
        f"can you try with my user token instead? {g.slack_user()} - it has the "
        "channels:history scope, the bot one doesn't"
    )
    return g.case("chat slack user token", text)


def stripe_js(g: Gen) -> Case:
    text = (
        "const Stripe = require('stripe');\n"
        f"const stripe = Stripe('{g.stripe('sk_test_')}');\n"
        f"const endpointSecret = '{g.stripe_webhook()}';\n"
        "const pk = 'pk_test_"
        + g.plain("publishable_key", g.chars("ABCDEFabcdef0123456789", 40))
        + "';\n"
    )
    return g.case("stripe js", text)


def stripe_restricted_yaml(g: Gen) -> Case:
    text = (
        "billing:\n"
        f"  stripe_restricted_key: {g.stripe('rk_live_')}\n"
        "  currency: eur\n"
        f"  price_id: price_{g.plain('identifier', g.chars('ABCDEFGHabcdefgh0123456789', 24))}\n"
    )
    return g.case("stripe restricted yaml", text)


def openai_python(g: Gen) -> Case:
    text = (
        "from openai import OpenAI\n"
        f'client = OpenAI(api_key="{g.openai_project()}")\n'
        'resp = client.chat.completions.create(model="gpt-4o-mini", messages=msgs, '
        "max_tokens=256)\n"
        f"# request id req_{g.plain('request_id', g.chars(HEX, 32))}\n"
    )
    return g.case("openai python", text)


def twilio_env(g: Gen) -> Case:
    text = (
        "TWILIO_ACCOUNT_SID=AC" + g.plain("twilio_sid", g.chars(HEX, 32)) + "\n"
        f"TWILIO_AUTH_TOKEN={g.hex_key('token', 32)}\n"
        f"TWILIO_API_KEY={g.twilio_key()}\n"
        "TWILIO_FROM=+15005550006\n"
    )
    return g.case("twilio env", text)


def sendgrid_traceback(g: Gen) -> Case:
    text = (
        "python_http_client.exceptions.UnauthorizedError: HTTP Error 401: Unauthorized\n"
        f"  sg = SendGridAPIClient('{g.sendgrid()}')\n"
        '  File "/app/mailer.py", line 31, in send_welcome\n'
    )
    return g.case("sendgrid traceback", text)


def pypirc(g: Gen) -> Case:
    text = (
        "[distutils]\nindex-servers =\n    pypi\n\n[pypi]\n"
        "username = __token__\n"
        f"password = {g.pypi()}\n"
    )
    return g.case("pypirc", text)


def google_maps_html(g: Gen) -> Case:
    text = (
        '<script async src="https://maps.googleapis.com/maps/api/js?key='
        f'{g.google_api()}&callback=initMap"></script>\n'
        f'<link rel="stylesheet" href="/static/app.css?v={g.commit(8)}">\n'
    )
    return g.case("google maps html", text)


def gcloud_tokens(g: Gen) -> Case:
    text = (
        "$ gcloud auth print-access-token\n"
        f"{g.google_access()}\n"
        "$ cat ~/.config/gcloud/application_default_credentials.json\n"
        '{"client_id": "764086051850-6qr4p6gpi6hn506pt8ejuq83di341hur.apps.googleusercontent.com", '
        f'"client_secret": "{g.google_client_secret()}", '
        f'"refresh_token": "1//0{g.random_key("google_oauth", 100, URLSAFE)}", '
        '"type": "authorized_user"}\n'
    )
    return g.case("gcloud tokens", text)


def azure_service_bus(g: Gen) -> Case:
    text = (
        "Endpoint=sb://acme-events.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
        f"SharedAccessKey={g.random_key('azure_key', 43, B64)}=\n"
    )
    return g.case("azure service bus", text)


def azure_sas_url(g: Gen) -> Case:
    sig = g.chars(ALNUM, 40)
    sig = g.plant("azure_sas", sig + "%3D")
    text = (
        "downloading https://acmefiles.blob.core.windows.net/exports/2024-11.csv"
        f"?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-12-01T00:00:00Z&sig={sig}\n"
    )
    return g.case("azure sas url", text)


def azure_cli_output(g: Gen) -> Case:
    text = (
        "$ az ad sp create-for-rbac --name deploy-bot\n{\n"
        f'  "appId": "{g.uuid()}",\n'
        '  "displayName": "deploy-bot",\n'
        f'  "password": "{g.azure_client_secret()}",\n'
        f'  "tenant": "{g.uuid()}"\n}}\n'
    )
    return g.case("azure cli output", text)


def jwt_in_cookie(g: Gen) -> Case:
    text = (
        "Set-Cookie: session=" + g.jwt() + "; Path=/; HttpOnly; Secure; SameSite=Lax\n"
        f'ETag: W/"{g.sha1()}"\n'
    )
    return g.case("jwt cookie", text)


def jwt_in_chat(g: Gen) -> Case:
    text = (
        "the frontend sends this token and the API says 401, can you decode it and tell me "
        f"what's wrong? {g.jwt()}"
    )
    return g.case("jwt chat", text)


def bearer_opaque(g: Gen) -> Case:
    text = (
        "POST /oauth/introspect HTTP/1.1\nHost: auth.example.com\n"
        f"Authorization: Bearer {g.opaque_token(48)}\n"
        "Content-Type: application/x-www-form-urlencoded\n"
    )
    return g.case("bearer header", text)


def curl_header_api_key(g: Gen) -> Case:
    text = (
        "curl -X POST https://api.example.io/v1/search "
        f'-H "X-API-Key: {g.random_key("api_key", 32)}" '
        '-d \'{"q": "invoices"}\'\n'
    )
    return g.case("curl api key header", text)


def rsa_key_log(g: Gen) -> Case:
    text = (
        "writing RSA key\n"
        f"{g.pem('RSA PRIVATE KEY', lines=20)}\n"
        "Generating a 2048 bit RSA private key\n"
    )
    return g.case("rsa key", text)


def ec_key_in_yaml(g: Gen) -> Case:
    key = g.pem("EC PRIVATE KEY", lines=3)
    indented = key.replace("\n", "\n    ")
    text = f"tls:\n  cert_file: /etc/tls/server.crt\n  key: |\n    {indented}\n"
    planted = g._planted[-1]
    g._planted[-1] = type(planted)(planted.kind, indented, planted.core.replace("\n", "\n    "))
    return g.case("ec key yaml", text)


def encrypted_pkcs8(g: Gen) -> Case:
    text = f"key.pem:\n{g.pem('ENCRYPTED PRIVATE KEY', lines=16)}\n"
    return g.case("encrypted pkcs8", text)


def truncated_key(g: Gen) -> Case:
    body = "\n".join(
        g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 64)
        for _ in range(8)
    )
    g.plant("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body, body)
    text = (
        "the output was cut at 500 lines:\n-----BEGIN OPENSSH PRIVATE KEY-----\n"
        f"{body}\n[... output truncated ...]\n"
    )
    return g.case("truncated key", text)


def mongo_mysql_urls(g: Gen) -> Case:
    text = (
        f"mongodb://{g.user()}:{g.password_human()}@mongo-0.mongo:27017,mongo-1.mongo:27017/app?replicaSet=rs0\n"
        f"mysql://root:{g.password_random(12)}@127.0.0.1:3306/shop\n"
        f"amqps://events:{g.password_random(20)}@b-1.mq.eu-west-1.amazonaws.com:5671\n"
    )
    return g.case("db urls", text)


def https_basic_url(g: Gen) -> Case:
    text = (
        f"pip install --index-url https://{g.user()}:{g.password_random(22)}"
        "@pypi.internal.example/simple/ acme-utils\n"
        "Looking in indexes: https://pypi.internal.example/simple/\n"
    )
    return g.case("https userinfo", text)


def cli_flag_tokens(g: Gen) -> Case:
    text = (
        f"$ vault login --method=userpass username=ops password={g.password_human()}\n"
        f"$ terraform apply -var 'db_password={g.password_random(18)}'\n"
        f"$ ./deploy --api-token {g.random_key('token', 40)} --env prod\n"
    )
    return g.case("cli flags", text)


def mysql_p_flag(g: Gen) -> Case:
    text = (
        f"$ mysqldump -u backup -p{g.password_random(14)} --single-transaction shop > shop.sql\n"
        f"$ sshpass -p '{g.password_human()}' ssh deploy@10.0.0.12 uptime\n"
    )
    return g.case("mysql and sshpass", text)


def curl_user(g: Gen) -> Case:
    text = (
        f"curl -u admin:{g.password_random(16)} https://jenkins.internal/api/json?pretty=true\n"
        f"curl --user 'ci:{g.password_human()}' -X POST https://nexus.internal/service/rest/v1/components\n"
    )
    return g.case("curl user", text)


def netrc(g: Gen) -> Case:
    text = (
        "~/.netrc:\n"
        "machine api.heroku.com\n  login ops@example.com\n"
        f"  password {g.random_key('password', 36, HEX + '-')}\n"
        f"machine github.com login bot password {g.github()}\n"
    )
    return g.case("netrc", text)


def dotnet_config(g: Gen) -> Case:
    text = (
        '<connectionStrings>\n  <add name="Default" connectionString="Server=sql01;Database=crm;'
        f'User Id=crm_app;Password={g.password_random(15)};" />\n</connectionStrings>\n'
        "<appSettings>\n"
        f'  <add key="PaymentApiKey" value="{g.random_key("api_key", 40)}" />\n'
        '  <add key="Environment" value="Production" />\n</appSettings>\n'
    )
    return g.case("dotnet config", text)


def xml_password(g: Gen) -> Case:
    text = (
        "<settings>\n  <servers>\n    <server>\n      <id>nexus-releases</id>\n"
        "      <username>deployer</username>\n"
        f"      <password>{g.password_human()}</password>\n"
        "    </server>\n  </servers>\n</settings>\n"
    )
    return g.case("maven settings", text)


def k8s_secret_data(g: Gen) -> Case:
    raw = g.chars(ALNUM, 20)
    encoded = g.plant("password", base64.b64encode(raw.encode()).decode())
    text = (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-credentials\ntype: Opaque\ndata:\n"
        "  username: YXBw\n"
        f"  password: {encoded}\n"
    )
    return g.case("k8s secret", text)


def ecs_task_json(g: Gen) -> Case:
    text = (
        '"environment": [\n'
        '  {"name": "SPRING_DATASOURCE_USERNAME", "value": "orders"},\n'
        f'  {{"name": "SPRING_DATASOURCE_PASSWORD", "value": "{g.password_random(18)}"}},\n'
        f'  {{"name": "IMAGE_SHA", "value": "{g.sha256()}"}}\n]\n'
    )
    return g.case("ecs task json", text)


def spring_properties(g: Gen) -> Case:
    text = (
        "spring.datasource.url=jdbc:postgresql://db:5432/orders\n"
        "spring.datasource.username=orders\n"
        f"spring.datasource.password={g.password_human()}\n"
        f"jwt.secret={g.random_key('secret', 64)}\n"
        "server.port=8080\n"
    )
    return g.case("spring properties", text)


def terraform_tfvars(g: Gen) -> Case:
    text = (
        'region         = "eu-central-1"\n'
        f'db_password    = "{g.password_random(24)}"\n'
        f'datadog_api_key = "{g.hex_key("api_key", 32)}"\n'
        f'ami_id         = "ami-{g.plain("ami", g.chars(HEX, 17))}"\n'
    )
    return g.case("tfvars", text)


def ruby_rails(g: Gen) -> Case:
    text = (
        "production:\n"
        f"  secret_key_base: {g.hex_key('secret', 128)}\n"
        f"  aws:\n    access_key_id: {g.aws_key_id()}\n    secret_access_key: {g.aws_secret()}\n"
    )
    return g.case("rails credentials", text)


def csv_credentials(g: Gen) -> Case:
    text = (
        "User name,Password,Access key ID,Secret access key,Console login link\n"
        f"deploy,,{g.aws_key_id()},{g.aws_secret()},https://123456789012.signin.aws.amazon.com/console\n"
    )
    return g.case("aws csv", text)


def hf_notebook(g: Gen) -> Case:
    text = (
        "from huggingface_hub import login\n"
        f'login(token="{g.huggingface()}")\n'
        f"model = AutoModel.from_pretrained('acme/encoder', revision='{g.commit()}')\n"
    )
    return g.case("hf notebook", text)


def misc_providers(g: Gen) -> Case:
    text = (
        "rotated today:\n"
        f"- docker hub: dckr_pat_{g.random_key('docker_token', 27, URLSAFE)}\n"
        f"- digitalocean: dop_v1_{g.hex_key('digitalocean_token', 64)}\n"
        f"- vault: hvs.{g.random_key('vault_token', 90, URLSAFE)}\n"
    )
    return g.case("misc providers", text)


def password_chat_variants(g: Gen) -> Case:
    text = (
        f"new wifi password: {g.password_human()}\n"
        f"and the root pw for the nas was changed to {g.password_random(12)} yesterday\n"
    )
    return g.case("chat passwords", text)


def json_nested_api_key(g: Gen) -> Case:
    text = (
        '{"integrations": {"mapbox": {"accessToken": "pk.'
        + g.plain("mapbox_public", g.chars("ABCDEFabcdef0123456789", 60))
        + '"}, '
        f'"algolia": {{"appId": "{g.plain("identifier", g.chars(UPPER_DIGITS, 10))}", '
        f'"adminApiKey": "{g.hex_key("api_key", 32)}"}}}}}}\n'
    )
    return g.case("json nested api key", text)


# -- look-alikes only -------------------------------------------------------------------------


def lockfile(g: Gen) -> Case:
    text = (
        '"node_modules/react": {\n'
        f'  "version": "{g.version()}",\n'
        '  "resolved": "https://registry.npmjs.org/react/-/react-18.3.1.tgz",\n'
        f'  "integrity": "{g.integrity()}",\n'
        '  "license": "MIT"\n},\n'
        f'"node_modules/scheduler": {{"integrity": "{g.integrity()}"}}\n'
    )
    return g.case("package-lock", text)


def poetry_lock(g: Gen) -> Case:
    text = (
        '[[package]]\nname = "urllib3"\n'
        f'version = "{g.version()}"\n'
        "files = [\n"
        f'    {{file = "urllib3-2.2.3-py3-none-any.whl", hash = "sha256:{g.sha256()}"}},\n'
        f'    {{file = "urllib3-2.2.3.tar.gz", hash = "sha256:{g.sha256()}"}},\n]\n'
    )
    return g.case("poetry lock", text)


def docker_images(g: Gen) -> Case:
    text = (
        "REPOSITORY          TAG       IMAGE ID       CREATED        SIZE\n"
        f"acme/api            latest    {g.commit(12)}   2 hours ago    312MB\n"
        f"python              3.12      {g.commit(12)}   3 weeks ago    1.02GB\n"
        f"Digest: {g.digest()}\n"
    )
    return g.case("docker images", text)


def git_rev_parse(g: Gen) -> Case:
    text = (
        f"$ git rev-parse HEAD\n{g.commit()}\n"
        f"$ git log --oneline -3\n{g.commit(7)} Rotate the API keys (see runbook)\n"
        f"{g.commit(7)} token refresh: retry on 401\n{g.commit(7)} Merge branch 'secrets-cleanup'\n"
    )
    return g.case("git rev-parse", text)


def uuid_json(g: Gen) -> Case:
    text = (
        f'{{"id": "{g.uuid()}", "orgId": "{g.uuid()}", "createdBy": "{g.uuid()}", '
        '"status": "active", "keyCount": 3}\n'
    )
    return g.case("uuid json", text)


def base64_blob(g: Gen) -> Case:
    text = (
        'attachment: {"filename": "report.pdf", "content_type": "application/pdf", '
        f'"data": "{g.base64_data(240)}"}}\n'
    )
    return g.case("base64 attachment", text)


def css_and_colors(g: Gen) -> Case:
    svg = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M12 2z"/></svg>'
    text = (
        ".btn-primary{color:#1a73e8;background:#fff;border-color:#dadce0}"
        f".icon{{background-image:url(data:image/svg+xml;base64,{g.base64_text(svg)})}}\n"
    )
    return g.case("css", text)


def doc_placeholders(g: Gen) -> Case:
    text = (
        "Configure the client:\n\n```python\n"
        f'client = Client(api_key="{g.placeholder("YOUR_API_KEY")}")\n'
        f'client = Client(api_key=os.environ["{g.placeholder("ACME_API_KEY")}"])\n'
        "```\n\n"
        f"Tokens start with `{g.placeholder('ghp_')}` followed by 36 characters, e.g. "
        f"`{g.placeholder('ghp_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX')}`.\n"
        f"Set `password: {g.placeholder('<your password>')}` in config.yml.\n"
    )
    return g.case("doc placeholders", text)


def env_example(g: Gen) -> Case:
    text = (
        "# .env.example: copy to .env and fill in\n"
        f"STRIPE_SECRET_KEY={g.placeholder('sk_live_...')}\n"
        f"DATABASE_PASSWORD={g.placeholder('changeme')}\n"
        f"JWT_SECRET={g.placeholder('replace-me-with-a-long-random-string')}\n"
        f"API_TOKEN={g.placeholder('<token>')}\n"
        f"SENTRY_DSN={g.placeholder('')}\n"
    )
    return g.case("env example", text)


def code_references(g: Gen) -> Case:
    text = (
        f"password = {g.placeholder('request.form[')}'password']\n"
        f'token = {g.placeholder("os.environ.get(")}"GITHUB_TOKEN")\n'
        f"api_key = {g.placeholder('settings.STRIPE_API_KEY')}\n"
        f'secret = {g.placeholder("get_secret(")}"db/prod")\n'
        f"self.password_hash = {g.placeholder('bcrypt.hashpw(')}password, salt)\n"
        f"headers = {{'Authorization': f'Bearer {g.placeholder('{access_token}')}'}}\n"
    )
    return g.case("code references", text)


def typed_fields(g: Gen) -> Case:
    text = (
        "class Settings(BaseSettings):\n"
        f"    {g.placeholder('database_password')}: SecretStr\n"
        f"    api_key: {g.placeholder('str | None')} = None\n"
        f"    token_expiry_seconds: int = {g.plain('number', '3600')}\n"
        f"    max_tokens: int = {g.plain('number', '4096')}\n"
        "interface LoginForm { username: string; password: string; remember: boolean }\n"
    )
    return g.case("typed fields", text)


def prose_about_secrets(g: Gen) -> Case:
    text = (
        "The password is incorrect, please try again. "
        "Your token was revoked because it leaked in a public repo; "
        "the key point is that secrets should be rotated. "
        f"Passwords must be at least {g.plain('number', '12')} characters. "
        f"The secret is to keep the cache warm (see {g.plain('url', 'https://wiki.example.com/cache')}).\n"
    )
    return g.case("prose about secrets", text)


def k8s_refs(g: Gen) -> Case:
    text = (
        "        env:\n"
        "        - name: DB_PASSWORD\n"
        "          valueFrom:\n"
        "            secretKeyRef:\n"
        f"              name: {g.plain('identifier', 'postgres-credentials')}\n"
        "              key: password\n"
        "        - name: API_TOKEN_FILE\n"
        f"          value: {g.plain('path', '/var/run/secrets/api/token')}\n"
        f"        image: ghcr.io/acme/api:{g.version()}\n"
    )
    return g.case("k8s refs", text)


def public_keys(g: Gen) -> Case:
    text = (
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n"
        + g.plain(
            "public_key",
            g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", 64),
        )
        + "\n-----END PGP PUBLIC KEY BLOCK-----\n"
        f"{g.pem_public()}\n"
        f"{g.ssh_public()} ci@runner\n"
    )
    return g.case("public keys", text)


def hashes_in_prose(g: Gen) -> Case:
    text = (
        f"The build {g.sha256()} differs from the release ({g.sha256()}); "
        f"the file's md5 is {g.plain('md5', g.chars(HEX, 32))} and the tree object {g.sha1()}.\n"
    )
    return g.case("hashes in prose", text)


def long_identifiers_java(g: Gen) -> Case:
    text = (
        f"at com.acme.billing.{g.identifier()}.{g.identifier()}(InvoiceService.java:214)\n"
        f"at org.springframework.aop.framework.{g.identifier()}"
        ".proceed(ReflectiveMethodInvocation.java:186)\n"
        "Caused by: com.acme.auth.TokenValidationException: signature did not match\n"
    )
    return g.case("java stack", text)


def minified_bundle(g: Gen) -> Case:
    text = (
        'var a="'
        + g.plain("minified_js", g.chars("abcdefghijklmnopqrstuvwxyz0123456789", 48))
        + '",t=function(e){return e.apiKey||e.token||""},n={key:"'
        + g.plain("minified_js", g.chars("abcdef", 8))
        + '",tokenize:!0};module.exports={a:a,t:t,n:n};\n'
        "//# sourceMappingURL=data:application/json;base64," + g.base64_data(90) + "\n"
    )
    return g.case("minified bundle", text)


def cache_and_object_keys(g: Gen) -> Case:
    text = (
        f'cache_key = "user:{g.digits(6)}:profile:v3"\n'
        f's3_key = "{g.plain("path", "exports/2024/11/03/report-final.parquet")}"\n'
        f'idempotency_key = "{g.uuid()}"\n'
        f'sort_key = "{g.sha1()}"\n'
        f"partition_key: {g.plain('identifier', 'tenant#acme#2024-11')}\n"
    )
    return g.case("cache and object keys", text)


def pagination_tokens(g: Gen) -> Case:
    text = (
        '{"items": [], "nextPageToken": "'
        + g.plain(
            "page_token",
            g.chars(ALNUM, 32),
        )
        + '", "usage": {"prompt_tokens": 812, "completion_tokens": 144, "total_tokens": 956}}\n'
    )
    return g.case("pagination tokens", text)


def urls_with_params(g: Gen) -> Case:
    text = (
        f"{g.plain('url', 'https://github.com/acme/api/compare/v1.4.0...v1.5.0?expand=1')}\n"
        f"{g.plain('url', 'https://console.aws.amazon.com/s3/buckets/acme-exports?region=eu-west-1&tab=objects')}\n"
        f"{g.plain('url', 'postgres://localhost:5432/app_test')}\n"
        f"{g.plain('url', 'redis://cache:6379/0')}\n"
    )
    return g.case("urls with params", text)


def aws_resource_ids(g: Gen) -> Case:
    text = (
        f"arn:aws:lambda:eu-west-1:{g.plain('account_id', g.digits(12))}:function:resize\n"
        f"instance i-{g.plain('instance_id', g.chars(HEX, 17))} "
        f"in subnet-{g.plain('subnet', g.chars(HEX, 17))}\n"
        f"role id {g.plain('aws_role_id', 'AROA' + g.chars(BASE32, 17))}\n"
    )
    return g.case("aws resource ids", text)


def version_matrix(g: Gen) -> Case:
    text = (
        f"python {g.version()} | node {g.version()} | postgres {g.version()}\n"
        f"chromium {g.rng.randrange(100, 130)}.0.{g.digits(4)}.{g.digits(3)}\n"
    )
    return g.case("version matrix", text)


def ipv6_and_macs(g: Gen) -> Case:
    text = (
        f"inet6 {g.plain('ipv6', 'fe80::' + ':'.join(g.chars(HEX, 4) for _ in range(4)))}/64\n"
        f"ether {g.plain('mac', ':'.join(g.chars(HEX, 2) for _ in range(6)))}\n"
    )
    return g.case("ipv6 and macs", text)


def chat_ordinary(g: Gen) -> Case:
    text = (
        "Thanks! The key takeaway from the retro: we pass the auth check twice, and the token "
        "bucket in the rate limiter is keyed by user id. I'll write it up for Basic plan users. "
        f"Ticket {g.plain('ticket', 'OPS-' + g.digits(4))}, "
        f"branch {g.plain('identifier', 'fix/token-bucket-' + g.digits(3))}.\n"
    )
    return g.case("chat ordinary", text)


def hex_ids_named(g: Gen) -> Case:
    text = (
        f"request_id={g.plain('request_id', g.chars(HEX, 32))} "
        f"trace_id={g.plain('trace_id', g.chars(HEX, 32))} "
        f"span_id={g.plain('span_id', g.chars(HEX, 16))} "
        f"key_id={g.plain('key_id', g.chars(HEX, 16))}\n"
        f"session_hash: {g.sha256()}\n"
    )
    return g.case("hex ids named", text)


def python_repr_log(g: Gen) -> Case:
    text = (
        "DEBUG settings loaded: Settings(debug=False, db_host='db.internal', "
        f"db_password='{g.password_human()}', api_key='{g.random_key('api_key', 40)}', "
        "workers=4)\nDEBUG headers={'Content-Type': 'application/json', "
        f"'X-Auth-Token': '{g.plant('token', g.uuid_value())}'}}\n"
    )
    return g.case("python repr log", text)


def logfmt_line(g: Gen) -> Case:
    text = (
        'ts=2024-11-03T10:22:01Z level=debug msg="opening connection" user=etl '
        f"password={g.password_random(14)} "
        f"host=db.internal sslmode=require conn_id={g.uuid()}\n"
    )
    return g.case("logfmt", text)


def escaped_json_body(g: Gen) -> Case:
    text = (
        '{"request": {"method": "POST", "url": "/v1/charges", '
        f'"body": "{{\\"api_key\\": \\"{g.random_key("api_key", 32)}\\", '
        '\\"amount\\": 1200}"}}\n'
    )
    return g.case("escaped json", text)


def toml_poetry(g: Gen) -> Case:
    text = (
        "[http-basic.private]\n"
        'username = "ci"\n'
        f'password = "{g.password_random(20)}"\n\n'
        "[pypi-token]\n"
        f'pypi = "{g.pypi()}"\n'
    )
    return g.case("toml auth", text)


def sts_assume_role(g: Gen) -> Case:
    text = (
        '{\n    "Credentials": {\n'
        f'        "AccessKeyId": "{g.aws_key_id("ASIA")}",\n'
        f'        "SecretAccessKey": "{g.aws_secret()}",\n'
        f'        "SessionToken": "{g.aws_session_token()}",\n'
        '        "Expiration": "2024-11-03T11:22:01+00:00"\n    },\n'
        '    "AssumedRoleUser": {"AssumedRoleId": "AROA'
        + g.plain("aws_role_id", g.chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 17))
        + ':ci", "Arn": "arn:aws:sts::123456789012:assumed-role/ci/ci"}\n}\n'
    )
    return g.case("sts assume-role", text)


def chat_key_prose(g: Gen) -> Case:
    text = (
        "ok here's the license key: "
        f"{g.random_key('api_key', 32)} - and the admin secret is "
        f"{g.random_key('secret', 14, ALNUM + '-_.~!*')}, "
        "please don't share them outside the team"
    )
    return g.case("chat key prose", text)


def yaml_quoted_comments(g: Gen) -> Case:
    text = (
        "sentry:\n"
        '  dsn: "https://'
        + g.plain("public_key", g.chars(HEX, 32))
        + '@o123456.ingest.sentry.io/789"\n'
        f'  auth_token: "{g.random_key("token", 64, HEX)}"  # org-level, rotate yearly\n'
        "  environment: production\n"
    )
    return g.case("yaml quoted", text)


def go_setenv(g: Gen) -> Case:
    text = (
        "func TestMain(m *testing.M) {\n"
        f'\tos.Setenv("STRIPE_API_KEY", "{g.stripe("sk_test_")}")\n'
        f'\tconst apiToken = "{g.random_key("token", 40)}"\n'
        "\tos.Exit(m.Run())\n}\n"
    )
    return g.case("go setenv", text)


def korean_chat(g: Gen) -> Case:
    text = (
        f"스테이징 DB 비밀번호는 {g.password_random(12)} 입니다. "
        f"그리고 배포용 토큰: {g.github()} 오늘 안에 교체할게요."
    )
    return g.case("korean chat", text)


def dockerfile_env(g: Gen) -> Case:
    text = (
        f"FROM node:20-alpine@{g.digest()}\n"
        f"ENV API_KEY {g.random_key('api_key', 32)}\n"
        f"ENV DB_PASSWORD={g.password_human()}\n"
        "RUN npm ci --omit=dev\n"
    )
    return g.case("dockerfile env", text)


def url_query_token(g: Gen) -> Case:
    text = (
        "GET /api/v2/export?format=csv&access_token="
        f"{g.random_key('token', 40)}&page=2 200 1432ms\n"
        f"GET /static/app.js?v={g.commit(8)} 304 2ms\n"
    )
    return g.case("url query token", text)


def heroku_uuid_key(g: Gen) -> Case:
    text = f"HEROKU_API_KEY={g.plant('api_key', g.uuid_value())}\nHEROKU_APP_ID={g.uuid()}\n"
    return g.case("heroku uuid key", text)


def terraform_state(g: Gen) -> Case:
    text = (
        '{"type": "aws_secretsmanager_secret_version", "instances": [{"attributes": {'
        f'"secret_string": "{g.random_key("secret", 32, ALNUM + "-_.~!*")}", '
        f'"version_id": "{g.uuid()}", '
        '"arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-'
        f'{g.plain("suffix", g.chars("ABCDEFabcdef", 6))}"}}}}]}}\n'
    )
    return g.case("terraform state", text)


def markdown_table(g: Gen) -> Case:
    text = (
        "| service | credential |\n|---|---|\n"
        f"| openai | {g.openai_project()} |\n"
        f"| sendgrid | {g.sendgrid()} |\n"
        f"| build | {g.commit()} |\n"
    )
    return g.case("markdown table", text)


def html_forms(g: Gen) -> Case:
    text = (
        '<form method="post"><input type="password" name="password" placeholder="Password" '
        'autocomplete="current-password"><input type="hidden" name="csrf_token" value="'
        + g.plain("csrf", g.chars(ALNUM, 40))
        + '"></form>\n'
    )
    return g.case("html forms", text)


def sql_and_code(g: Gen) -> Case:
    text = (
        "SELECT id, email, password_hash FROM users WHERE email = %s;\n"
        "if token is None or token.expired(): token = refresh(token)\n"
        "digest = hashlib.sha256(password.encode()).hexdigest()\n"
        f"expected = '{g.sha256()}'\n"
        "UPDATE api_keys SET revoked_at = now() WHERE key_id = $1;\n"
    )
    return g.case("sql and code", text)


def openapi_spec(g: Gen) -> Case:
    text = (
        "components:\n  securitySchemes:\n    bearerAuth:\n      type: http\n      scheme: bearer\n"
        "      bearerFormat: JWT\n  schemas:\n    Login:\n      properties:\n"
        "        password:\n          type: string\n          format: password\n"
        f"          example: {g.placeholder('hunter2')}\n"
        "        api_key:\n          type: string\n"
        f"          example: {g.placeholder('sk_live_xxxxxxxxxxxxxxxx')}\n"
    )
    return g.case("openapi spec", text)


def korean_ordinary(g: Gen) -> Case:
    text = (
        "비밀번호를 잊어버렸을 때는 설정에서 재설정하세요. 토큰은 24시간 후 만료됩니다. "
        f"참고 커밋 {g.commit(10)}, 문서 {g.plain('url', 'https://docs.example.com/ko/auth')}."
    )
    return g.case("korean ordinary", text)


TEMPLATES: tuple[Callable[[Gen], Case], ...] = (
    env_local, shell_exports, tool_output_env, github_actions_log, fine_grained_chat, gitlab_ci,
    slack_webhook_code, slack_user_token_chat, stripe_js, stripe_restricted_yaml, openai_python,
    twilio_env, sendgrid_traceback, pypirc, google_maps_html, gcloud_tokens, azure_service_bus,
    azure_sas_url, azure_cli_output, jwt_in_cookie, jwt_in_chat, bearer_opaque,
    curl_header_api_key, rsa_key_log, ec_key_in_yaml, encrypted_pkcs8, truncated_key,
    mongo_mysql_urls, https_basic_url, cli_flag_tokens, mysql_p_flag, curl_user, netrc,
    dotnet_config, xml_password, k8s_secret_data, ecs_task_json, spring_properties,
    terraform_tfvars, ruby_rails, csv_credentials, hf_notebook, misc_providers,
    password_chat_variants, json_nested_api_key,
    lockfile, poetry_lock, docker_images, git_rev_parse, uuid_json, base64_blob, css_and_colors,
    doc_placeholders, env_example, code_references, typed_fields, prose_about_secrets, k8s_refs,
    public_keys, hashes_in_prose, long_identifiers_java, minified_bundle, cache_and_object_keys,
    pagination_tokens, urls_with_params, aws_resource_ids, version_matrix, ipv6_and_macs,
    chat_ordinary, hex_ids_named,
    python_repr_log, logfmt_line, escaped_json_body, toml_poetry, sts_assume_role,
    chat_key_prose, yaml_quoted_comments, go_setenv, korean_chat, dockerfile_env,
    url_query_token, heroku_uuid_key, terraform_state, markdown_table, html_forms, sql_and_code,
    openapi_spec, korean_ordinary,
)  # fmt: skip


def cases() -> list[Case]:
    out = []
    for seed in SEEDS:
        rng = random.Random(seed)
        for template in TEMPLATES:
            out.append(template(Gen(rng, "tuning")))
    return out
