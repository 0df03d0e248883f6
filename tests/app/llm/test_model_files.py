"""Finding the GGUF models other programs keep, in their own folder layouts built under tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.llm.model_files import (
    ModelFile,
    ModelSource,
    NotAModelFile,
    chosen_model_file,
    find_model_files,
    is_gguf,
)
from tests.app.llm.gguf import write_gguf

DIGEST = "ab" * 32


def ollama_manifest(models: Path, name: str, tag: str, digest: str, *, namespace: str = "library") -> Path:
    manifest = models / "manifests" / "registry.ollama.ai" / namespace / name / tag
    manifest.parent.mkdir(parents=True, exist_ok=True)
    manifest.write_text(json.dumps({"schemaVersion": 2, "layers": [
        {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:" + "cd" * 32, "size": 10},
        {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}", "size": 100},
    ]}))
    return manifest


def found(home: Path, *, service: Path | None = None, **env: str) -> list[tuple[ModelSource, str, Path, int]]:
    service = service or home / "no-ollama-service"
    return [(m.source, m.name, m.path, m.size) for m in find_model_files(home, env, ollama_service=service)]


def test_the_header_decides_not_the_extension(tmp_path: Path) -> None:
    assert is_gguf(write_gguf(tmp_path / "blob-without-extension"))
    (tmp_path / "fake.gguf").write_text("<html>not found</html>")
    (tmp_path / "old.gguf").write_bytes(b"GGUF\x01\x00\x00\x00rest")
    (tmp_path / "short.gguf").write_bytes(b"GGU")
    assert not any(is_gguf(tmp_path / n) for n in ("fake.gguf", "old.gguf", "short.gguf", "missing.gguf"))


def test_lm_studio_and_gpt4all_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    a = write_gguf(home / ".lmstudio/models/lmstudio-community/Qwen2.5-1.5B-GGUF/Qwen2.5-1.5B-Q4_K_M.gguf", 100)
    b = write_gguf(home / ".cache/lm-studio/models/TheBloke/old/old-model.Q4_0.gguf", 80)
    write_gguf(home / ".lmstudio/models/x/vision/mmproj-model-f16.gguf")  # a vision projector, not a chat model
    first = write_gguf(home / ".lmstudio/models/x/big/big-00001-of-00002.gguf", 90)
    write_gguf(home / ".lmstudio/models/x/big/big-00002-of-00002.gguf")  # loaded through the first part
    (home / ".lmstudio/models/x/broken.gguf").write_text("partial download")
    c = write_gguf(home / ".local/share/nomic.ai/GPT4All/Meta-Llama-3-8B-Instruct.Q4_0.gguf", 70)
    assert found(home) == [
        (ModelSource.LM_STUDIO, "big-00001-of-00002", first, 90),
        (ModelSource.LM_STUDIO, "old-model.Q4_0", b, 80),
        (ModelSource.LM_STUDIO, "Qwen2.5-1.5B-Q4_K_M", a, 100),
        (ModelSource.GPT4ALL, "Meta-Llama-3-8B-Instruct.Q4_0", c, 70),
    ]


def test_ollama_models_are_their_blobs_named_by_the_manifests(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user = home / ".ollama/models"
    blob = write_gguf(user / "blobs" / f"sha256-{DIGEST}", 120)
    ollama_manifest(user, "qwen2.5", "1.5b", DIGEST)
    ollama_manifest(user, "mymodel", "latest", DIGEST, namespace="someone")  # the same blob: listed once
    ollama_manifest(user, "gone", "latest", "ef" * 32)  # its blob was removed
    (user / "manifests/registry.ollama.ai/library/junk").mkdir(parents=True)
    (user / "manifests/registry.ollama.ai/library/junk/latest").write_text("{not json")
    service = tmp_path / "usr/share/ollama/.ollama/models"  # the Linux service's folder
    other = write_gguf(service / "blobs" / f"sha256-{'12' * 32}", 60)
    ollama_manifest(service, "gemma3", "1b", "12" * 32)
    moved = tmp_path / "elsewhere"  # $OLLAMA_MODELS
    third = write_gguf(moved / "blobs" / f"sha256-{'34' * 32}", 50)
    ollama_manifest(moved, "llama3.2", "3b", "34" * 32)
    assert found(home, service=service, OLLAMA_MODELS=str(moved)) == [
        (ModelSource.OLLAMA, "gemma3:1b", other, 60),
        (ModelSource.OLLAMA, "llama3.2:3b", third, 50),
        (ModelSource.OLLAMA, "qwen2.5:1.5b", blob, 120),
    ]


def test_hugging_face_cache_snapshots_link_to_blobs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = home / ".cache/huggingface/hub/models--Qwen--Qwen2.5-1.5B-Instruct-GGUF"
    blob = write_gguf(repo / "blobs" / DIGEST, 150)
    for revision in ("91cad51", "aaaaaaa"):
        link = repo / "snapshots" / revision / "qwen2.5-1.5b-instruct-q4_k_m.gguf"
        link.parent.mkdir(parents=True)
        link.symlink_to(blob)
    files = found(home)
    assert len(files) == 1
    source, name, path, size = files[0]
    assert (source, name, size) == (ModelSource.HUGGING_FACE,
                                      "Qwen/Qwen2.5-1.5B-Instruct-GGUF: qwen2.5-1.5b-instruct-q4_k_m", 150)
    assert path.resolve() == blob.resolve()  # used in place: the path leads to the cached blob


def test_hf_home_moves_the_cache(tmp_path: Path) -> None:
    blob = write_gguf(tmp_path / "hf/hub/models--a--b/snapshots/r/m.gguf")
    assert found(tmp_path / "home", HF_HOME=str(tmp_path / "hf")) == [(ModelSource.HUGGING_FACE, "a/b: m", blob, 64)]


def test_nothing_installed_finds_nothing(tmp_path: Path) -> None:
    assert found(tmp_path / "empty-home") == []


def test_a_chosen_file_is_checked_not_trusted(tmp_path: Path) -> None:
    model = write_gguf(tmp_path / "my model.bin", 99)
    assert chosen_model_file(model) == ModelFile(model, "my model", 99, ModelSource.CHOSEN)
    (tmp_path / "notes.gguf").write_text("hello")
    with pytest.raises(NotAModelFile, match=r"notes\.gguf is not a GGUF model"):
        chosen_model_file(tmp_path / "notes.gguf")
    with pytest.raises(NotAModelFile, match="is not a file"):
        chosen_model_file(tmp_path)
