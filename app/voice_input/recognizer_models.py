"""Speech models the user downloads from the settings: which there are, where they go, and the download itself.

whisper.cpp's multilingual models recognize Japanese and English far better than PocketSphinx's US English model
(which needs no download). They are downloaded only when the user asks, after being told the size; the file is
written beside its final place, its size and SHA-1 are checked against the values whisper.cpp publishes for it
(models/README.md in its repository), and only then is it renamed into place: a partial or altered file is never
loaded (whisper.cpp accepts any file and may crash on it later).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, TypeAlias

from companions.common.private_files import private_dir, private_file

RecognizerChoice: TypeAlias = Literal["pocketsphinx", "whisper-tiny", "whisper-base"]
WHISPER_MAGIC: Final = b"lmgg"  # 0x67676d6c, little-endian: the first word of every ggml model file
CHUNK: Final = 1 << 16
BASE_URL: Final = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/"


@dataclass(frozen=True)
class SpeechModel:
    choice: RecognizerChoice
    file: str
    size: int  # bytes
    sha1: str
    url: str

    @property
    def megabytes(self) -> int:
        return round(self.size / 1_000_000)


MODELS: Final[dict[RecognizerChoice, SpeechModel]] = {
    "whisper-tiny": SpeechModel("whisper-tiny", "ggml-tiny.bin", 77_691_713,
                                "bd577a113a864445d4c299885e0cb97d4ba92b5f", BASE_URL + "ggml-tiny.bin"),
    "whisper-base": SpeechModel("whisper-base", "ggml-base.bin", 147_951_465,
                                "465707469ff3a37a2b9b8d8f89f2f99de7299dac", BASE_URL + "ggml-base.bin"),
}


class DownloadFailed(Exception):
    """The model could not be downloaded or is not the expected file; ``str(err)`` says why, in words."""


def models_dir(data_dir: Path) -> Path:
    return data_dir / "speech-models"


def model_path(data_dir: Path, model: SpeechModel) -> Path:
    return models_dir(data_dir) / model.file


def installed(data_dir: Path, model: SpeechModel) -> bool:
    """The model's file is in place with the expected size (its checksum was checked when it was put there)."""
    path = model_path(data_dir, model)
    return path.is_file() and path.stat().st_size == model.size


def download(model: SpeechModel, data_dir: Path, *, progress: Callable[[int, int], None] | None = None,
             cancelled: Callable[[], bool] | None = None, url: str | None = None, timeout: float = 30.0) -> Path:
    """Downloads ``model`` into ``data_dir`` (blocking: call it on a thread). ``progress(done, total)`` is called
    as bytes arrive; ``cancelled()`` true stops it. Returns the model's path; raises :class:`DownloadFailed`."""
    target = model_path(data_dir, model)
    private_dir(target.parent)
    partial = target.with_name(target.name + ".part")
    digest = hashlib.sha1(usedforsecurity=False)
    done = 0
    try:
        private_file(partial)  # 0600, like every file of Madoi's
        with urllib.request.urlopen(url or model.url, timeout=timeout) as response, partial.open("wb") as out:
            length = response.headers.get("Content-Length")
            if length is not None and int(length) != model.size:
                raise DownloadFailed(f"the server offers {int(length):,} bytes where {model.file} has "
                                     f"{model.size:,}: not the expected file")
            while chunk := response.read(CHUNK):
                if cancelled is not None and cancelled():
                    raise DownloadFailed("the download was cancelled")
                done += len(chunk)
                if done > model.size:
                    raise DownloadFailed(f"more than the {model.size:,} bytes of {model.file} came: not the "
                                         "expected file")
                digest.update(chunk)
                out.write(chunk)
                if progress is not None:
                    progress(done, model.size)
            out.flush()
            os.fsync(out.fileno())
        if done != model.size:
            raise DownloadFailed(f"the download stopped after {done:,} of {model.size:,} bytes")
        if digest.hexdigest() != model.sha1:
            raise DownloadFailed(f"{model.file} is not the published file (its SHA-1 checksum differs): "
                                 "it was not kept")
        os.replace(partial, target)
    except DownloadFailed:
        partial.unlink(missing_ok=True)
        raise
    except (OSError, ValueError) as err:  # URLError, HTTPError, timeouts, a full disk
        partial.unlink(missing_ok=True)
        raise DownloadFailed(f"the download failed: {getattr(err, 'reason', None) or err}") from err
    return target


def remove(model: SpeechModel, data_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        model_path(data_dir, model).unlink()
