"""The ``MADOI_*`` environment variables as settings, read by pydantic-settings' own :class:`EnvSettingsSource`.

A variable is ``MADOI_<SECTION>_<FIELD>`` (``MADOI_LLM_BASE_URL``, ``MADOI_VOICE_INPUT_END_SILENCE_S``), configured on
:class:`~app.settings.sections.Settings` (prefix ``MADOI_``, split once at the ``_`` after the section's name), or one
of the short names of :data:`ENV_ALIASES` (``MADOI_CAMERA``); the full name wins over its short one. A name that is
no section's field is not a setting (``MADOI_HOME``, ``MADOI_LLM``; ``MADOI_VOICE_INPUT_ON`` is no field of
``[voice]``): it is left out. Values are taken as written; each field's validation happens where the layers meet
(app/settings/model.py), so that one bad value is reported and falls back alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from pydantic_settings import EnvSettingsSource

from app.settings.sections import SECTIONS, Settings

ENV_ALIASES: Final[dict[str, str]] = {  # a short name and the variable it stands for
    "MADOI_CAMERA": "MADOI_CAMERA_SOURCE",
    "MADOI_LANGUAGE": "MADOI_GENERAL_LANGUAGE",
    "MADOI_NOTICE": "MADOI_CAMERA_NOTICE",
}


class SettingsEnvironment(EnvSettingsSource):
    """pydantic-settings' environment source over ``environ`` (the process's, or a test's), short names renamed."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        super().__init__(Settings)

    def _load_env_vars(self) -> Mapping[str, str | None]:
        variables = {name.upper(): value for name, value in self._environ.items()}
        for short, full in ENV_ALIASES.items():
            value = variables.pop(short, None)  # MADOI_CAMERA would otherwise be read as the whole [camera]
            if value is not None:
                variables.setdefault(full, value)
        for whole in Settings.model_fields:  # MADOI_LLM is no field: read as all of [llm], it would hide the others
            variables.pop(f"{self.env_prefix}{whole}".upper(), None)
        return {name.lower(): value for name, value in variables.items()}


def environment_settings(environ: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """What the ``MADOI_*`` variables of ``environ`` set: ``{section: {field: value as written}}``."""
    found = SettingsEnvironment(environ)()
    return {section: fields for section, model in SECTIONS.items()
            if isinstance(values := found.get(section), dict)
            and (fields := {name: value for name, value in values.items() if name in model.model_fields})}
