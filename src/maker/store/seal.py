"""Tamper-evident records: an HMAC-SHA256 seal under a key kept outside the project.

maker seals the records that only its own code may write (the verification runs of
``maker verify``; approvals, through the same API). The key lives in maker's data
directory, never under ``plans/``, and the step executor is refused any tool call
that names that directory, so a record the executor forged by writing files directly
carries no valid seal and is refused.

The directory is ``maker.core.paths.data_dir`` without ``CLAUDE_PLUGIN_DATA``:
``$XDG_DATA_HOME/maker``, else ``~/.local/share/maker``. Claude Code gives
``CLAUDE_PLUGIN_DATA`` to hooks but not to the Bash tool, where ``maker verify`` runs,
so a key kept there would differ between the writer of a record and its checker.

A person with shell access can read the key and is trusted (the trust model:
docs/internals.md#what-maker-guarantees).

``seal(record)`` returns a copy with a ``"seal"`` field; ``check(record)`` says whether
that field is the seal of the rest. The seal covers a canonical JSON text of the record
(sorted keys, no spaces, UTF-8), so key order and formatting do not matter.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path

from maker.core.paths import seal_key_path

TYPE_CHECKING = False  # typing's, without importing typing: the Stop hook reads a run
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SEAL_FIELD", "check", "key_path", "read_sealed", "seal"]

SEAL_FIELD = "seal"
_PREFIX = "hmac-sha256:"
_KEY_BYTES = 32


def key_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the sealing key is kept: ``<maker's data dir>/seal.key`` (the same for
    hooks and for the Bash tool, see above)."""
    return seal_key_path(env)


def seal(record: Mapping[str, Any], *, key_file: Path | None = None) -> dict[str, Any]:
    """A copy of ``record`` with its ``seal`` (any old seal replaced).

    Creates the key (0600, random) on first use. Raises OSError when the key can be
    neither read nor created, TypeError/ValueError when the record is not JSON data.
    """
    body = {k: v for k, v in record.items() if k != SEAL_FIELD}
    return {**body, SEAL_FIELD: _PREFIX + _mac(_key(key_file), body)}


def check(record: Any, *, key_file: Path | None = None) -> bool:
    """Whether ``record`` is a mapping whose ``seal`` is the seal of the rest of it.

    False for a missing, malformed or wrong seal, for data that is not JSON, and when
    the key cannot be read (a record is never trusted by default).
    """
    if not isinstance(record, Mapping):
        return False
    found = record.get(SEAL_FIELD)
    if not isinstance(found, str) or not found.startswith(_PREFIX):
        return False
    body = {k: v for k, v in record.items() if k != SEAL_FIELD}
    try:
        expected = _PREFIX + _mac(_key(key_file), body)
    except (OSError, TypeError, ValueError):
        return False
    return hmac.compare_digest(found.encode("utf-8"), expected.encode("utf-8"))


def read_sealed(path: Path, limit: int = 64 * 1024) -> dict[str, Any]:
    """The JSON record at ``path`` if maker sealed it; ``{}`` if there is none, it cannot
    be read, or it is not sealed by maker (a file written by hand or by a model)."""
    from maker.core.bounded import read_text_file
    from maker.errors import MakerError

    try:
        data = json.loads(read_text_file(path, limit))
    except (OSError, ValueError, MakerError):
        return {}
    return data if isinstance(data, dict) and check(data) else {}


def _canonical(body: Mapping[str, Any]) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _mac(key: bytes, body: Mapping[str, Any]) -> str:
    return hmac.new(key, _canonical(body), hashlib.sha256).hexdigest()


def _key(key_file: Path | None) -> bytes:
    """The key, created on first use: written to a private temporary file, then linked
    into place, so that two processes racing to create it agree on one key."""
    path = key_file or key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(_KEY_BYTES))
            out.flush()
            os.fsync(out.fileno())
        try:
            os.link(tmp, path)  # fails if another process created the key first
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    return _read_key(path)


_KEYS: dict[Path, tuple[tuple[int, int, int, int], bytes]] = {}


def _read_key(path: Path) -> bytes:
    """The key at ``path``, read again only when the file changed (a long run checks
    thousands of seals; a deleted or replaced key is seen at the next check)."""
    st = os.stat(path)
    stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _KEYS.get(path)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    key = path.read_bytes()
    if len(key) < _KEY_BYTES:
        raise ValueError(f"{path} is not a maker sealing key ({len(key)} bytes); delete it "
                         "and run `maker verify` again to make a new one")
    _KEYS[path] = (stamp, key)
    return key
