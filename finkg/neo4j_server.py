"""A real Neo4j 5.26 server on machines without Docker, assembled from Maven Central.

No server archive is published on Maven Central, so the server is assembled from its jars:
``finkg/neo4j/pom.xml`` lists ``org.neo4j:neo4j`` (``CommunityEntryPoint``), ``neo4j-bolt``,
``org.neo4j.app:neo4j-server`` (HTTP) and ``org.neo4j.client:neo4j-browser`` (served at
``/browser/``); ``mvn dependency:copy-dependencies`` copies them (about 140 MB, 214 jars) into a
distribution folder keyed by the pom's hash, reused by every later start. The server's home (conf,
data, logs, run) is a separate folder outside the repository. The initial password is set with
``neo4j-admin dbms set-initial-password`` through a picocli argument file, so it never appears
on a command line.

Users with Docker run ``docker compose up -d neo4j`` instead (docker-compose.yml).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import hashlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from finkg.config import Settings
from kg import Graph, GraphAuthError, GraphUnavailable
from kg.errors import GraphError
from kg.processes import spawn

POM = resources.files("finkg") / "neo4j" / "pom.xml"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_ENTRY_POINT = "org.neo4j.server.startup.Neo4jAdminCommand"
SUPPORTED_JAVA = (17, 21)
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
)


class ServerError(GraphError):
    """The local server cannot be assembled, started or stopped; the message says what to do."""


class JavaMissing(ServerError):
    """No usable Java (17 or 21) at the configured path."""


class PortInUse(ServerError):
    """A port the server needs is taken by another process."""


class DatabaseExists(ServerError):
    """A bulk import's target database already exists (``--force`` replaces it)."""


class DatabaseInUse(ServerError):
    """A bulk import's target database is the one the running server serves; it is never touched."""


DATABASE_NAME = re.compile(r"^[a-z][a-z0-9.-]{2,62}$")
"""Neo4j's rule for a standard database name (lower case here: Neo4j folds names to lower case)."""


@dataclass(frozen=True)
class ServerStatus:
    """State of the local server: whether it runs, its pid, addresses, home and version."""

    running: bool
    pid: int | None
    home: Path
    bolt_uri: str
    browser_url: str
    version: str


@dataclass(frozen=True)
class ImportReport:
    """What ``neo4j-admin database import full`` reported: the database, nodes, relationships and
    properties imported, the wall time in seconds (JVM starts included) and the tool's own time for the
    import (``IMPORT DONE in ...``, without JVM starts)."""

    database: str
    nodes: int
    relationships: int
    properties: int
    seconds: float
    tool_seconds: float


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (another process may still take it before the
    server binds it: :class:`PortInUse` then says so)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def private_settings(
    home: Path,
    password: str,
    *,
    ports: tuple[int, int] | None = None,
    heap: str = "512m",
    pagecache: str = "64m",
    database: str = "neo4j",
    **extra: Any,
) -> Settings:
    """The settings of a private, throw-away Neo4j server (a test's or a benchmark's second server, never the
    configured one): its own ``home`` folder, Bolt and HTTP ``ports`` (None: two free ones, :func:`free_port`), its
    URI ``bolt://127.0.0.1:<Bolt port>`` (the configured ``[neo4j] uri`` is dropped), ``password`` for user
    ``neo4j``, ``database``, a small ``heap`` and ``pagecache`` (Neo4j sizes: ``512m``, ``1g``), and the configured
    server's jars (``[server] dist_dir``, assembled once and shared) and tools; ``extra``: further flat overrides
    (``server_transaction_memory="20m"``, ...). Start it with :class:`LocalNeo4j`.

    Raises:
        ConfigError: an invalid override or settings file (the message names the setting).
    """
    from finkg.config import load_settings

    bolt, http = ports or (free_port(), free_port())
    return load_settings(
        server_home=home,
        server_dist_dir=load_settings().server.dist_dir,
        server_bolt_port=bolt,
        server_http_port=http,
        server_heap=heap,
        server_pagecache=pagecache,
        neo4j_uri=None,
        neo4j_password=password,
        neo4j_database=database,
        **extra,
    )


def _duration(text: str, after: str) -> float:
    """Seconds of a duration the import tool prints after ``after`` (``1m 2s 3ms``); 0.0 when absent."""
    m = re.search(re.escape(after) + r"\s+((?:\d+[hms]s?\s*)+)", text)
    if not m:
        return 0.0
    unit = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(int(n) * unit[u] for n, u in re.findall(r"(\d+)(ms|h|m|s)", m.group(1)))


