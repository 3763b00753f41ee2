"""The tuning corpus's texts that hold only look-alikes (see
:mod:`benchmarks.secrets_bank.tuning`)."""

from __future__ import annotations

from benchmarks.secrets_bank.fakes import ALNUM, HEX, Case, Gen

BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


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
