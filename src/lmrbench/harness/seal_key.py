"""The key that seals a run's reports, kept outside every run folder.

Each sandbox command gets a random key of its own; where its evidence is written, that key is kept only wrapped
by this machine's seal key (``wrap``), and each kept run is authenticated (``authenticate``) with the same key,
so whoever can write a run folder can neither re-seal a forged report nor edit the record of how a run ended.
(The machine that writes the evidence wraps: a command run on a Ray node is sealed by the head's key.)
The key lives in ``<data dir>/seal.key`` (``defaults.data_root``), or in the file ``$LMRBENCH_SEAL_KEY_FILE``
names: hand that file to an auditor, who regrades with ``lmrbench regrade RUN --seal-key FILE``.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from lmrbench.defaults import data_root
from lmrbench.errors import LmrError
from lmrbench.fsutil import read_capped

KEY_ENV = "LMRBENCH_SEAL_KEY_FILE"
"""The variable naming another seal key file (an auditor's copy of a machine's key)."""
KEY_BYTES = 32


def key_path() -> Path:
    """Where the seal key is read from (and, on this machine, made)."""
    return Path(os.environ[KEY_ENV]) if os.environ.get(KEY_ENV) else data_root() / "seal.key"


def machine_key(*, create: bool = True) -> bytes:
    """The seal key; made once (readable by its owner alone) when ``create`` and there is none. LmrError naming
    the file when it is missing (without ``create``) or not a key."""
    path = key_path()
    if not path.is_file():
        if not create:
            raise LmrError("no seal key here: the runs were sealed with another machine's key; pass that "
                           "machine's key file with --seal-key", path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
        try:
            os.link(tmp, path)  # never over a key another process made meanwhile: runs sealed with it stay sealed
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    key = read_capped(path, 4096)
    if len(key) < KEY_BYTES:
        raise LmrError(f"not a seal key (fewer than {KEY_BYTES} bytes)", path)
    return key


def _pad(nonce: bytes, create: bool) -> bytes:
    return hmac.new(machine_key(create=create), b"lmrbench run key\0" + nonce, hashlib.sha512).digest()


def wrap(key: bytes) -> tuple[str, str]:
    """(nonce, wrapped key), hex: a command's key (at most 64 bytes) as its evidence keeps it."""
    if len(key) > 64:
        raise ValueError("a run key is at most 64 bytes")
    nonce = secrets.token_bytes(16)
    return nonce.hex(), bytes(a ^ b for a, b in zip(key, _pad(nonce, True), strict=False)).hex()


def unwrap(nonce: str, wrapped: str) -> bytes:
    """The key ``wrap`` gave (nonce, wrapped) for; LmrError when this machine holds no seal key."""
    data = bytes.fromhex(wrapped)
    return bytes(a ^ b for a, b in zip(data, _pad(bytes.fromhex(nonce), False), strict=False))


def authenticate(data: bytes, *, create: bool = True) -> str:
    """The machine key's tag of ``data`` (hex): what a kept record is checked against."""
    return hmac.new(machine_key(create=create), b"lmrbench evidence\0" + data, hashlib.sha256).hexdigest()
