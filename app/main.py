"""Entry points: ``madoi`` (the window, or ``--headless``) and ``madoi-gui`` (the window, no console)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

from app.cards.cli import add_companions_parser
from app.memory.cli import add_memory_parsers
from app.runtime.logs import setup_logging
from app.runtime.runtime import Runtime
from app.search.cli import add_search_parser
from app.settings.model import LoadedSettings, load_settings
from companions import __version__

log = logging.getLogger(__name__)
READY_LINE = "madoi: ready"


def build_parser() -> argparse.ArgumentParser:
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
    parser.add_argument("--verbose", "-v", action="store_true", help="log debug messages")
    parser.add_argument("--install-desktop-entry", action="store_true",
                        help="add Madoi to the desktop's application menu (a .desktop file and its icon), then exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_search_parser(commands)
    add_memory_parsers(commands)  # memory recall; conversations export/import
    add_companions_parser(commands)
    return parser


async def run_headless(loaded: LoadedSettings, only_companions: list[str] | None = None) -> int:
    runtime = Runtime(loaded, only_companions=only_companions)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runtime.start()
        print(f"{READY_LINE} (headless; data in {loaded.paths.data_dir})", flush=True)
        if runtime.parts.network is not None:
            status = runtime.parts.network.status
            where = "on " + ", ".join(status.addresses) if status.running else "off: " + status.problem
            print(f"madoi: network {where}", flush=True)
        await stop.wait()
    finally:
        await runtime.stop()
        print("madoi: stopped", flush=True)
    return 0


def fill_secrets(loaded: LoadedSettings) -> None:
    """The API key and bridge token from the OS keyring, where the settings and environment have none."""
    from app.settings.secrets import SecretStore

    try:
        loaded.settings = SecretStore.for_paths(loaded.paths).fill(loaded.settings)
    except Exception as err:  # a broken keyring backend must not keep the app from starting
        log.warning("the keyring could not be read: %s", err)
        loaded.problems.append(f"stored secrets could not be read: {err}")


def main(argv: Sequence[str] | None = None) -> int:
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
    loaded = load_settings()
    setup_logging(loaded.paths.log_file, level=logging.DEBUG if args.verbose else logging.INFO)
    for problem in loaded.problems:
        print(f"madoi: settings problem: {problem}", file=sys.stderr)
    fill_secrets(loaded)
    if args.no_bridge:
        loaded.settings.bridge.port = 0
    only = [c.strip() for c in args.companions.split(",") if c.strip()] if args.companions else None
    if args.headless:
        return asyncio.run(run_headless(loaded, only))
    from ui.window.launch import run_window

    return run_window(loaded, only)


def gui_main() -> int:
    """``madoi-gui``: the window only (installed as a GUI script, so no console opens on Windows)."""
    return main([])


if __name__ == "__main__":
    sys.exit(main())
