"""More of the tuning corpus's texts that hold secrets: code, logs and formats added in a
second round (see :mod:`benchmarks.secrets_bank.tuning`)."""

from __future__ import annotations

from benchmarks.secrets_bank.fakes import ALNUM, HEX, Case, Gen


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
