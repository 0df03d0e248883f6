"""The search panel's indexing row: a progress bar while the knowledge folders are indexed, then what the index
holds (and the files it could not read), and the button that indexes the folders again."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from app.search.service import SearchIndexProgress, SearchIndexUpdated
from ui.search.texts import search_text
from ui.search.wording import index_summary
from ui.window.naming import named

IndexState = SearchIndexProgress | SearchIndexUpdated | str | None  # str: a failed re-index; None: not counted yet


def set_result(label: QLabel, result: str) -> None:
    """Sets the ``result`` style property (ok / error / busy, see the style sheets) and re-applies the style."""
    if label.property("result") != result:
        label.setProperty("result", result)
        label.style().unpolish(label)
        label.style().polish(label)


class IndexRow(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bar = named(QProgressBar(), "searchIndexBar")
        self.label = named(QLabel(), "searchIndexLabel")
        self.label.setWordWrap(True)
        self.problems = named(QLabel(), "searchIndexProblems")
        self.problems.setWordWrap(True)
        self.problems.setProperty("result", "error")
        self.reindex_button = named(QPushButton(), "searchReindex")
        row = QHBoxLayout()
        row.addWidget(self.bar, 1)
        row.addWidget(self.label, 1)
        row.addWidget(self.reindex_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.problems)

    def show_state(self, state: IndexState, *, available: bool, language: str) -> None:
        """Shows ``state``; nothing but the hidden row when search is not ``available``."""
        self.reindex_button.setVisible(available)
        progress = state if isinstance(state, SearchIndexProgress) else None
        self.bar.setVisible(available and (progress is not None or state is None))
        if progress is not None and progress.total > 0:
            self.bar.setRange(0, progress.total)
            self.bar.setValue(progress.done)
            self.bar.setFormat(search_text("indexing", language))
            current = Path(progress.current).name if progress.current else ""
            self.bar.setToolTip(search_text("indexing.file", language, file=current) if current else "")
        else:  # the pass started and has not counted its files yet
            self.bar.setRange(0, 0)
            self.bar.setFormat(search_text("indexing.start", language))
        summary = index_summary(state, language)
        if summary.result is not None:
            set_result(self.label, summary.result)
        self.label.setText(summary.text)
        self.label.setVisible(available and bool(summary.text))
        self.problems.setText(search_text("index.problems", language, problems="; ".join(summary.problems)))
        self.problems.setVisible(available and bool(summary.problems))
        self.reindex_button.setEnabled(progress is None and state is not None)
