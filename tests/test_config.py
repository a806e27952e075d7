"""Settings: environment over file over defaults; clear errors naming the file and key."""

from __future__ import annotations

import stat

import pytest

from finkg.config import ConfigError, load_settings, write_settings_file


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv("FINKG_CONFIG", str(path))
    for var in (
        "NEO4J_URI",
        "NEO4J_USER",
        "NEO4J_PASSWORD",
        "NEO4J_DATABASE",
        "FINKG_SERVER_HOME",
        "FINKG_SERVER_BOLT_PORT",
        "FINKG_WRITER_BATCH_SIZE",
    ):
        monkeypatch.delenv(var, raising=False)
    return path


def test_init_writes_a_commented_file_with_a_generated_password(cfg):
    path, written = write_settings_file()
    assert written and path == cfg
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    text = cfg.read_text()
    assert text.count("#") > 10
    s = load_settings()
    assert len(s.password()) >= 20
    assert s.uri == "bolt://127.0.0.1:7687"
    assert write_settings_file() == (cfg, False)  # kept, password unchanged
    assert load_settings().password() == s.password()


def test_environment_overrides_the_file(cfg, monkeypatch):
    cfg.write_text('[neo4j]\npassword = "from-file"\nuri = "bolt://db:7687"\n[writer]\nbatch_size = 10\n')
    assert load_settings().password() == "from-file"
    monkeypatch.setenv("NEO4J_PASSWORD", "from-env")
    monkeypatch.setenv("FINKG_WRITER_BATCH_SIZE", "99")
    s = load_settings()
    assert (s.password(), s.writer_batch_size, s.uri) == ("from-env", 99, "bolt://db:7687")


def test_unknown_key_names_the_file_and_key(cfg):
    cfg.write_text("[neo4j]\npasword = 'typo'\n")
    with pytest.raises(ConfigError, match=r"config.toml: unknown setting \[neo4j\] pasword"):
        load_settings()


def test_invalid_value_names_the_setting(cfg):
    cfg.write_text("[server]\nbolt_port = 70000\n")
    with pytest.raises(ConfigError, match="server_bolt_port"):
        load_settings()


def test_bad_toml_names_the_file(cfg):
    cfg.write_text("[neo4j\n")
    with pytest.raises(ConfigError, match="config.toml: not valid TOML"):
        load_settings()


def test_no_password_says_how_to_set_one(cfg):
    with pytest.raises(ConfigError, match="NEO4J_PASSWORD.*finkg init"):
        load_settings().password()