def pom_versions(pom: Path | None = None) -> dict[str, str]:
    """The pinned versions in the pom's ``<properties>`` (``neo4j.version``, ``neo4j.browser.version``)."""
    root = ET.fromstring(Path(str(pom or POM)).read_text(encoding="utf-8"))
    ns = {"m": "http://maven.apache.org/POM/4.0.0"}
    props = root.find("m:properties", ns)
    return {el.tag.split("}")[1]: (el.text or "").strip() for el in props} if props is not None else {}


def java_major(java: str) -> int:
    """Major version of ``java`` (e.g. 17).

    Raises:
        JavaMissing: ``java`` is not found or does not run.
    """
    exe = shutil.which(java)
    if exe is None:
        raise JavaMissing(
            f"Java not found ({java!r} is not on PATH). Neo4j 5.26 needs Java 17 or 21: install it "
            "(Debian: `apt-get install openjdk-17-jre-headless`) or set FINKG_SERVER_JAVA to its path."
        )
    try:
        out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise JavaMissing(f"{exe} -version failed: {exc}") from exc
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        raise JavaMissing(f"cannot read the Java version from `{exe} -version`: {out.stderr.strip()!r}")
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


class LocalNeo4j:
    """Assembles, configures, starts, stops and reports the local Neo4j server.

    Args:
        settings: finkg settings (``server_*`` fields, the Neo4j user and password).
    """

    tie_to_parent: ClassVar[bool] = False
    """When True, a server this process starts stops with it: it is stopped at interpreter exit and, on Linux,
    gets SIGTERM from the kernel when this process dies, even by SIGKILL (``PR_SET_PDEATHSIG``, through
    :func:`kg.processes.spawn`). The test suite sets it (tests/conftest.py); `finkg neo4j start` leaves it False,
    its server outlives the command. Process-local: a subprocess does not inherit it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.home = Path(settings.server.home).expanduser()
        self.versions = pom_versions()
        pom_hash = hashlib.sha256(Path(str(POM)).read_bytes()).hexdigest()[:12]
        self.dist = Path(settings.server.dist_dir).expanduser() / f"neo4j-{self.versions['neo4j.version']}-{pom_hash}"
        self.conf_dir = self.home / "conf"
        self.pid_file = self.home / "run" / "finkg-neo4j.pid"
        self.console_log = self.home / "logs" / "console.log"

    # ------------------------------------------------------------------ paths
    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.settings.server.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.settings.server.http_port}/browser/"

    @property
    def classpath(self) -> str:
        return f"{self.home / 'plugins'}/*:{self.dist / 'lib'}/*"

    # ------------------------------------------------------------------ assembly
    def is_assembled(self) -> bool:
        return (self.dist / "COMPLETE").is_file()

    def assemble(self) -> Path:
        """Copy the pinned jars from Maven Central (or the local Maven repository) into ``self.dist``.

        A no-op when already assembled. Writes into a temporary folder and renames it, so an
        interrupted run leaves nothing half-made.

        Raises:
            ServerError: Maven is missing or fails (its output is included).
        """
        if self.is_assembled():
            return self.dist
        mvn = shutil.which(self.settings.server.mvn)
        if mvn is None:
            raise ServerError(
                f"Maven not found ({self.settings.server.mvn!r}); it fetches the Neo4j jars from "
                "Maven Central. Install it (Debian: `apt-get install maven`) or set FINKG_SERVER_MVN."
            )
        self.dist.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=self.dist.name + ".", dir=self.dist.parent))
        try:
            shutil.copyfile(str(POM), work / "pom.xml")
            proc = subprocess.run(
                [
                    mvn,
                    "-B",
                    "-q",
                    "-f",
                    str(work / "pom.xml"),
                    "dependency:copy-dependencies",
                    f"-DoutputDirectory={work / 'lib'}",
                    "-DincludeScope=runtime",
                ],
                capture_output=True,
                text=True,
                timeout=1800,
            )
            if proc.returncode != 0:
                raise ServerError(
                    "assembling Neo4j with Maven failed (exit "
                    f"{proc.returncode}):\n{(proc.stdout + proc.stderr)[-3000:]}"
                )
            if not any((work / "lib").glob("neo4j-browser-*.jar")):
                raise ServerError("Maven finished but the Neo4j Browser jar is missing from lib/")
            (work / "COMPLETE").write_text(
                "".join(f"{k}={v}\n" for k, v in sorted(self.versions.items())), encoding="utf-8"
            )
            shutil.rmtree(work / "target", ignore_errors=True)
            if self.is_assembled():  # another process assembled it meanwhile (and may be running from it)
                return self.dist
            if self.dist.exists():
                shutil.rmtree(self.dist)
            work.rename(self.dist)
        finally:
            if work.exists():
                shutil.rmtree(work, ignore_errors=True)
        return self.dist

    # ------------------------------------------------------------------ configuration
    def neo4j_conf(self) -> str:
        """The text of ``conf/neo4j.conf``: loopback only, auth on, directories under the home, and the
        transaction limits (``db.transaction.timeout``, ``db.memory.transaction.max``)."""
        s, h = self.settings, self.home
        lines = [
            "# Written by `finkg neo4j start` from the finkg settings; edits here are overwritten.",
            "server.default_listen_address=127.0.0.1",
            "server.default_advertised_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{s.server.bolt_port}",
            f"server.http.listen_address=127.0.0.1:{s.server.http_port}",
            "server.https.enabled=false",
            "# The database served: [neo4j] database (Community serves one user database; the others stay",
            "# on disk, stopped, e.g. one that `finkg ingest sec --bulk` imported).",
            f"initial.dbms.default_database={s.neo4j.database}",
            "dbms.security.auth_enabled=true",
            "dbms.usage_report.enabled=false",
            "client.allow_telemetry=false",
            f"server.memory.pagecache.size={s.server.pagecache}",
            "db.tx_log.rotation.retention_policy=1G size",
            "# Limits: the longest a transaction may run, the most heap one transaction may use",
            "# ([server] transaction_timeout and transaction_memory in the finkg settings).",
            f"db.transaction.timeout={s.server.transaction_timeout}",
            f"db.memory.transaction.max={s.server.transaction_memory}",
        ]
        for d in ("data", "logs", "plugins", "import", "run"):
            lines.append(f"server.directories.{d}={h / d}")
        return "\n".join(lines) + "\n"

    def configure(self) -> None:
        """Create the home folders, write ``neo4j.conf`` and, before the first start, set the password.

        The home and every folder in it are private to the user (mode 700, made so again when they
        exist): ``data`` holds ``dbms/auth.ini`` (the password hash) and the database, ``logs`` the
        queries, ``conf`` the configuration (``neo4j.conf``, mode 600)."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.home.chmod(0o700)
        for d in ("conf", "data", "logs", "plugins", "import", "run"):
            (self.home / d).mkdir(mode=0o700, exist_ok=True)
            (self.home / d).chmod(0o700)
        conf = self.conf_dir / "neo4j.conf"
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(self.neo4j_conf())
        if not (self.home / "data" / "dbms" / "auth.ini").exists():
            self._set_initial_password(self.settings.password())

    def _env(self) -> dict[str, str]:
        return {**os.environ, "NEO4J_HOME": str(self.home), "NEO4J_CONF": str(self.conf_dir)}

    def _set_initial_password(self, password: str) -> None:
        escaped = password.replace("\\", "\\\\").replace('"', '\\"')
        fd, argfile = tempfile.mkstemp(prefix="pw.", dir=self.home / "run")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                # "--" ends the options, so a password that starts with "-" stays the password.
                fh.write(f'--\n"{escaped}"\n')
            proc = subprocess.run(
                [self._java(), "-cp", self.classpath, ADMIN_ENTRY_POINT, "dbms", "set-initial-password", f"@{argfile}"],
                capture_output=True,
                text=True,
                timeout=300,
                env=self._env(),
            )
        finally:
            os.unlink(argfile)
        if proc.returncode != 0:
            raise ServerError(f"setting the initial Neo4j password failed:\n{(proc.stdout + proc.stderr)[-2000:]}")

    def _java(self) -> str:
        major = java_major(self.settings.server.java)
        if major not in SUPPORTED_JAVA:
            raise JavaMissing(
                f"Java {major} found at {shutil.which(self.settings.server.java)}; Neo4j 5.26 runs on "
                "Java 17 or 21. Install one and set FINKG_SERVER_JAVA to it."
            )
        return str(shutil.which(self.settings.server.java))

    # ------------------------------------------------------------------ databases
    def database_dir(self, name: str) -> Path:
        """The store folder of database ``name`` (``data/databases/<name>``); its transaction logs are in
        ``data/transactions/<name>``."""
        return self.home / "data" / "databases" / name

    def database_exists(self, name: str) -> bool:
        """Whether database ``name`` has files in this home (store or transaction logs)."""
        return self.database_dir(name).exists() or (self.home / "data" / "transactions" / name).exists()

    def served_database(self) -> str | None:
        """The database the running server serves (``initial.dbms.default_database`` of the ``neo4j.conf``
        it started with; ``neo4j`` when the file names none), or None when the server is not running."""
        if self.pid() is None:
            return None
        try:
            text = (self.conf_dir / "neo4j.conf").read_text(encoding="utf-8")
        except OSError:
            return "neo4j"
        m = re.search(r"^initial\.dbms\.default_database=(.+)$", text, flags=re.MULTILINE)
        return m.group(1).strip().lower() if m else "neo4j"

    def check_import_target(self, name: str, *, force: bool = False) -> None:
        """Refuse a bulk import into ``name`` before any work (:meth:`import_database` checks again).

        Raises:
            ServerError: an invalid name; DatabaseInUse: ``name`` is the running server's database;
            DatabaseExists: it exists and ``force`` is False.
        """
        if not DATABASE_NAME.match(name) or name == "system":
            raise ServerError(
                f"database name {name!r}: use 3-63 lower-case letters, digits, dots or dashes, starting with a "
                "letter (and not 'system'), e.g. --database edgar"
            )
        served = self.served_database()
        if served == name:
            raise DatabaseInUse(
                f"database {name!r} is the one the running server at {self.home} serves; a bulk import never "
                "touches it. Import into another name (--database edgar), or stop the server first "
                "(`finkg neo4j stop`) and add --force to replace it."
            )
        if self.database_exists(name) and not force:
            raise DatabaseExists(
                f"database {name!r} already exists at {self.database_dir(name)}; add --force to replace it "
                "(its data is deleted), or import into another name with --database"
            )

    def import_database(
        self, name: str, arguments: list[str], *, force: bool = False, heap: str = "1g"
    ) -> ImportReport:
        """``neo4j-admin database import full`` of CSV files into database ``name`` of this home.

        Safety: the running server's own database is never the target, even with ``force`` (Neo4j
        Community serves one user database, so any other is stopped and the tool may write it while
        the server runs); an existing database is replaced only with ``force``
        (``--overwrite-destination``). The database is served once ``[neo4j] database`` names it and the
        server restarts.

        Args:
            name: the target database (:data:`DATABASE_NAME`: 3-63 characters, lower-case letters,
                digits, dots and dashes, starting with a letter; not ``system``).
            arguments: ``--nodes=...``/``--relationships=...`` (:meth:`kg.bulk.ImportFiles.arguments`).
            force: replace an existing database.
            heap: the import tool's Java heap (its caches are off-heap).

        Returns:
            :class:`ImportReport`: nodes, relationships and properties the tool reports, wall seconds.

        Raises:
            ServerError: an invalid name, or the tool failed (its last output lines included);
            DatabaseInUse: ``name`` is the running server's database; DatabaseExists: it exists, no ``force``.
        """
        self.check_import_target(name, force=force)
        if not self.is_assembled():
            self.assemble()
        if not (self.conf_dir / "neo4j.conf").exists():  # a fresh home; a running server's conf stays as it started
            self.configure()
        cmd = [
            self._java(),
            f"-Xmx{heap}",
            *JVM_FLAGS,
            "-cp",
            self.classpath,
            ADMIN_ENTRY_POINT,
            "database",
            "import",
            "full",
            f"--report-file={self.home / 'logs' / f'import-{name}.report'}",
            "--id-type=string",
            *(["--overwrite-destination=true"] if force else []),
            *arguments,
            "--",
            name,
        ]
        t0 = time.perf_counter()
        # neo4j-admin starts the tool in a second JVM sized by HEAP_SIZE (its -Xmx is for the launcher only)
        env = {**self._env(), "HEAP_SIZE": heap}
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=self.home)
        seconds = time.perf_counter() - t0
        out = proc.stdout + proc.stderr
        (self.home / "logs" / f"import-{name}.log").write_text(out, encoding="utf-8")
        if proc.returncode != 0 or "IMPORT DONE" not in out:
            raise ServerError(
                f"neo4j-admin database import into {name!r} failed (exit {proc.returncode}); its output is in "
                f"{self.home / 'logs' / f'import-{name}.log'}, bad entries in import-{name}.report. Last "
                f"output:\n{out[-3000:]}"
            )
        found = {k: int(v) for v, k in re.findall(r"^\s*(\d+) (nodes|relationships|properties)\s*$", out, re.M)}
        return ImportReport(
            name,
            found.get("nodes", 0),
            found.get("relationships", 0),
            found.get("properties", 0),
            seconds,
            _duration(out, "IMPORT DONE in"),
        )

    # ------------------------------------------------------------------ process
    def pid(self) -> int | None:
        """Pid of the running server of this home, or None (a stale pid file is removed)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            cmdline = ""
        if ENTRY_POINT in cmdline and str(self.home) in cmdline:
            return pid
        self.pid_file.unlink(missing_ok=True)
        return None

    def _check_ports(self) -> None:
        for what, port in (("Bolt", self.settings.server.bolt_port), ("HTTP", self.settings.server.http_port)):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError as exc:
                    if exc.errno != errno.EADDRINUSE:
                        raise
                    raise PortInUse(
                        f"port {port} ({what}) on 127.0.0.1 is already in use by another process, "
                        f"not by finkg's Neo4j at {self.home}. Stop that process (`ss -ltnp "
                        f"'sport = :{port}'` shows it), or pick free ports with "
                        "FINKG_SERVER_BOLT_PORT / FINKG_SERVER_HTTP_PORT."
                    ) from None

    def start(self, progress: Callable[[str], None] | None = None) -> tuple[ServerStatus, bool]:
        """Start the server in the background and wait until Bolt answers with the configured password.

        Returns:
            ``(status, started)``; ``started`` is False when it was already running (a no-op).

        Raises:
            JavaMissing, PortInUse, ServerError: with what to do; ConfigError: no password set.
        """
        if self.pid() is not None:
            return self.status(), False
        password = self.settings.password()
        java = self._java()
        self._check_ports()
        if not self.is_assembled():
            if progress:
                progress("assembling Neo4j from Maven Central (first start only, about 140 MB)")
            self.assemble()
        self.configure()
        cmd = [
            java,
            f"-Xms{self.settings.server.heap}",
            f"-Xmx{self.settings.server.heap}",
            *JVM_FLAGS,
            "-cp",
            self.classpath,
            ENTRY_POINT,
            f"--home-dir={self.home}",
            f"--config-dir={self.conf_dir}",
            "--console-mode",
        ]
        if progress:
            progress(f"starting Neo4j {self.versions['neo4j.version']} at {self.home}")
        tied = self.tie_to_parent
        with open(self.console_log, "ab") as log:
            # its own process group (a Ctrl-C meant for the caller does not reach it); tied: SIGTERM when we die
            proc = spawn(
                cmd,
                tie=tied,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self._env(),
                cwd=self.home,
            )
        self.pid_file.write_text(f"{proc.pid}\n")
        if tied:
            atexit.register(self.stop)
        self._wait_for_bolt(proc, password)
        return self.status(), True

    def _wait_for_bolt(self, proc: subprocess.Popen, password: str) -> None:
        deadline = time.monotonic() + self.settings.server.start_timeout
        while True:
            if proc.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise ServerError(
                    f"Neo4j exited with code {proc.returncode} while starting. Last log lines "
                    f"({self.console_log}):\n{self._log_tail()}"
                )
            try:
                with Graph(
                    self.bolt_uri, self.settings.neo4j.user, password, max_attempts=1, connection_timeout=2.0
                ) as g:
                    g.verify()
                return
            except GraphUnavailable:
                pass
            except GraphAuthError as exc:
                raise ServerError(
                    f"Neo4j started at {self.home} but refuses the configured password: the data "
                    "folder was first started with another one. Use that password, or remove "
                    f"{self.home / 'data'} to start over (this deletes the database). ({exc})"
                ) from exc
            if time.monotonic() > deadline:
                raise ServerError(
                    f"Neo4j did not answer on {self.bolt_uri} within "
                    f"{self.settings.server.start_timeout:.0f} s (still running as pid {proc.pid}; "
                    f"`finkg neo4j stop` stops it). Last log lines:\n{self._log_tail()}"
                )
            time.sleep(0.5)

    def _log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.console_log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout: float = 120.0) -> bool:
        """Stop the server with SIGTERM (SIGKILL after ``timeout`` s). Returns False if it was not running."""
        pid = self.pid()
        if pid is None:
            return False
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            self.pid_file.unlink(missing_ok=True)
            return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not Path(f"/proc/{pid}").exists() or _is_zombie(pid):
                break
            time.sleep(0.3)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return True

    def status(self) -> ServerStatus:
        """Whether the server of this home runs, with its pid, addresses and version."""
        pid = self.pid()
        return ServerStatus(
            running=pid is not None,
            pid=pid,
            home=self.home,
            bolt_uri=self.bolt_uri,
            browser_url=self.browser_url,
            version=self.versions["neo4j.version"],
        )


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return False
