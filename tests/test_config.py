"""Settings: environment over file over defaults; clear errors naming the file and key."""

from __future__ import annotations

import os
import stat

import pytest

from finkg.config import ConfigError, effective_settings, load_settings, write_settings_file


@pytest.fixture
def cfg(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    monkeypatch.setenv("FINKG_CONFIG", str(path))
    for var in list(os.environ):
        if var.startswith(("NEO4J_", "FINKG_")) and var != "FINKG_CONFIG":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("FINKG_MODELS__DIR", str(tmp_path / "no-models"))  # nothing installed
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
    assert (s.password(), s.writer.batch_size, s.uri) == ("from-env", 99, "bolt://db:7687")


def test_unknown_key_names_the_file_and_key(cfg):
    cfg.write_text("[neo4j]\npasword = 'typo'\n")
    with pytest.raises(ConfigError, match=r"config.toml: unknown setting \[neo4j\] pasword"):
        load_settings()


def test_invalid_value_names_the_setting(cfg):
    cfg.write_text("[server]\nbolt_port = 70000\n")
    with pytest.raises(ConfigError, match=r"server\.bolt_port: Input should be less than or equal to 65535"):
        load_settings()


def test_bad_toml_names_the_file(cfg):
    cfg.write_text("[neo4j\n")
    with pytest.raises(ConfigError, match=r"config\.toml: not valid TOML"):
        load_settings()


def test_no_password_says_how_to_set_one(cfg):
    with pytest.raises(ConfigError, match=r"NEO4J_PASSWORD.*finkg init"):
        load_settings().password()


def test_sections_are_typed_and_nested(cfg):
    cfg.write_text('[llm]\nbackend = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n[memory]\nlambda = 0.25\n')
    s = load_settings()
    assert s.llm.backend == "openai" and s.llm.base_url == "http://127.0.0.1:9/v1"
    assert s.memory.lambda_ == 0.25  # the file's key "lambda" (a Python keyword) is the field lambda_
    assert s.writer.batch_size == 5_000  # default


def test_nested_environment_names_win_over_old_names_and_the_file(cfg, monkeypatch):
    cfg.write_text('[neo4j]\npassword = "from-file"\n[llm]\nthreads = 3\n')
    monkeypatch.setenv("FINKG_LLM_THREADS", "5")  # the older one-underscore form
    assert load_settings().llm.threads == 5
    monkeypatch.setenv("FINKG_LLM__THREADS", "7")
    monkeypatch.setenv("NEO4J_PASSWORD", "old-form")
    assert load_settings().llm.threads == 7 and load_settings().password() == "old-form"
    monkeypatch.setenv("FINKG_NEO4J__PASSWORD", "nested-form")
    assert load_settings().password() == "nested-form"


def test_old_list_valued_environment_names_are_json(cfg, monkeypatch):
    monkeypatch.setenv("FINKG_FEEDBACK_TICKERS", '["MSFT", "GE"]')
    assert load_settings().feedback.tickers == ["MSFT", "GE"]
    monkeypatch.setenv("FINKG_FEEDBACK_TICKERS", "MSFT,GE")
    with pytest.raises(ConfigError, match="FINKG_FEEDBACK_TICKERS: not valid JSON"):
        load_settings()


def test_overrides_take_flat_names_and_copies_validate(cfg):
    s = load_settings(llm_backend="openai", memory_kappa=3.0)
    assert (s.llm.backend, s.memory.kappa) == ("openai", 3.0)
    t = s.model_copy(update={"llm_threads": 4, "memory_lambda": 0.1})
    assert (t.llm.threads, t.memory.lambda_, s.llm.threads) == (4, 0.1, 2)
    with pytest.raises(ConfigError, match=r"unknown setting 'llm_colour'"):
        load_settings(llm_colour="red")
    with pytest.raises(ConfigError, match=r"memory\.kappa"):
        s.model_copy(update={"memory_kappa": -1})


@pytest.mark.reliability("secrets")
def test_config_show_masks_secrets_and_names_sources(cfg, monkeypatch):
    cfg.write_text('[neo4j]\npassword = "s3cret-value"\n[writer]\nbatch_size = 10\n')
    monkeypatch.setenv("FINKG_LLM__API_KEY", "sk-very-secret")
    monkeypatch.setenv("FINKG_LLM_THREADS", "3")
    rows = {r["setting"]: r for r in effective_settings()}
    assert rows["neo4j.password"] == {"setting": "neo4j.password", "value": "(set)", "source": "file"}
    assert rows["llm.api_key"]["value"] == "(set)" and rows["llm.api_key"]["source"] == "env FINKG_LLM__API_KEY"
    assert rows["llm.threads"] == {"setting": "llm.threads", "value": "3", "source": "env FINKG_LLM_THREADS"}
    assert rows["writer.batch_size"]["source"] == "file" and rows["writer.workers"]["source"] == "default"
    assert rows["memory.lambda"]["value"] == "0.3"
    assert not any("s3cret" in r["value"] or "sk-very" in r["value"] for r in rows.values())


def test_installed_models_become_the_defaults(cfg, monkeypatch, tmp_path):
    from finkg import models

    folder = tmp_path / "models"
    monkeypatch.setenv("FINKG_MODELS__DIR", str(folder))
    assert load_settings().embedding.model_path is None  # nothing installed: nothing configured
    from finkg.config import ModelsSettings

    # the real model that `finkg models install` put in the default folder (scripts/test installs it)
    minilm = models.installed_path(models.DEFAULT_EMBEDDING, ModelsSettings().dir)
    if minilm is None:
        pytest.skip("all-MiniLM-L6-v2 is not installed (finkg models install)")
    target = folder / models.DEFAULT_EMBEDDING
    target.parent.mkdir(parents=True)
    target.symlink_to(minilm)
    s = load_settings()
    assert s.embedding.model_path == folder / models.DEFAULT_EMBEDDING
    assert {r["setting"]: r["source"] for r in effective_settings(s)}["embedding.model_path"] == "installed"
    monkeypatch.setenv("FINKG_MODELS__USE_INSTALLED", "false")
    assert load_settings().embedding.model_path is None


def test_an_installed_qwen_becomes_the_llm_served_by_llama_server_where_bootstrap_built_it(cfg, monkeypatch, tmp_path):
    import json as _json

    from finkg import models
    from generation.llm.server import default_server_path

    folder = tmp_path / "models"
    monkeypatch.setenv("FINKG_MODELS__DIR", str(folder))
    assert load_settings().llm.backend is None  # nothing installed: no LLM
    # an install stamp as `finkg models install` writes it, over a sparse file of the registry's name
    spec = models.spec(models.DEFAULT_LLM)
    target = folder / spec.name
    target.mkdir(parents=True)
    (target / spec.filename).write_bytes(b"")
    os.truncate(target / spec.filename, 1024)
    stamp = {"name": spec.name, "files": {spec.filename: {"size": 1024, "sha256": "0" * 64}}}
    (target / models.STAMP).write_text(_json.dumps(stamp), encoding="utf-8")
    s = load_settings()
    assert s.llm.model_path == target / spec.filename
    assert s.llm.backend == ("llama-server" if default_server_path() is not None else "llama-cpp")
    assert s.llm.concurrency() == (s.llm.parallel if s.llm.backend == "llama-server" else 1)
    assert load_settings(llm_backend="llama-cpp").llm.backend == "llama-cpp"  # a choice is kept
