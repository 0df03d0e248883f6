"""The neural voice Kokoro-82M as a download: which files, from where, checked by what, and where they go.

Two files of the release ``model-files-v1.0`` of thewh1teagle/kokoro-onnx (GitHub), pinned by size and sha256 (the
release page publishes none; the figures are those a dozen public projects pin for the same files, and the model's
equal the file assembled from PyPI for the tests, scripts/kokoro_model.py):

- ``kokoro-v1.0.int8.onnx``: hexgrad's Kokoro-82M v1.0 (Apache-2.0) exported to ONNX and quantized to int8 by
  thewh1teagle (MIT), 92.4 MB; it runs on onnxruntime, the app's own;
- ``voices-v1.0.bin``: the voices' style vectors (Apache-2.0, hexgrad), a NumPy .npz of 54 voices, 28.2 MB; the
  Japanese ones (``jf_*``, ``jm_*``) are offered (app/devices/kokoro_voice.py says why not the English ones).

They are downloaded only after the user agreed in the settings (ui/settings/kokoro_box.py shows the size and the
licences), by the app's downloader (app/downloads.py: progress, cancel, resume, free space, sha256), into
``<data dir>/voices/kokoro/``. Nothing of Kokoro is needed to start: without the files its voices are not offered
and a line asking for one is said by the default voice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

from app.downloads import DownloadableModel, DownloadOffer, DownloadProgress, download, prepare_download

RELEASE: Final = "model-files-v1.0"
LICENCE: Final = "Apache-2.0"
LICENCE_URL: Final = "https://huggingface.co/hexgrad/Kokoro-82M"
EXPORT_LICENCE: Final = "MIT"  # the ONNX export (thewh1teagle/kokoro-onnx)
KOKORO_MODEL: Final = DownloadableModel(
    name="Kokoro-82M v1.0 (int8 ONNX)", repo="thewh1teagle/kokoro-onnx", file="kokoro-v1.0.int8.onnx",
    revision=RELEASE, size=92_361_271, sha256="6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
    licence=LICENCE, licence_url=LICENCE_URL, host="https://github.com", layout="github")
KOKORO_VOICES: Final = DownloadableModel(
    name="Kokoro-82M v1.0 voices", repo="thewh1teagle/kokoro-onnx", file="voices-v1.0.bin", revision=RELEASE,
    size=28_214_398, sha256="bca610b8308e8d99f32e6fe4197e7ec01679264efed0cac9140fe9c29f1fbf7d",
    licence=LICENCE, licence_url=LICENCE_URL, host="https://github.com", layout="github")


@dataclass(frozen=True)
class KokoroFiles:
    """The model and the voices (another host, or other voices, in tests)."""

    model: DownloadableModel = KOKORO_MODEL
    voices: DownloadableModel = KOKORO_VOICES

    @property
    def size(self) -> int:
        return self.model.size + self.voices.size

    def on_host(self, host: str) -> KokoroFiles:
        return KokoroFiles(replace(self.model, host=host), replace(self.voices, host=host))


KOKORO_FILES: Final = KokoroFiles()


def kokoro_dir(data_dir: Path) -> Path:
    return data_dir / "voices" / "kokoro"


def kokoro_paths(data_dir: Path, files: KokoroFiles = KOKORO_FILES) -> tuple[Path, Path]:
    """Where the model and the voices are once downloaded."""
    folder = kokoro_dir(data_dir)
    return folder / files.model.file, folder / files.voices.file


def kokoro_installed(data_dir: Path, files: KokoroFiles = KOKORO_FILES) -> bool:
    """Both files are in place with their size (the downloader renamed them there only once their sha256 was
    checked)."""
    return all(path.is_file() and path.stat().st_size == wanted.size
               for path, wanted in zip(kokoro_paths(data_dir, files), (files.model, files.voices), strict=True))


async def kokoro_offers(data_dir: Path, files: KokoroFiles = KOKORO_FILES) -> list[DownloadOffer]:
    """What the user is asked to agree to: the files still missing (the host is asked, nothing is downloaded)."""
    targets = zip((files.model, files.voices), kokoro_paths(data_dir, files), strict=True)
    return [await prepare_download(model, path) for model, path in targets
            if not (path.is_file() and path.stat().st_size == model.size)]


async def download_kokoro(offers: Sequence[DownloadOffer], progress: Callable[[DownloadProgress], None],
                          cancel: asyncio.Event) -> None:
    """Downloads the offered files one after the other; ``progress`` counts the bytes of them all."""
    total = sum(offer.size for offer in offers)
    before = 0
    for offer in offers:
        done_before = before

        def report(step: DownloadProgress, done_before: int = done_before) -> None:
            progress(DownloadProgress(done_before + step.done, total, step.bytes_per_s))

        await download(offer, progress=report, cancel=cancel)
        before += offer.size
