"""Entry points: ``madoi`` (the window, or ``--headless``) and ``madoi-gui`` (the window, no console)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from companions import __version__

if TYPE_CHECKING:
    from app.llm.runner import RunnerStatus
    from app.runtime.runtime import Runtime
    from app.settings.model import SettingsStore

log = logging.getLogger(__name__)
CHILD_FLAG = "--model-runner-child"  # app.llm.runner.options.CHILD_FLAG (not imported here: it loads httpx)
READY_LINE = "madoi: ready"
STOPPED_LINE = "madoi: stopped"


def build_parser() -> argparse.ArgumentParser:
    from app.cards.cli import add_companions_parser
    from app.devices.camera_cli import add_camera_parser
    from app.memory.cli import add_memory_parsers
    from app.search.cli import add_search_parser

    parser = argparse.ArgumentParser(
        prog="madoi",
        description="Madoi: AI companions in one desktop window. Without options, opens the window.",
    )
    parser.add_argument("--version", action="version", version=f"madoi {__version__}")
    parser.add_argument("--headless", action="store_true",
                        help="run the companions, bridge and storage without a window until interrupted")
    parser.add_argument("--companions", metavar="IDS",
                        help="run only these companions (comma-separated ids, e.g. souta): the others run on other "
                             "machines of the network (MADOI_NETWORK_ENABLED)")
    parser.add_argument("--no-bridge", action="store_true", help="do not open the WebSocket bridge")
    parser.add_argument("--model-file", metavar="PATH", type=Path,
                        help="run this GGUF model for the companions (llama.cpp, inside Madoi) for this run "
                             "(MADOI_LLM_MODEL_FILE; saved from the first-run card)")
    parser.add_argument("--verbose", "-v", action="store_true", help="log debug messages")
    parser.add_argument("--install-desktop-entry", action="store_true",
                        help="add Madoi to the desktop's application menu (a .desktop file and its icon), then exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_search_parser(commands)
    add_memory_parsers(commands)  # memory recall; conversations export/import
    add_companions_parser(commands)
    add_camera_parser(commands)  # camera describe
    return parser


async def run_headless(loaded: SettingsStore, only_companions: list[str] | None = None) -> int:
    """Runs until SIGINT or SIGTERM, which end it at any moment, the start-up included."""
    import asyncio

    from app.runtime.runtime import Runtime, unless_stopped

    runtime = Runtime(loaded, only_companions=only_companions)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        if await unless_stopped(runtime.start(), stop.wait()):
            print(f"{READY_LINE} (headless; data in {loaded.paths.data_dir})", flush=True)
            if runtime.parts.network is not None:
                status = runtime.parts.network.status
                where = "on " + ", ".join(status.addresses) if status.running else "off: " + status.problem
                print(f"madoi: network {where}", flush=True)
            await unless_stopped(say_model(runtime), stop.wait())
            await stop.wait()
    finally:
        await runtime.stop()
        print(STOPPED_LINE, flush=True)
    return 0


async def say_model(runtime: Runtime) -> None:
    """Prints the model the companions talk to once it is found, and the model runner's states from then on."""
    models = runtime.parts.models

    def said(status: RunnerStatus) -> None:
        print(f"madoi: model {status.state}: {status.reason}", flush=True)

    if models.embedded is not None:
        models.embedded.subscribe(said)
        if (status := models.embedded.status) is not None:  # the model began loading while the parts started
            said(status)
    resolution = await models.resolved()
    print(f"madoi: language model: {resolution.message}", flush=True)


def fill_secrets(loaded: SettingsStore) -> None:
    """The API key and bridge token from the OS keyring, where the settings and environment have none."""
    from app.settings.secrets import SecretStore

    try:
        loaded.settings = SecretStore.for_paths(loaded.paths).fill(loaded.settings)
    except Exception as err:  # a broken keyring backend must not keep the app from starting
        log.warning("the keyring could not be read: %s", err)
        loaded.problems.append(f"stored secrets could not be read: {err}")


