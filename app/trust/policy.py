"""The app's trust policy (companions/trust/policy.py) built from the settings: the user's remembered decisions come
from ``[trust]`` and every new one is saved there at once; who an id is comes from the cast (this app's companions),
the settings (the user's name) and the bus (the companions elsewhere).

The policy asks through the asker it is built with: the runtime's :class:`~companions.trust.policy.ConsentRelay`,
which the window's consent prompt connects to once it is up (``RuntimeConsent`` in app/runtime/panels.py,
ui/trust/consent_prompt.py); until then, and in a headless run, nobody can be asked and every request from outside is
refused (``[trust]``'s *Always* decisions still hold).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from app.settings.model import Settings, SettingsStore
from companions.trust.policy import ConsentAsker, TrustDecision, TrustPolicy
from companions.trust.sources import SourceDirectory
from companions.wire.bus import Bus

log = logging.getLogger(__name__)


class Consent:
    """The policy and the directory of one runtime: ``own()`` are this app's companions (the cast's, as they are
    now), ``names`` gives the name of an id, ``asker`` asks the user (``None``: nobody can be asked)."""

    def __init__(self, loaded: SettingsStore, bus: Bus, *, own: Callable[[], Iterable[str]] = tuple,
                 names: Callable[[str], str | None] = lambda _id: None, asker: ConsentAsker | None = None) -> None:
        self.loaded = loaded
        settings = loaded.settings
        self.directory = SourceDirectory(user_id=settings.general.user_name, own=own, names=names)
        self.directory.attach(bus)
        self.policy = TrustPolicy(asker=asker, decisions=settings.trust.decisions, bus=bus,
                                  ask_timeout_s=settings.trust.ask_timeout_s, on_change=self._save,
                                  sources=self.directory.source)

    def _save(self, decisions: tuple[TrustDecision, ...]) -> None:
        # In place: the window's settings (and a settings dialog open meanwhile: its Privacy tab) are this object.
        self.loaded.settings.trust.decisions = list(decisions)
        self.loaded.write()
        log.info("trust: %d decision(s) saved", len(decisions))


def use_trust_settings(policy: TrustPolicy, settings: Settings) -> None:
    """The user saved the settings: the Privacy tab may have forgotten decisions (Runtime.apply_settings)."""
    policy.use_decisions(settings.trust.decisions)
    policy.ask_timeout_s = settings.trust.ask_timeout_s
