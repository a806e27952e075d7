"""Files written whole or not at all, safe when two runs write the same file at once.

Every writer of an output file goes through :func:`replacing`: the content is written to a temporary file
with a unique name (:func:`tempfile.mkstemp`) in the target's own folder, which is then renamed over the
target with :func:`os.replace` (atomic on one file system). A process killed mid-write leaves the old file or
none, never half of one; two processes or threads writing the same target at once each write their own
temporary file, so both finish without an error and the target ends as one of the two whole files.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    """The process's umask, read without changing it (Linux ``/proc``); 0o022 where it cannot be read."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


#: Mode of a new file, as ``open()`` would create it (mkstemp's own files are 0o600).
FILE_MODE = 0o666 & ~_umask()


@contextmanager
def replacing(path: Path, suffix: str = ".part") -> Iterator[Path]:
    """Yield a new, empty temporary file beside ``path`` to write; on a normal exit it replaces ``path``.

    The temporary name is ``<name>.<random><suffix>`` (unique per call; pass ``suffix=".part.png"`` where the
    writer picks its format from the extension). When the block raises, the temporary file is removed and
    ``path`` is left as it was. The folder of ``path`` is created when missing.

    Raises:
        OSError: the folder cannot be created or written, or the rename fails (the temporary file is removed).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f"{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        os.chmod(tmp, FILE_MODE)
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) through :func:`replacing`; returns ``path``.

    Raises:
        OSError: the folder cannot be created or written.
    """
    with replacing(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
