"""The model Madoi offers to download on first run, when no model server and no model file is found.

Qwen2.5-1.5B-Instruct, Q4_K_M GGUF, from Qwen's own repository. The three candidates at this size, weighed on what
their model cards publish (licence, access, files) and on their makers' published evaluations:

- **Qwen2.5-1.5B-Instruct** (Qwen): Apache-2.0, a public (ungated) repository with official GGUF quantizations.
  Japanese is among the 29+ languages of its training and of its multilingual evaluation (Qwen2.5 technical report,
  arXiv 2412.15115), and its English instruction-following and knowledge figures at 1.5B (MMLU-redux, GSM8K,
  IFEval in that report) are the reference the other two compare themselves to. Q4_K_M is 1.12 GB; loaded with an
  8192-token context it needs ~1.5 GB of memory (the weights, ~230 MB of cache: 28 layers x 2 KV heads x 128, and
  llama.cpp's compute buffer).
- **TinySwallow-1.5B-Instruct** (Sakana AI: Qwen2.5-32B-Instruct distilled into Qwen2.5-1.5B by TAID, then
  Japanese pre-training): Sakana AI's evaluation puts its Japanese above Qwen2.5-1.5B-Instruct's, but its model card
  says it is "for research and development purposes only ... not intended for commercial use", its repositories
  carry the Gemma Terms of Use next to Apache-2.0 (its instruction data was generated with Gemma), it publishes no
  English evaluation, and its GGUF comes only as Q5_K_M (1.13 GB) and Q8_0. A user may still pick it (found on disk
  or chosen); Madoi does not recommend it to everyone.
- **gemma-3-1b-it** (Google): the Gemma Terms of Use (use restrictions, not an open licence) and a gated
  repository: the download needs a Hugging Face account that accepted the terms, which a first-run card cannot ask
  for. At 1B it is the smallest, and Google's report presents it as mainly an English model at that size.

So the recommendation is Qwen2.5-1.5B-Instruct: the only one of the three under an open licence and downloadable
without an account, good in both of Madoi's languages, and small enough for an 8 GB laptop next to the window.
(The benchmark tables themselves were not at hand when this was written: confirm the figures in the Qwen2.5 report
and on the TinySwallow and Gemma 3 cards before quoting numbers to users.)

The size and sha256 are those of the file at the pinned revision below, as published in the repository's Git-LFS
pointer (recorded by a public script that pins the same revision; not re-read from this machine, which has no
network). The download checks them against what the host says (its ``X-Linked-Size`` and ``X-Linked-Etag``, the
sha256 of an LFS file) and against the bytes received: a mismatch anywhere refuses the file, so an error here
shows as a refusal, never as a wrong file.
"""

from __future__ import annotations

from typing import Final

from app.downloads import DownloadableModel

RECOMMENDED_MODEL: Final = DownloadableModel(
    name="Qwen2.5 1.5B Instruct (Q4_K_M)",
    repo="Qwen/Qwen2.5-1.5B-Instruct-GGUF",
    file="qwen2.5-1.5b-instruct-q4_k_m.gguf",
    # A commit, not "main": the sha256 below stays the file's even if the repository changes.
    revision="91cad51170dc346986eccefdc2dd33a9da36ead9",
    size=1_117_320_736,
    sha256="6a1a2eb6d15622bf3c96857206351ba97e1af16c30d7a74ee38970e434e9407e",
    licence="Apache-2.0",
    licence_url="https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/blob/main/LICENSE",
)
