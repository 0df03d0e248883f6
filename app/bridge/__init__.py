"""The WebSocket bridge to external clients (the reference framework's Firehose server, made safe)."""

from app.bridge.auth import BridgeConfigError
from app.bridge.factory import build_bridge
from app.bridge.server import BridgeServer, BridgeStats

__all__ = ["BridgeConfigError", "BridgeServer", "BridgeStats", "build_bridge"]
