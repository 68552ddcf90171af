"""Settings sources and precedence, and the exception tree's structured fields."""

from __future__ import annotations

import pytest

from mobile_agent import errors
from mobile_agent.errors import ConfigError, DeviceError, MobileAgentError, MultipleDevicesError
from mobile_agent.settings import Settings, load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith("MOBILE_AGENT_") or key in ("ANDROID_ADB_SERVER_PORT", "ANDROID_ADB_SERVER_HOST", "ANDROID_SERIAL"):
            monkeypatch.delenv(key)


def test_defaults() -> None:
    s = load_settings()
    assert s.adb.server_port == 5037
    assert s.adb.serial is None
    assert s.planner.model == "gpt-4o"
    assert not s.planner.configured


def test_adb_environment_variables_as_adb_reads_them(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    # adb(1) and adbutils take the server port and the device from these variables
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "5038")
    monkeypatch.setenv("ANDROID_SERIAL", "emulator-5556")
    s = load_settings()
    assert (s.adb.server_port, s.adb.serial) == (5038, "emulator-5556")
    # explicit settings win: our own variable, the TOML file, an override
    config = tmp_path / "c.toml"
    config.write_text('[adb]\nserver_port = 6001\n')
    assert load_settings(config).adb.server_port == 6001
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", "6000")
    assert load_settings(config).adb.server_port == 6000
    assert load_settings(overrides={"adb.serial": "R58M123ABC"}).adb.serial == "R58M123ABC"


def test_bad_adb_environment_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "not-a-port")
    with pytest.raises(ConfigError, match="ANDROID_ADB_SERVER_PORT='not-a-port'"):
        load_settings()


def test_env_prefix_and_nested_delimiter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOBILE_AGENT_PLANNER__MODEL", "qwen-vl")
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", "5999")
    monkeypatch.setenv("MOBILE_AGENT_LOG_LEVEL", "debug")
    s = load_settings()
    assert s.planner.model == "qwen-vl"
    assert s.adb.server_port == 5999
    assert s.log_level == "DEBUG"


def test_toml_file_and_precedence(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "agent.toml"
    cfg.write_text('[adb]\nserial = "emulator-5554"\nserver_port = 6000\n[agent]\nmax_steps = 7\n')
    s = load_settings(cfg)
    assert (s.adb.serial, s.adb.server_port, s.agent.max_steps) == ("emulator-5554", 6000, 7)
    # environment beats the file, explicit overrides beat both; None overrides fall through
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", "6001")
    s = load_settings(cfg, overrides={"agent.max_steps": 9, "adb.serial": None})
    assert (s.adb.serial, s.adb.server_port, s.agent.max_steps) == ("emulator-5554", 6001, 9)
    # MOBILE_AGENT_CONFIG names the file when none is given
    monkeypatch.setenv("MOBILE_AGENT_CONFIG", str(cfg))
    assert load_settings().agent.max_steps == 7


def test_with_overrides_validates() -> None:
    s = load_settings()
    t = s.with_overrides({"agent.max_steps": 3, "adb.serial": "abc123"})
    assert (t.agent.max_steps, t.adb.serial) == (3, "abc123")
    assert s.agent.max_steps == 20  # the original is untouched
    with pytest.raises(ConfigError) as info:
        s.with_overrides({"agent.max_steps": 0})
    assert "agent.max_steps" in info.value.message


@pytest.mark.parametrize(
    ("overrides", "where"),
    [
        ({"adb.server_port": 70000}, "adb.server_port"),
        ({"planner.temperature": 5}, "planner.temperature"),
        ({"nonsense": 1}, "nonsense"),
        ({"agent.max_stepz": 5}, "agent.max_stepz"),
        ({"adb.serail": "abc"}, "adb.serail"),
        ({"adb.command_timeout_s": 0}, "adb.command_timeout_s"),
        # the names the service gives principals of its own: api_token's, and the local admin's (no token at all)
        ({"server.tokens": {"default": {"token": "t", "role": "user"}}}, "server.tokens"),
        ({"server.tokens": {"anonymous": {"token": "t", "role": "user"}}}, "server.tokens"),
        ({"server.tokens": {"local": {"token": "t", "role": "user"}}}, "server.tokens"),  # MCP's stdio user
    ],
)
def test_invalid_values_give_config_error(overrides: dict, where: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(overrides=overrides)
    assert where in info.value.message
    assert info.value.fields["errors"]


def test_misspelt_keys_in_env_file_and_overrides_are_errors(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOBILE_AGENT_PLANNER__MODLE", "gpt-4o-mini")
    with pytest.raises(ConfigError, match="planner.modle"):
        load_settings()
    monkeypatch.delenv("MOBILE_AGENT_PLANNER__MODLE")
    config = tmp_path / "c.toml"
    config.write_text("[perception]\nocr_backnd = 'paddleocr'\n")
    with pytest.raises(ConfigError, match="perception.ocr_backnd"):
        load_settings(config)
    with pytest.raises(ConfigError, match="server.prot"):
        load_settings().with_overrides({"server.prot": 1})


def test_bad_env_value_gives_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOBILE_AGENT_ADB__SERVER_PORT", "not-a-port")
    with pytest.raises(ConfigError, match="adb.server_port"):
        load_settings()


def test_missing_and_malformed_config_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="not found") as info:
        load_settings(tmp_path / "nope.toml")
    assert info.value.fields["path"].endswith("nope.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[adb\nserial = ")
    with pytest.raises(ConfigError, match="bad.toml"):
        load_settings(bad)


def test_secret_is_not_printed() -> None:
    s = load_settings(overrides={"planner.api_key": "sk-very-secret"})
    assert "sk-very-secret" not in repr(s)
    assert s.planner.api_key.get_secret_value() == "sk-very-secret"
    assert s.planner.configured
    assert isinstance(s, Settings)


def test_errors_carry_fields_and_serialize() -> None:
    err = MultipleDevicesError("two phones", serials=["a", "b"], serial=None)
    assert isinstance(err, DeviceError) and isinstance(err, MobileAgentError)
    assert err.serials == ["a", "b"]
    assert err.to_dict() == {"type": "MultipleDevicesError", "message": "two phones", "serials": ["a", "b"]}
    lost = errors.DeviceLostError("gone", serial="emulator-5554")
    assert lost.fields == {"serial": "emulator-5554"} and str(lost) == "gone"


def test_every_exported_error_is_in_the_tree() -> None:
    for name in errors.__all__:
        cls = getattr(errors, name)
        assert issubclass(cls, MobileAgentError), name
