"""A stand-in for the model runner's child that loads no model: a real process that reads the runner's launch
configuration, dies with its parent like the real child (the same code), and answers ``GET /v1/models`` with the
key, as llama-cpp-python's server does. Its arguments make it misbehave the way a model process can:

    --segv-while FIELD   kill itself with SIGSEGV while loading if the configuration's FIELD is true
    --segv-later FIELD   the same a moment after answering (as at a first completion)
    --fail               exit with an error while loading (as for a file that is not a model)
    --silent             never answer (a load that does not finish)
    --delay S            load for S seconds before answering
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from app.llm.runner.child import die_with_parent
from app.llm.runner.options import CONFIG_ENV, ChildConfig


def handler_for(config: ChildConfig) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.headers.get("Authorization") != f"Bearer {config.api_key}":
                self._send(401, {"error": {"message": "Invalid API key"}})
            elif self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": config.alias, "object": "model"}]})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def _send(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--segv-while")
    parser.add_argument("--segv-later")
    parser.add_argument("--fail", action="store_true")
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--delay", type=float, default=0.0)
    args = parser.parse_args()
    config = ChildConfig.from_json(os.environ.pop(CONFIG_ENV))
    die_with_parent(config.parent_pid)
    print(f"stub child {os.getpid()}: {json.dumps({**config.__dict__, 'api_key': '...'})}", flush=True)
    time.sleep(args.delay)
    if args.segv_while and getattr(config, args.segv_while):
        os.kill(os.getpid(), signal.SIGSEGV)
    if args.fail:
        print("ValueError: Failed to load model from file: not a model", flush=True)
        return 1
    if args.silent:
        time.sleep(3600)
    if args.segv_later and getattr(config, args.segv_later):
        threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGSEGV)).start()
    ThreadingHTTPServer((config.host, config.port), handler_for(config)).serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
