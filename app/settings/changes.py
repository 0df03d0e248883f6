"""A change of settings as one typed event: which keys differ between the settings before and after.

:meth:`SettingsChanged.between` is the one place that compares two settings; the settings store publishes the event
(app/settings/store.py) and each part that follows the settings subscribes to the keys it cares about
(app/runtime/runtime.py) instead of comparing sections itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.settings.sections import SECTIONS, Settings


@dataclass(frozen=True)
class SettingsChanged:
    """The settings went from ``previous`` to ``current``; ``keys`` are what differs, as ``section.field``
    (``bridge.port``) and ``companions.<id>`` (a companion's choices)."""

    previous: Settings
    current: Settings
    keys: frozenset[str]

    @classmethod
    def between(cls, previous: Settings, current: Settings) -> SettingsChanged:
        keys = {f"{section}.{name}" for section in SECTIONS for name in type(getattr(current, section)).model_fields
                if getattr(getattr(previous, section), name) != getattr(getattr(current, section), name)}
        keys |= {f"companions.{companion_id}" for companion_id in previous.companions.keys() | current.companions.keys()
                 if previous.companion(companion_id) != current.companion(companion_id)}
        return cls(previous, current, frozenset(keys))

    def touches(self, *names: str) -> bool:
        """Whether any of ``names`` changed: a whole section (``llm``, ``companions``) or one key (``bridge.port``)."""
        return any(key == name or key.startswith(f"{name}.") for name in names for key in self.keys)
