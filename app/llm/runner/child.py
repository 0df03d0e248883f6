"""The model runner's child process: llama-cpp-python's OpenAI-compatible server on one model file.

Run as ``python -m app.llm.runner.child`` with :data:`~app.llm.runner.options.CONFIG_ENV` set (the runner does it;
a frozen build calls :func:`main` from its own entry point). The child

- dies with its parent, even when the parent is killed with SIGKILL: on Linux the kernel sends it SIGKILL
  (PR_SET_PDEATHSIG); elsewhere on POSIX a watchdog thread notices it was handed to another parent. SIGKILL rather
  than SIGTERM: a model mid-reply has nothing to save, and a graceful shutdown could wait on it;
- configures ``llama_cpp.server`` in code (no command line to parse, the key never in ``ps``): loopback only, one
  API key, the given context and threads, no mlock (a locked 1 GB model starves the desktop of memory), and
  ``interrupt_requests`` off: companions share this one model, and a request arriving must wait its turn rather
  than end another companion's reply half-said (Madoi's gate queues them by priority anyway);
- switches off llama.cpp's extra buffer types (weight repacking) when told, which llama-cpp-python 0.3.36 does not
  expose as a setting: its ``Llama`` reads the model parameters from ``llama_model_default_params()``, so the child
  wraps that function before the model loads;
- computes the logits of the last token only (``logits_all`` off; the server's default computes them for every
  prompt token, the 0.5B model's largest matrix, and keeps a copy of each row: nothing Madoi asks needs them);
- keeps each companion's evaluated prompt (:func:`keep_prompt_states`): llama.cpp holds one prompt in its context,
  so on a server shared by companions each one's turn evaluated its whole prompt again after another's (measured on
  the 0.5B test model, generic build: ~1,000 prompt tokens at ~50 tokens/s, 20 s before the first word).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from typing import Final

from app.llm.runner.options import CONFIG_ENV, ChildConfig

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Ends this process when ``parent_pid`` is no longer its parent (the parent died, even by SIGKILL)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    elif os.name == "posix":
        threading.Thread(target=_watch_parent, args=(parent_pid,), name="watch-parent", daemon=True).start()
    if os.name == "posix" and os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(1.0)
    os._exit(1)


def disable_extra_buffers() -> None:
    """Makes every model load with ``use_extra_bufts = False`` (no weight repacking for AVX-512/AMX)."""
    import llama_cpp.llama_cpp as bindings

    original = bindings.llama_model_default_params

    def without_extra_buffers() -> bindings.llama_model_params:
        params: bindings.llama_model_params = original()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without_extra_buffers


PROMPT_STATES_BYTES: Final = 256 << 20
"""What the kept prompt states may hold in all: the 0.5B model's context costs ~12 kB per token, Qwen2.5-1.5B's
~28 kB, so three companions' lines and votes (about seven prompts of ~1,000 tokens) fit with the larger model; the
least recently used goes first (measured: at 384 MB the runner held 1.93 GB after 30 lines of the 0.5B model)."""


def keep_prompt_states() -> None:
    """Makes the server's prompt cache (llama-cpp-python's RAM cache, ``cache=True``) keep only what a prompt's next
    request needs: the context's state. ``Llama.save_state`` also copies the model's score rows into each state
    (n_batch x vocabulary floats: ~300 MB for Qwen's 151,936 tokens at a batch of 512, allocated at every completion
    and not counted in the cache's size), which serve log-probabilities only with ``logits_all`` (off here: the
    sampler reads the context's own logits). So a state is saved with one row of them, which ``load_state`` spreads
    over the rows it restores; the states stay within :data:`PROMPT_STATES_BYTES`."""
    from llama_cpp.llama import Llama, LlamaState

    save_state = Llama.save_state

    def save_state_without_scores(self: Llama) -> LlamaState:
        scores = self.scores
        self.scores = scores[:1]  # a view: one row is copied into the state
        try:
            return save_state(self)
        finally:
            self.scores = scores

    Llama.save_state = save_state_without_scores  # type: ignore[method-assign]


def serve(config: ChildConfig) -> None:
    """Loads the model and serves it until the process is ended."""
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    if not config.extra_buffers:
        disable_extra_buffers()
    keep_prompt_states()
    server = ServerSettings(host=config.host, port=config.port, api_key=config.api_key, interrupt_requests=False)
    model = ModelSettings(model=config.model_file, model_alias=config.alias, n_ctx=config.context,
                          n_threads=config.threads, n_threads_batch=config.threads, n_batch=config.batch,
                          n_ubatch=config.batch, use_mmap=config.mmap, use_mlock=False, verbose=True,
                          logits_all=False, cache=True, cache_type="ram", cache_size=PROMPT_STATES_BYTES)
    print(f"madoi-model-runner: {config.alias} on {config.host}:{config.port}, context {config.context}, "
          f"{config.threads} threads, batch {config.batch}, extra buffers {config.extra_buffers}, "
          f"mmap {config.mmap}", file=sys.stderr, flush=True)
    app = create_app(server_settings=server, model_settings=[model])
    uvicorn.run(app, host=config.host, port=config.port, log_level="warning")


def main() -> int:
    text = os.environ.pop(CONFIG_ENV, None)
    if text is None:
        print(f"{CONFIG_ENV} is not set: this module is started by app.llm.runner.ModelRunner", file=sys.stderr)
        return 2
    config = ChildConfig.from_json(text)
    die_with_parent(config.parent_pid)
    serve(config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
