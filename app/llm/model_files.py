"""GGUF model files already on this computer, used where they are (never copied).

Other programs keep their models in known folders: LM Studio (``~/.lmstudio/models``, before 0.3
``~/.cache/lm-studio/models``), GPT4All (its data folder), Ollama (content-addressed blobs named by its manifests, in
the user's ``~/.ollama/models`` or the system service's ``/usr/share/ollama/.ollama/models``, or ``$OLLAMA_MODELS``)
and the Hugging Face cache (``~/.cache/huggingface/hub``, or ``$HF_HUB_CACHE``/``$HF_HOME``). A file counts only if it
starts with the GGUF magic and a known version: an extension says nothing (Ollama's blobs have none, and a
half-downloaded ``.gguf`` is not a model).
"""

from __future__ import annotations

import enum
import json
import os
import re
import struct
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

GGUF_MAGIC: Final = b"GGUF"
GGUF_VERSIONS: Final = frozenset({2, 3})
"""GGUF versions llama.cpp reads (version 1 files are refused by it since 2023)."""
OLLAMA_MODEL_LAYER: Final = "application/vnd.ollama.image.model"
OLLAMA_SERVICE_MODELS: Final = Path("/usr/share/ollama/.ollama/models")
"""Where Ollama's Linux service (its own ``ollama`` user) keeps the models it pulled."""
# The parts after the first of a split model (llama.cpp loads the rest from the first): model-00002-of-00003.gguf.
_LATER_SPLIT_PART: Final = re.compile(r"-(\d{5})-of-\d{5}\.gguf$", re.IGNORECASE)


class ModelSource(enum.StrEnum):
    LM_STUDIO = "LM Studio"
    GPT4ALL = "GPT4All"
    OLLAMA = "Ollama"
    HUGGING_FACE = "Hugging Face"
    CHOSEN = "chosen file"


@dataclass(frozen=True)
class ModelFile:
    """One model file: where it is, the name to show, its size in bytes, and which program keeps it."""

    path: Path
    name: str
    size: int
    source: ModelSource


class NotAModelFile(ValueError):
    """The file is not a GGUF model (the message says what it is)."""


def is_gguf(path: Path) -> bool:
    """Whether ``path`` is a file that starts like a GGUF model (magic, then a version llama.cpp reads)."""
    try:
        with path.open("rb") as f:
            head = f.read(8)
    except OSError:
        return False
    return len(head) == 8 and head[:4] == GGUF_MAGIC and struct.unpack("<I", head[4:])[0] in GGUF_VERSIONS


def chosen_model_file(path: Path) -> ModelFile:
    """A file the user picked, once it is checked to be a GGUF model; NotAModelFile says why it is not."""
    if not path.is_file():
        raise NotAModelFile(f"{path} is not a file")
    if not is_gguf(path):
        raise NotAModelFile(f"{path.name} is not a GGUF model (it does not start with the GGUF header)")
    return ModelFile(path, path.stem, path.stat().st_size, ModelSource.CHOSEN)


def find_model_files(home: Path | None = None, env: Mapping[str, str] | None = None, *,
                     ollama_service: Path = OLLAMA_SERVICE_MODELS) -> list[ModelFile]:
    """The GGUF models other programs keep on this computer, each once (by real path), by source then name."""
    home = home if home is not None else Path.home()
    env = env if env is not None else os.environ
    found: dict[Path, ModelFile] = {}
    for model in _all_candidates(home, env, ollama_service):
        real = model.path.resolve()
        if real not in found and is_gguf(model.path):
            found[real] = model
    order = list(ModelSource)
    return sorted(found.values(), key=lambda m: (order.index(m.source), m.name.lower()))


def _all_candidates(home: Path, env: Mapping[str, str], ollama_service: Path) -> Iterator[ModelFile]:
    for folder in lm_studio_folders(home):
        yield from _gguf_files_under(folder, ModelSource.LM_STUDIO)
    for folder in gpt4all_folders(home, env):
        yield from _gguf_files_under(folder, ModelSource.GPT4ALL)
    for folder in ollama_folders(home, env, ollama_service):
        yield from ollama_models(folder)
    yield from hugging_face_models(hugging_face_cache(home, env))


