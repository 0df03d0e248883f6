"""Downloading a model from a loopback host that behaves like Hugging Face (hf_host.py): the offer before any byte,
the redirect, resuming after a dropped connection or a cancel, If-Range, the checksum, the free space; and the real
0.5B test model (scripts/real_model.py) for the throughput."""

from __future__ import annotations

import asyncio
import hashlib
import stat
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from app.downloads import (
    ChecksumMismatch,
    DownloadableModel,
    DownloadCancelled,
    DownloadError,
    DownloadProgress,
    NotEnoughSpace,
    download,
    part_path,
    prepare_download,
)
from app.llm.recommended_model import RECOMMENDED_MODEL
from tests.app.llm.gguf import write_gguf
from tests.app.llm.hf_host import HuggingFaceLikeHost, hugging_face_like_host

MB = 1024 * 1024


@pytest.fixture
def host() -> Iterator[HuggingFaceLikeHost]:
    with hugging_face_like_host() as server:
        yield server


def model_on(host: HuggingFaceLikeHost, path: Path, *, sha256: str | None = "known", size: int | None = None,
             **faults: object) -> DownloadableModel:
    hosted = host.host(path, **faults)  # type: ignore[arg-type]
    return DownloadableModel(name="Tiny test model", repo="test/Tiny-GGUF", file=path.name, revision="main",
                             size=size if size is not None else hosted.size,
                             sha256=hosted.sha256 if sha256 == "known" else sha256, licence="Apache-2.0",
                             licence_url="https://example.invalid/LICENSE", host=host.url)


def content(path: Path) -> bytes:
    return path.read_bytes()


def size(path: Path) -> int:
    return path.stat().st_size


def leftovers(folder: Path, name: str) -> list[Path]:
    return list(folder.glob(f"{name}*"))


@pytest.fixture
def served(tmp_path: Path) -> Path:
    return write_gguf(tmp_path / "host" / "tiny-q4_k_m.gguf", 3 * MB + 123)


def test_the_recommended_model_is_pinned_to_a_revision_with_its_size_and_sha256() -> None:
    assert RECOMMENDED_MODEL.url == ("https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/"
                                     "91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf")
    assert RECOMMENDED_MODEL.licence == "Apache-2.0"
    assert RECOMMENDED_MODEL.sha256 is not None
    assert len(RECOMMENDED_MODEL.sha256) == 64
    assert 1.0e9 < RECOMMENDED_MODEL.size < 1.2e9


