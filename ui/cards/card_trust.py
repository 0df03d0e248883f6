"""What a card would run or send (its MCP commands, its endpoint and key variable), shown exactly in the companion
editor with Approve and Revoke; and what an imported card holds that Madoi does not use (kept in the file)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from app.cards.library import CardEntry
from companions.cards.card import CompanionCard
from ui.cards.editor_texts import TEXTS, editor_button
from ui.cards.privileges import privilege_lines
from ui.window.naming import named


class CardTrust(QWidget):
    """The box of what the card runs and sends (hidden when nothing), and the kept fields under it."""

    def __init__(self, language: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.language = language
        self.trust_box = named(QGroupBox(self._t("trust.title")), "trustBox")
        self.trust_text = named(QLabel(), "trustText")
        self.trust_text.setWordWrap(True)
        self.trust_text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.approve_button = editor_button("approve", language)
        self.revoke_button = editor_button("revoke", language)
        trust_buttons = QHBoxLayout()
        trust_buttons.addWidget(self.approve_button)
        trust_buttons.addWidget(self.revoke_button)
        trust_buttons.addStretch(1)
        trust_layout = QVBoxLayout(self.trust_box)
        trust_layout.addWidget(self.trust_text)
        trust_layout.addLayout(trust_buttons)
        self.kept = named(QLabel(), "keptFields")
        self.kept.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.trust_box)
        layout.addWidget(self.kept)

    def _t(self, key: str, **values: object) -> str:
        return TEXTS.text(key, self.language, **values)

    def show_trust(self, entry: CardEntry | None) -> None:
        """What ``entry``'s card runs and sends, and whether the user approved it (Approve or Revoke for a card of
        the user's)."""
        lines = privilege_lines(entry.privileges, self.language) if entry is not None else []
        self.trust_box.setVisible(bool(lines))
        if entry is None or not lines:
            return
        state = "trust.sample" if entry.origin == "sample" else "trust.approved" if entry.trusted else "trust.held"
        self.trust_text.setText(self._t(state) + "\n" + "\n".join(f"• {line}" for line in lines))
        self.approve_button.setVisible(entry.origin == "user" and not entry.trusted)
        self.revoke_button.setVisible(entry.origin == "user" and entry.trusted)

    def show_kept(self, card: CompanionCard | None) -> None:
        """The fields ``card`` keeps from its import that Madoi does not use, and its lorebook (the values in the
        tooltip)."""
        parts = []
        if card is not None and card.unused:
            parts.append(self._t("unused", fields=", ".join(card.unused)))
        if card is not None and card.lore:
            keys = ", ".join(k for e in card.lore[:4] for k in e.keys[:2])
            parts.append(self._t("lore", n=len(card.lore), keys=keys))
        self.kept.setText("\n".join(parts))
        self.kept.setToolTip("\n".join(f"{k}: {str(v)[:200]}" for k, v in (card.unused if card else {}).items()))
        self.kept.setVisible(bool(parts))
