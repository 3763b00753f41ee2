"""The tuning two thirds of the secrets corpus: written with the redactor's patterns and
measured while they were made (``python -m benchmarks.secrets_rates --corpus tuning``).

Each template is drawn three times (seeds 31, 32 and 33).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from benchmarks.secrets_bank import tuning_formats as formats
from benchmarks.secrets_bank import tuning_lookalikes as looks
from benchmarks.secrets_bank import tuning_secrets as secrets
from benchmarks.secrets_bank.fakes import Case, Gen

SEEDS = (31, 32, 33)


TEMPLATES: tuple[Callable[[Gen], Case], ...] = (
    secrets.env_local,
    secrets.shell_exports,
    secrets.tool_output_env,
    secrets.github_actions_log,
    secrets.fine_grained_chat,
    secrets.gitlab_ci,
    secrets.slack_webhook_code,
    secrets.slack_user_token_chat,
    secrets.stripe_js,
    secrets.stripe_restricted_yaml,
    secrets.openai_python,
    secrets.twilio_env,
    secrets.sendgrid_traceback,
    secrets.pypirc,
    secrets.google_maps_html,
    secrets.gcloud_tokens,
    secrets.azure_service_bus,
    secrets.azure_sas_url,
    secrets.azure_cli_output,
    secrets.jwt_in_cookie,
    secrets.jwt_in_chat,
    secrets.bearer_opaque,
    secrets.curl_header_api_key,
    secrets.rsa_key_log,
    secrets.ec_key_in_yaml,
    secrets.encrypted_pkcs8,
    secrets.truncated_key,
    secrets.mongo_mysql_urls,
    secrets.https_basic_url,
    secrets.cli_flag_tokens,
    secrets.mysql_p_flag,
    secrets.curl_user,
    secrets.netrc,
    secrets.dotnet_config,
    secrets.xml_password,
    secrets.k8s_secret_data,
    secrets.ecs_task_json,
    secrets.spring_properties,
    secrets.terraform_tfvars,
    secrets.ruby_rails,
    secrets.csv_credentials,
    secrets.hf_notebook,
    secrets.misc_providers,
    secrets.password_chat_variants,
    secrets.json_nested_api_key,
    looks.lockfile,
    looks.poetry_lock,
    looks.docker_images,
    looks.git_rev_parse,
    looks.uuid_json,
    looks.base64_blob,
    looks.css_and_colors,
    looks.doc_placeholders,
    looks.env_example,
    looks.code_references,
    looks.typed_fields,
    looks.prose_about_secrets,
    looks.k8s_refs,
    looks.public_keys,
    looks.hashes_in_prose,
    looks.long_identifiers_java,
    looks.minified_bundle,
    looks.cache_and_object_keys,
    looks.pagination_tokens,
    looks.urls_with_params,
    looks.aws_resource_ids,
    looks.version_matrix,
    looks.ipv6_and_macs,
    looks.chat_ordinary,
    looks.hex_ids_named,
    formats.python_repr_log,
    formats.logfmt_line,
    formats.escaped_json_body,
    formats.toml_poetry,
    formats.sts_assume_role,
    formats.chat_key_prose,
    formats.yaml_quoted_comments,
    formats.go_setenv,
    formats.korean_chat,
    formats.dockerfile_env,
    formats.url_query_token,
    formats.heroku_uuid_key,
    formats.terraform_state,
    formats.markdown_table,
    looks.html_forms,
    looks.sql_and_code,
    looks.openapi_spec,
    looks.korean_ordinary,
)


def cases() -> list[Case]:
    out = []
    for seed in SEEDS:
        rng = random.Random(seed)
        for template in TEMPLATES:
            out.append(template(Gen(rng, "tuning")))
    return out
