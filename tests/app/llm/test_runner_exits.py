"""What a child's exit means: a fault (a safer configuration may answer it) or not, in plain words."""

from __future__ import annotations

import signal

from app.llm.runner.exits import ChildExit


def test_faults_are_fatal_signals_or_their_words_in_the_log() -> None:
    assert ChildExit(-signal.SIGSEGV).is_fault
    assert ChildExit(-signal.SIGILL).is_fault
    assert ChildExit(-signal.SIGBUS).is_fault
    assert ChildExit(0xC000001D).is_fault  # Windows: illegal instruction
    assert ChildExit(139, "line 1\nSegmentation fault (core dumped)\n").is_fault  # through a shell
    assert not ChildExit(-signal.SIGKILL).is_fault  # out of memory, or a user: the configuration is not to blame
    assert not ChildExit(1, "ValueError: Failed to load model from file: x.gguf").is_fault
    assert not ChildExit(0, "segmentation fault handler installed").is_fault


def test_the_reason_is_plain_words_with_the_log_s_error() -> None:
    assert ChildExit(-signal.SIGILL).describe() == (
        "the model stopped after an instruction this CPU does not run (SIGILL)")
    assert ChildExit(1, "llama_model_load: error loading model: bad magic\nbye\n").describe() == (
        "the model stopped with exit code 1: llama_model_load: error loading model: bad magic")
    assert ChildExit(-signal.SIGKILL, "Available chat formats from metadata: chat_template.default").describe() == (
        "the model stopped after being killed (SIGKILL: out of memory, or another program)")
