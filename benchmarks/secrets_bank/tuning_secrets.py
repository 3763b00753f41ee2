"""The tuning corpus's texts that hold secrets (see :mod:`benchmarks.secrets_bank.tuning`)."""

from __future__ import annotations

import base64

from benchmarks.secrets_bank.fakes import ALNUM, B64, HEX, UPPER_DIGITS, URLSAFE, Case, Gen


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
