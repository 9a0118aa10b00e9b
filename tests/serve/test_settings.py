"""Serve settings: defaults, TOML files, and values refused with a message that names the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlsent.serve import ServeSettings


def test_toml_overrides_defaults(tmp_path: Path) -> None:
    path = tmp_path / "serve.toml"
    path.write_text('port = 9001\nmax_inputs = 16\nmax_wait_ms = 2\napi_key_env = "MY_KEY"\n', encoding="utf-8")
    settings = ServeSettings.from_toml(path, host="::1")
    assert (settings.port, settings.max_inputs, settings.max_wait_ms, settings.api_key_env, settings.host) == (
        9001, 16, 2.0, "MY_KEY", "::1")
    assert settings.batch_tokens == ServeSettings().batch_tokens


@pytest.mark.parametrize(("text", "message"), [
    ("prot = 1\n", "unknown serve setting(s) prot"),
    ('port = "80"\n', "port = '80': expected a whole number, not a string (write it without quotes)"),
    ("port = true\n", "port = True: expected a whole number, not true or false"),
    ("port = 80.5\n", "port = 80.5: expected a whole number, not a number with a fraction"),
    ('warmup = "false"\n', "warmup = 'false': expected true or false, not a string"),
    ("max_wait_ms = nan\n", "max_wait_ms = nan: expected a finite number"),
    ("max_inputs = 4096\n", "at most 2048"),
    ("max_queue_tokens = 10\n", "max_queue_tokens (10) must be at least max_request_tokens"),
    ("request_timeout_s = 0\n", "request_timeout_s must be > 0"),
    ("port = [\n", "not valid TOML"),
])
def test_bad_settings_name_the_file_and_the_setting(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "serve.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="serve") as error:
        ServeSettings.from_toml(path)
    assert message in str(error.value) and str(error.value).startswith(f"{path}: ")