def lm_studio_folders(home: Path) -> list[Path]:
    return [home / ".lmstudio" / "models", home / ".cache" / "lm-studio" / "models"]


def gpt4all_folders(home: Path, env: Mapping[str, str]) -> list[Path]:
    if sys.platform == "win32":
        base = Path(env.get("LOCALAPPDATA") or home / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    else:
        base = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    return [base / "nomic.ai" / "GPT4All"]


def ollama_folders(home: Path, env: Mapping[str, str], service: Path = OLLAMA_SERVICE_MODELS) -> list[Path]:
    """Ollama's models folders: ``$OLLAMA_MODELS`` if set, the user's, and the Linux service's."""
    folders = [Path(env["OLLAMA_MODELS"])] if env.get("OLLAMA_MODELS") else []
    return [*folders, home / ".ollama" / "models", service]


def hugging_face_cache(home: Path, env: Mapping[str, str]) -> Path:
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"])
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]) / "hub"
    return Path(env.get("XDG_CACHE_HOME") or home / ".cache") / "huggingface" / "hub"


def _gguf_files_under(folder: Path, source: ModelSource) -> Iterator[ModelFile]:
    """Every ``*.gguf`` under ``folder`` but vision projectors and the later parts of split models."""
    for path in _walk_gguf(folder):
        if path.name.lower().startswith("mmproj") or _is_later_split_part(path.name):
            continue
        yield ModelFile(path, path.stem, _size(path), source)


def _walk_gguf(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return (p for p in folder.rglob("*") if p.suffix.lower() == ".gguf" and p.is_file())


def _is_later_split_part(name: str) -> bool:
    match = _LATER_SPLIT_PART.search(name)
    return match is not None and int(match.group(1)) > 1


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def ollama_models(models: Path) -> Iterator[ModelFile]:
    """Ollama's models in ``models``: each manifest (``manifests/<registry>/<namespace>/<model>/<tag>``) names its
    weights in the layer of type :data:`OLLAMA_MODEL_LAYER`, kept as ``blobs/sha256-<hex>``."""
    manifests = models / "manifests"
    if not manifests.is_dir():
        return
    for manifest in sorted(p for p in manifests.rglob("*") if p.is_file()):
        blob = _ollama_model_blob(manifest, models / "blobs")
        if blob is not None:
            yield ModelFile(blob, _ollama_name(manifest.relative_to(manifests)), _size(blob), ModelSource.OLLAMA)


def _ollama_model_blob(manifest: Path, blobs: Path) -> Path | None:
    try:
        layers = json.loads(manifest.read_text(encoding="utf-8")).get("layers", [])
    except (OSError, ValueError, AttributeError):
        return None
    for layer in layers if isinstance(layers, list) else []:
        digest = layer.get("digest", "") if isinstance(layer, dict) else ""
        if layer.get("mediaType") == OLLAMA_MODEL_LAYER and re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
            blob = blobs / digest.replace(":", "-")
            return blob if blob.is_file() else None
    return None


def _ollama_name(relative: Path) -> str:
    """``registry.ollama.ai/library/qwen2.5/1.5b`` -> ``qwen2.5:1.5b``; other namespaces and registries stay."""
    *where, model, tag = relative.parts
    if where[:1] == ["registry.ollama.ai"]:
        where = where[1:]
    if where == ["library"]:
        where = []
    return "/".join([*where, model]) + f":{tag}"


def hugging_face_models(hub: Path) -> Iterator[ModelFile]:
    """GGUF files in the Hugging Face cache: ``models--<owner>--<name>/snapshots/<revision>/**.gguf`` (links to
    the blobs), named ``owner/name: file``."""
    if not hub.is_dir():
        return
    for repo in sorted(hub.glob("models--*")):
        repo_name = repo.name.removeprefix("models--").replace("--", "/")
        for path in _gguf_files_under(repo / "snapshots", ModelSource.HUGGING_FACE):
            yield ModelFile(path.path, f"{repo_name}: {path.name}", path.size, ModelSource.HUGGING_FACE)