async def test_the_offer_says_name_size_licence_and_space_before_any_byte(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    model = model_on(host, served, sha256=None)  # Madoi knows no sha256: the host's X-Linked-Etag is used
    offer = await prepare_download(model, tmp_path / "models" / served.name)
    assert (offer.model.name, offer.model.licence, offer.size, offer.needs) == (
        "Tiny test model", "Apache-2.0", size(served), size(served))
    assert offer.sha256 == hashlib.sha256(content(served)).hexdigest()
    assert offer.fits
    assert host.gets(served.name) == []  # a HEAD only
    assert not (tmp_path / "models").exists()


async def test_download_follows_the_redirect_reports_progress_and_checks_the_file(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    offer = await prepare_download(model_on(host, served), tmp_path / "models" / served.name)
    seen: list[DownloadProgress] = []
    path = await download(offer, progress=seen.append)
    assert content(path) == content(served)
    assert not part_path(path).exists()
    assert not path.with_name(path.name + ".part.json").exists()
    assert seen[-1].done == seen[-1].total == offer.size
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # as every file under the data directory
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


async def test_a_dropped_connection_continues_from_where_it_stopped(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    offer = await prepare_download(model_on(host, served, drop_after=[MB, 512 * 1024]),
                                   tmp_path / served.name)
    path = await download(offer, retry_delay_s=0.01)
    assert content(path) == content(served)
    first, second, third = host.gets(served.name)
    assert "range" not in first
    assert second["range"] == f"bytes={MB}-"
    assert third["range"] == f"bytes={MB + 512 * 1024}-"
    assert second["if-range"] == f'"{host.content_etag(served.name)}"'


async def test_a_cancelled_download_resumes_in_a_later_call(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    model = model_on(host, served, rate=10 * MB)
    destination = tmp_path / served.name
    cancel = asyncio.Event()

    def cancel_after_half_a_megabyte(p: DownloadProgress) -> None:
        if p.done >= MB // 2:
            cancel.set()

    with pytest.raises(DownloadCancelled, match="continues from there next time"):
        await download(await prepare_download(model, destination), progress=cancel_after_half_a_megabyte,
                       cancel=cancel)
    kept = size(part_path(destination))
    assert MB // 2 <= kept < size(served)
    assert stat.S_IMODE(part_path(destination).stat().st_mode) == 0o600  # what is kept for later is private
    assert not destination.exists()
    again = await prepare_download(model, destination)  # the app was closed and the user agreed again
    assert again.already_have == kept
    assert again.needs == size(served) - kept
    host.files[served.name].rate = None
    assert content(await download(again)) == content(served)
    assert host.gets(served.name)[-1]["range"] == f"bytes={kept}-"


async def test_a_file_changed_on_the_host_is_fetched_whole_again(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    model = model_on(host, served, rate=10 * MB)
    destination = tmp_path / served.name
    cancel = asyncio.Event()
    with pytest.raises(DownloadCancelled):
        await download(await prepare_download(model, destination), cancel=cancel,
                       progress=lambda p: cancel.set() if p.done >= MB // 2 else None)
    host.files[served.name].rate = None
    old_etag = host.content_etag(served.name)
    host.reupload(served.name)  # the same bytes with a new ETag
    path = await download(await prepare_download(model, destination))
    assert host.gets(served.name)[-1]["if-range"] == f'"{old_etag}"'  # answered with the whole file (200)
    assert content(path) == content(served)


async def test_a_wrong_checksum_deletes_the_download_and_says_so(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    model = model_on(host, served, sha256=None)
    host.files[served.name].sha256 = "0" * 64  # the host claims a sha256 that the bytes do not have
    destination = tmp_path / served.name
    offer = await prepare_download(model, destination)
    with pytest.raises(ChecksumMismatch, match="the download was deleted"):
        await download(offer)
    assert leftovers(tmp_path, served.name) == []


async def test_a_host_offering_another_file_than_the_pinned_one_is_refused(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match=r"another tiny-q4_k_m\.gguf"):
        await prepare_download(model_on(host, served, sha256="1" * 64), tmp_path / served.name)
    with pytest.raises(DownloadError, match="not the 5 Madoi knows"):
        await prepare_download(model_on(host, served, size=5), tmp_path / served.name)
    missing = DownloadableModel("x", "test/x", "missing.gguf", "main", 1, None, "MIT", "", host=host.url)
    with pytest.raises(DownloadError, match="answered 404"):
        await prepare_download(missing, tmp_path / "missing.gguf")
    assert host.gets(served.name) == []


async def test_no_byte_is_fetched_without_the_space_for_the_file(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    petabyte = 10**15
    offer = await prepare_download(model_on(host, served, size=petabyte, declared_size=petabyte),
                                   tmp_path / served.name)
    assert not offer.fits
    with pytest.raises(NotEnoughSpace, match=r"needs 1000000\.00 GB"):
        await download(offer)
    assert host.gets(served.name) == []


@pytest.mark.slow
async def test_the_real_model_file_downloads_and_resumes_on_loopback(
        host: HuggingFaceLikeHost, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.realmodel.conftest import real_model

    source = real_model.paths().model
    if not real_model.paths().model_ready():
        pytest.skip(f"the test model is not assembled ({source}): python3 scripts/real_model.py --model-only")
    dropped_at = 200 * MB
    model = model_on(host, source, sha256=None, drop_after=[dropped_at])
    host.files[source.name].sha256 = real_model.MODEL_SHA256  # known: the host need not hash 491 MB per run
    offer = await prepare_download(model, tmp_path / source.name)
    began = time.monotonic()
    path = await download(offer, retry_delay_s=0.01)
    took = time.monotonic() - began
    assert size(path) == real_model.MODEL_SIZE
    assert [h.get("range") for h in host.gets(source.name)] == [None, f"bytes={dropped_at}-"]
    with capsys.disabled():
        print(f"\n{source.name}: {offer.size / MB:.0f} MB in {took:.1f} s "
              f"({offer.size / MB / took:.0f} MB/s, hashed on the way), resumed once at {dropped_at // MB} MB")


async def test_a_github_release_file_is_checked_by_the_pinned_sha256_alone(
        host: HuggingFaceLikeHost, served: Path, tmp_path: Path) -> None:
    hosted = host.host(served)
    pinned = DownloadableModel("Tiny release", "owner/tiny", served.name, "files-v1", hosted.size, hosted.sha256,
                               "MIT", "", host=host.url, layout="github")
    assert pinned.url == f"{host.url}/owner/tiny/releases/download/files-v1/{served.name}"
    offer = await prepare_download(pinned, tmp_path / served.name)  # no X-Linked-*: the content's Content-Length
    assert (offer.size, offer.sha256) == (size(served), hosted.sha256)
    assert content(await download(offer)) == content(served)
    with pytest.raises(DownloadError, match="gives no sha256"):  # GitHub names none: an unpinned file is refused
        await prepare_download(replace(pinned, sha256=None), tmp_path / "other" / served.name)
    host.files[served.name].sha256 = "0" * 64
    with pytest.raises(ChecksumMismatch):  # the bytes are checked against the pin, not the host's word
        await download(await prepare_download(replace(pinned, sha256="0" * 64), tmp_path / "again" / served.name))