class Stopped(SystemExit):
    """A SIGTERM while Madoi starts. Not a KeyboardInterrupt: CPython 3.11 marks the process as interrupted when a
    KeyboardInterrupt leaves code run by ``exec`` (dataclasses and named tuples make their methods that way at
    import), and it then ends by SIGINT (return code -2) even when the interrupt was caught (measured: 1 start in
    6 under load printed "madoi: stopped" and returned -2). asyncio lets SystemExit out of tasks as it does
    KeyboardInterrupt, so the stop reaches :func:`main` the same way."""

    def __init__(self) -> None:
        super().__init__(0)


_SIGTERM_RECEIVED = threading.Event()  # set by the handler: a start that ends in another error was still stopped


def _interrupted(signum: int, frame: object) -> NoReturn:
    _SIGTERM_RECEIVED.set()
    raise Stopped


def main(argv: Sequence[str] | None = None) -> int:
    """Nothing heavy is imported before this runs: a SIGTERM from the first moment ends the start cleanly, and the
    model runner's child (``CHILD_FLAG``) loads only what it needs."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == [CHILD_FLAG]:  # the model runner's child (a frozen bundle has no `python -m`)
        from app.llm.runner.child import main as run_model_child

        return run_model_child()
    # SIGTERM ends the start as Ctrl+C does until the runtime handles both: with STOPPED_LINE, no traceback.
    _SIGTERM_RECEIVED.clear()
    previous = signal.signal(signal.SIGTERM, _interrupted)
    try:
        return _main(arguments)
    except (KeyboardInterrupt, Stopped):
        print(STOPPED_LINE, flush=True)
        return 0
    except Exception:
        # Raised inside C code, the stop can come out as another error (measured under load: SIGTERM 0.6 s into the
        # start, within more_itertools' `from math import sumprod`, ended it with "TypeError: expected a message
        # argument": CPython lost the ImportError's message to the handler's exception).
        if not _SIGTERM_RECEIVED.is_set():
            raise
        print(STOPPED_LINE, flush=True)
        return 0
    finally:
        signal.signal(signal.SIGTERM, previous)


def _main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.install_desktop_entry:
        from app.runtime.desktop_entry import install_from_command_line

        return install_from_command_line()
    if args.command == "search":
        from app.search.cli import run_search_command

        return run_search_command(args)
    if args.command in ("memory", "conversations"):
        from app.memory.cli import run_memory_command

        return run_memory_command(args)
    if args.command == "companions":
        from app.cards.cli import run_companions_command

        return run_companions_command(args)
    if args.command == "camera":
        from app.devices.camera_cli import run_camera_command

        return run_camera_command(args)
    from app.runtime.logs import setup_logging
    from app.settings.model import load_settings

    if args.model_file is not None:  # as its variable: for this run, never written to the settings file
        os.environ["MADOI_LLM_MODEL_FILE"] = str(args.model_file.expanduser().resolve())
    loaded = load_settings()
    setup_logging(loaded.paths.log_file, level=logging.DEBUG if args.verbose else logging.INFO)
    for problem in loaded.problems:
        print(f"madoi: settings problem: {problem}", file=sys.stderr)
    fill_secrets(loaded)
    if args.no_bridge:
        loaded.settings.bridge.port = 0
    only = [c.strip() for c in args.companions.split(",") if c.strip()] if args.companions else None
    if args.headless:
        # The model client before the event loop runs: imported on the loop where a server is first asked, its
        # 0.2-1 s held a SIGTERM until it was done (measured: 1.14 s to stop, 1.2 s into the start); here a SIGTERM
        # ends it at once (Stopped), and the default model is found before a first message's votes.
        import openai  # noqa: F401

        exit_now(run_until_complete(run_headless(loaded, only)))
    from ui.window.launch import run_window

    exit_now(run_window(loaded, only))


def run_until_complete(main: Coroutine[Any, Any, int]) -> int:
    """``asyncio.run`` without its wait for the worker threads: one may still be loading a model (search's embedder)
    or closing an index, which :func:`exit_now` does not wait for either."""
    import asyncio

    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()


def exit_now(code: int) -> NoReturn:
    """Ends the process once the runtime has stopped (everything stored, the model runner's child ended), without
    waiting for worker threads still busy with what nobody needs any more: a stop within a second, whatever the app
    was doing (the parts' own stops are bounded, app/runtime/runtime.py)."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def gui_main() -> int:
    """``madoi-gui``: the window only (installed as a GUI script, so no console opens on Windows)."""
    return main([])


if __name__ == "__main__":
    sys.exit(main())
