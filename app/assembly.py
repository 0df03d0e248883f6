"""Assembly: which concrete components a runtime gets for its settings.

This is the one place that names concrete adapters (camera, speaker, bridge, companions, search). Each later
capability adds its component here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.runtime import Component, Runtime


async def build_components(runtime: Runtime) -> list[Component]:
    """The components for ``runtime``'s settings, in start order."""
    components: list[Component] = []
    return components
