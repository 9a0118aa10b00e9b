"""Serve settings: defaults, TOML files, and values refused with a message that names the setting."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from xlsent.serve import ServeSettings
from xlsent.serve.settings import MAX_DURATION_S, Given


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


@pytest.mark.parametrize(("text", "message"), [
    ("max_wait_ms = 1e13\nrequest_timeout_s = 3\n", "max_wait_ms (1e+13) must be less than request_timeout_s (3 s)"),
    ("max_wait_ms = 60000\n", "max_wait_ms (60000) must be less than request_timeout_s (60 s)"),
    ("shutdown_grace_s = 1e10\n", "shutdown_grace_s must be at most 86400 (a day; got 10000000000.0)"),
    ("request_timeout_s = 1e10\n", "request_timeout_s must be at most 86400"),
    ("body_timeout_s = 86401\n", "body_timeout_s must be at most 86400"),
    ("header_timeout_s = 1e300\n", "header_timeout_s must be at most 86400"),
])
def test_durations_beyond_a_day_or_the_request_timeout_are_refused(tmp_path: Path, text: str, message: str) -> None:
    """A duration no thread can wait (over threading.TIMEOUT_MAX) killed the model's inference thread or the
    shutdown with an OverflowError; every one is bounded well below that, by a day."""
    assert MAX_DURATION_S < threading.TIMEOUT_MAX
    path = tmp_path / "serve.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match="invalid serve settings") as error:
        ServeSettings.from_toml(path)
    assert message in str(error.value) and str(error.value).startswith(f"{path}: ")
    ServeSettings(max_wait_ms=2999, request_timeout_s=3, shutdown_grace_s=MAX_DURATION_S)  # the most allowed


@pytest.mark.parametrize("host", ["", " "])
def test_an_empty_host_is_refused(host: str) -> None:
    with pytest.raises(ValueError, match=r"host must be an address or a host name: 127\.0\.0\.1 \(this machine only"):
        ServeSettings(host=host)


def test_load_names_each_setting_as_the_user_gave_it(tmp_path: Path) -> None:
    path = tmp_path / "serve.toml"
    path.write_text('host = "::1"\nport = 9001\nmax_inputs = 16\n', encoding="utf-8")
    settings, given = ServeSettings.load(path, {"host": None, "port": 9002, "api_key_env": None})
    assert (settings.host, settings.port, settings.max_inputs) == ("::1", 9002, 16)
    assert given == {"host": Given("host", path), "port": Given("--port"), "api_key_env": Given("--api-key-env"),
                     "max_inputs": Given("max_inputs", path)}
    assert given["host"].value("::1") == f"{path}: host = '::1'" and given["host"].where == f"host in {path}"


def test_a_flag_out_of_range_is_not_blamed_on_the_file(tmp_path: Path) -> None:
    path = tmp_path / "serve.toml"
    path.write_text("max_inputs = 16\n", encoding="utf-8")
    with pytest.raises(ValueError) as error:
        ServeSettings.load(path, {"port": 70000})
    assert str(error.value) == "invalid serve settings: port must be in 0..65535, 0 picking a free one (got 70000)"


@pytest.mark.parametrize("value", [None, ""])
def test_an_unset_api_key_variable_is_refused_from_the_file_as_from_the_flag(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    """Named in the file, an unset (or empty) variable served /v1/* with no key at all, silently."""
    if value is None:
        monkeypatch.delenv("XLSENT_TEST_UNSET_KEY", raising=False)
    else:
        monkeypatch.setenv("XLSENT_TEST_UNSET_KEY", value)
    path = tmp_path / "serve.toml"
    path.write_text('api_key_env = "XLSENT_TEST_UNSET_KEY"\n', encoding="utf-8")
    with pytest.raises(ValueError) as error:
        ServeSettings.load(path, {"api_key_env": None})
    assert str(error.value) == (
        f"{path}: api_key_env = 'XLSENT_TEST_UNSET_KEY': that environment variable is not set (or empty), so /v1/* "
        f"would need no key; export XLSENT_TEST_UNSET_KEY=YOUR-KEY first, or leave out api_key_env in {path}")
    with pytest.raises(ValueError, match="^--api-key-env XLSENT_TEST_UNSET_KEY: that environment variable is not"):
        ServeSettings.load(None, {"api_key_env": "XLSENT_TEST_UNSET_KEY"})
    monkeypatch.setenv("XLSENT_TEST_UNSET_KEY", "secret")
    assert ServeSettings.load(path, {"api_key_env": None})[0].api_key_env == "XLSENT_TEST_UNSET_KEY"


@pytest.mark.parametrize("value", ["", "   ", "key ", "\tkey", "key\n"])
def test_a_blank_or_padded_api_key_is_refused_naming_the_variable(monkeypatch: pytest.MonkeyPatch,
                                                                  value: str) -> None:
    """A key with spaces around it refused every request (clients' tokens are stripped); a blank one served with no
    key at all, silently."""
    from xlsent.serve.settings import api_key

    monkeypatch.setenv("XLSENT_TEST_KEY", value)
    with pytest.raises(ValueError, match="^XLSENT_TEST_KEY: ") as error:
        api_key("XLSENT_TEST_KEY")
    assert "export XLSENT_TEST_KEY=" in str(error.value) and repr(value.strip() or "x") not in str(error.value)
    monkeypatch.setenv("XLSENT_TEST_KEY", "key")
    assert api_key("XLSENT_TEST_KEY") == "key"
    monkeypatch.delenv("XLSENT_TEST_KEY")
    assert api_key("XLSENT_TEST_KEY") == ""


def test_serving_with_a_padded_default_api_key_is_refused_before_the_models_load(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from xlsent.serve import run

    monkeypatch.setenv("XLSENT_API_KEY", "key ")

    def never() -> None:
        raise AssertionError("a model loaded")

    with pytest.raises(ValueError, match="^XLSENT_API_KEY: the API key has whitespace around it"):
        run({"m": never}, ServeSettings(port=0))  # type: ignore[dict-item]


@pytest.mark.parametrize("name", ["", " ", "A=B"])
def test_an_api_key_variable_name_that_names_no_variable_is_refused(tmp_path: Path, name: str) -> None:
    """``--api-key-env ''`` said 'export =YOUR-KEY first'."""
    import re
    import shlex

    with pytest.raises(ValueError, match=re.escape(f"--api-key-env {shlex.quote(name)}: names no environment")):
        ServeSettings.load(None, {"api_key_env": name})
    path = tmp_path / "serve.toml"
    path.write_text(f'api_key_env = "{name}"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: api_key_env = {name!r}: names no environment")):
        ServeSettings.load(path, {"api_key_env": None})
    with pytest.raises(ValueError, match="api_key_env must name an environment variable"):
        ServeSettings(api_key_env=name)
