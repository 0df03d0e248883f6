"""``python -m companions.testing.openai_server [--demo] [--profile NAME] [--port N] [--model ID]``: a local
OpenAI-compatible server for demos. It echoes, or with ``--demo`` plays Madoi's companions in a conversation that
ends by itself; ``--profile`` makes it behave like a real server (see profiles.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib

from companions.testing.openai_server import PROFILES, Fallback, OpenAITestServer, ServerProfile, echo_reply
from companions.testing.openai_server.demo_director import DemoDirector


async def serve_forever(port: int, model: str, demo: bool, profile: ServerProfile) -> None:
    fallback: Fallback = DemoDirector() if demo else echo_reply
    async with OpenAITestServer(models=[model], port=port, fallback=fallback, profile=profile) as server:
        what = "plays a group conversation" if demo else "echoes"
        print(f"OpenAI-compatible server at {server.base_url} (model {model!r}, profile {profile.name}) {what}; "
              "Ctrl+C stops it", flush=True)
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m companions.testing.openai_server",
                                     description="A local OpenAI-compatible server for demos: it echoes, or with "
                                     "--demo plays Madoi's companions in a conversation that ends by itself.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--model", default="echo")
    parser.add_argument("--demo", action="store_true", help="answer as the companions (see demo_director.py)")
    parser.add_argument("--profile", choices=sorted(PROFILES), default=None,
                        help="behave like this real server (queue, interrupts, token rates, refused formats)")
    parser.add_argument("--time-scale", type=float, default=1.0, help="multiply the profile's delays (0.05: 20x)")
    options = parser.parse_args()
    profile = PROFILES[options.profile] if options.profile else ServerProfile()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_forever(options.port, options.model, options.demo, profile.scaled(options.time_scale)))


if __name__ == "__main__":
    main()
