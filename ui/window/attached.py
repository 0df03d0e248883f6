"""What the panels have in common: they follow the bus (or a read model) from :meth:`Attached.attach`, once the
runtime started, to :meth:`Attached.detach`, before it stops; and they say their words again when the window's
language changes (:class:`Retranslating`).

The language is caught in ``changeEvent`` only, never in an ``event()`` override: that would route every event of
the widget through Python (the live language switch crashed in the window's constructor with them). What owns words
but is no widget has a ``retranslate()`` its widget calls.

Both are mixins, put before the Qt class (``class SpeechNotice(AttachedWidget, QLabel)``): they have no
constructor (a widget's own constructor stays the Qt class's), and to the type checker they are the Qt class they
will be mixed into.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from companions.wire.bus import Bus, BusItem, BusTopic
from ui.window.bus_bridge import BusFollower
from ui.window.i18n import is_language_change

if TYPE_CHECKING:
    _QObjectMixin = QObject
    _QWidgetMixin = QWidget
else:  # at run time the Qt class comes after the mixin in the widget's bases
    _QObjectMixin = object
    _QWidgetMixin = object


class Attached(_QObjectMixin):
    """A QObject that follows the bus while attached. Its constructor calls :meth:`follow_bus`; :meth:`on_attach`
    shows the model's state, :meth:`on_item` takes the bus's items, :meth:`on_detach` lets go of what it holds."""

    _attached = False
    _bus_follower: BusFollower | None = None

    def follow_bus(self, bus: Bus, topics: tuple[BusTopic, ...], *, lossless: bool = False) -> None:
        """From :meth:`attach` to :meth:`detach`, the items on ``topics`` go to :meth:`on_item` (call it once, in the
        constructor)."""
        self._bus_follower = BusFollower(bus, topics, lossless=lossless)

    @property
    def attached(self) -> bool:
        return self._attached

    def attach(self) -> None:
        """Shows the model's state and follows the bus (after the runtime started); nothing more when attached."""
        if self._attached:
            return
        self._attached = True
        self.on_attach()
        if self._bus_follower is not None:
            self._bus_follower.follow(self, self.on_item)

    def detach(self) -> None:
        """Stops following (before the runtime stops); safe to call twice, and before :meth:`attach`."""
        self._attached = False
        if self._bus_follower is not None:
            self._bus_follower.stop()
        self.on_detach()

    def on_attach(self) -> None:
        """Reads the model's state (the bus is followed right after)."""

    def on_item(self, item: BusItem) -> None:
        """A bus item on the followed topics, on the GUI thread."""

    def on_detach(self) -> None:
        """Lets go of what the attached object holds (tasks, timers); called at every :meth:`detach`."""


class Retranslating(_QWidgetMixin):
    """A widget that says its words again (:meth:`retranslate`) when the window's language changes."""

    def retranslate(self) -> None:
        raise NotImplementedError

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self.retranslate()
        super().changeEvent(event)


class AttachedWidget(Attached, Retranslating):
    """A widget that follows the bus while attached and says its words again on a language change."""
