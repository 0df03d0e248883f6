"""The Qt-free core of Madoi: protocol, bus, companions, conversation control, queries and search."""

__version__ = "0.1.0"
