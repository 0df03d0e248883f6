"""The first-run card's first offer: "Talk now, with a model on this computer".

:class:`ModelSetupCard` lists the GGUF models already on this computer (LM Studio's, GPT4All's, Ollama's, the
Hugging Face cache: name, size, where), lets the user pick a file, and offers the recommended model's download with
what the user agrees to before a byte moves (its name, size, licence and the memory it needs), a progress bar,
Cancel, and a later download continuing where the last one stopped. The chosen file is saved as ``llm.model_file``
(through the port: the settings store) and :attr:`ModelSetupCard.model_chosen` hands the settings to the window,
which applies them: Madoi starts the model and the companions talk.

:class:`ModelStatusNotice` says the model runner's state in the status bar, and in a notification what the user
should know: the model stopped unexpectedly and was restarted, or could not be started again.

Both know the app only through ``ui.window.panel_ports.ModelSetup``.
"""

from __future__ import annotations

import asyncio
import html
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QStatusBar,
    QVBoxLayout,
    QWidget,
)

from app.downloads import DownloadCancelled, DownloadError, DownloadOffer, DownloadProgress
from app.llm.model_files import ModelFile, NotAModelFile
from app.llm.runner import RunnerState, RunnerStatus
from app.settings.model import Settings
from companions.common.tasks import TaskSet
from ui.settings.form import show_result
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts, is_language_change
from ui.window.naming import named
from ui.window.panel_ports import ModelSetup

if TYPE_CHECKING:
    from ui.window.notifications import NotificationArea

TEXTS: Final = Texts("model_setup", {
    "title": QT_TRANSLATE_NOOP("model_setup", "Talk now, with a model on this computer"),
    "intro": QT_TRANSLATE_NOOP(
        "model_setup", "Madoi runs the model itself: no server, no account, no key, and nothing leaves this "
                       "computer."),
    "searching": QT_TRANSLATE_NOOP("model_setup", "Looking for models on this computer…"),
    "found": QT_TRANSLATE_NOOP("model_setup", "Models found on this computer:"),
    "none_found": QT_TRANSLATE_NOOP("model_setup", "No model file was found on this computer."),
    "item": QT_TRANSLATE_NOOP("model_setup", "{name} · {size} · {source}: {where}"),
    "use": QT_TRANSLATE_NOOP("model_setup", "Talk with this model"),
    "choose": QT_TRANSLATE_NOOP("model_setup", "Choose a file…"),
    "choose.title": QT_TRANSLATE_NOOP("model_setup", "Choose a GGUF model"),
    "choose.filter": QT_TRANSLATE_NOOP("model_setup", "GGUF models (*.gguf);;All files (*)"),
    "offer.asking": QT_TRANSLATE_NOOP("model_setup", "Asking Hugging Face about the recommended model…"),
    "offer": QT_TRANSLATE_NOOP(
        "model_setup", "Or download the recommended model: <b>{name}</b>, {size}, licence {licence}; it needs "
                       "about {memory} of memory while the companions talk. {free} free on this disk."),
    "offer.resume": QT_TRANSLATE_NOOP("model_setup", "{done} of it is already downloaded."),
    "offer.failed": QT_TRANSLATE_NOOP("model_setup", "The recommended model cannot be downloaded now: {reason}"),
    "download": QT_TRANSLATE_NOOP("model_setup", "Download ({size})"),
    "resume": QT_TRANSLATE_NOOP("model_setup", "Continue the download ({size} left)"),
    "cancel": QT_TRANSLATE_NOOP("model_setup", "Cancel"),
    "progress": QT_TRANSLATE_NOOP("model_setup", "{done} of {total} · {speed}/s"),
    "cancelled": QT_TRANSLATE_NOOP(
        "model_setup", "Download paused: {done} of {total} kept. It continues where it stopped."),
    "failed": QT_TRANSLATE_NOOP("model_setup", "The download stopped: {reason}"),
    "not_model": QT_TRANSLATE_NOOP("model_setup", "This file cannot be used: {reason}"),
    "starting": QT_TRANSLATE_NOOP("model_setup", "Starting {name}… the companions talk as soon as it is loaded."),
    "not_saved": QT_TRANSLATE_NOOP("model_setup", "The choice could not be saved: {reason}"),
    "status.loading": QT_TRANSLATE_NOOP("model_setup", "Loading the model {name}…"),
    "status.ready": QT_TRANSLATE_NOOP("model_setup", "The model {name} is ready"),
    "status.restarting": QT_TRANSLATE_NOOP("model_setup", "The model stopped unexpectedly; starting it again…"),
    "restarted.title": QT_TRANSLATE_NOOP("model_setup", "The model stopped unexpectedly and was restarted"),
    "restarted.body": QT_TRANSLATE_NOOP(
        "model_setup", "The companions go on talking. A reply being written at that moment may be missing."),
    "failed.title": QT_TRANSLATE_NOOP("model_setup", "The model could not be started"),
    "failed.body": QT_TRANSLATE_NOOP(
        "model_setup", "The companions cannot talk until a model runs. Choose another model file, or a server "
                       "in the settings."),
})

RECOMMENDED_MEMORY: Final = 1_500_000_000
"""What the recommended model needs loaded (app/llm/recommended_model.py: ~1.5 GB with an 8192-token context)."""


def size_text(size: int) -> str:
    """``1.12 GB``, ``640 MB``: a size as people read it (decimal units, as disks and downloads are sold)."""
    if size >= 1_000_000_000:
        return f"{size / 1e9:.2f} GB"
    return f"{max(size, 0) / 1e6:.0f} MB"


def _t(key: str, **values: object) -> str:
    return TEXTS.text(key, **values)


class ModelSetupCard(QWidget):
    """The "Talk now" part of the first-run card; :meth:`attach` gives it the app's :class:`ModelSetup`."""

    model_chosen = Signal(Settings)
    """The settings with the chosen ``llm.model_file``, saved: the window applies them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        named(self, "modelSetupCard")
        self._setup: ModelSetup | None = None
        self._tasks = TaskSet("model-setup")
        self._files: list[ModelFile] = []
        self._offer: DownloadOffer | None = None
        self._cancel: asyncio.Event | None = None
        self._searched = False
        self._looked = False
        self.title = named(QLabel(), "modelSetupTitle")
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.title.setWordWrap(True)
        self.intro = self._paragraph("modelSetupIntro")
        self.found_label = self._paragraph("modelSetupFound")
        self.files = named(QListWidget(), "modelSetupFiles")
        self.files.setMaximumHeight(110)
        self.files.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long folder loses its middle (full: tooltip)
        self.files.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.files.hide()
        self.files.itemSelectionChanged.connect(self._selection_changed)
        self.files.itemDoubleClicked.connect(self._use_selected)
        self.use_button = named(QPushButton(), "modelSetupUse")
        self.use_button.setEnabled(False)
        self.use_button.clicked.connect(self._use_selected)
        self.choose_button = named(QPushButton(), "modelSetupChoose")
        self.choose_button.clicked.connect(self._choose)
        self.offer_label = self._paragraph("modelSetupOffer")
        self.download_button = named(QPushButton(), "modelSetupDownload")
        self.download_button.hide()
        self.download_button.clicked.connect(self._download)
        self.cancel_button = named(QPushButton(), "modelSetupCancel")
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self._cancel_download)
        self.progress = named(QProgressBar(), "modelSetupProgress")
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.hide()
        self.result = self._paragraph("modelSetupResult")
        self.result.hide()
        file_buttons = QHBoxLayout()
        file_buttons.addWidget(self.use_button)
        file_buttons.addWidget(self.choose_button)
        file_buttons.addStretch(1)
        download_row = QHBoxLayout()
        download_row.addWidget(self.download_button)
        download_row.addWidget(self.progress, 4)
        download_row.addWidget(self.cancel_button)
        download_row.addStretch(1)  # the buttons keep their size when the progress bar is hidden
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(8)
        for widget in (self.title, self.intro, self.found_label, self.files):
            column.addWidget(widget)
        column.addLayout(file_buttons)
        column.addWidget(self.offer_label)
        column.addLayout(download_row)
        column.addWidget(self.result)
        self._retranslate()

    # -- the app ---------------------------------------------------------------------------------------------
    def attach(self, setup: ModelSetup) -> None:
        """Looks for the models of this computer and asks about the recommended download (in the background) once
        the card is shown: a user who never sees it is not looked for, and nothing asks Hugging Face."""
        self._setup = setup
        if self.isVisible():
            self._look_once()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._look_once()

    def _look_once(self) -> None:
        if self._setup is None or self._looked:
            return
        self._looked = True
        self._tasks.spawn(self._look(), name="model-files")
        self._tasks.spawn(self._ask_offer(), name="model-offer")

    def detach(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self._tasks.cancel()

    async def _look(self) -> None:
        assert self._setup is not None
        try:
            files = await self._setup.found()
        except OSError:
            files = []
        self.show_files(files)

    def show_files(self, files: Sequence[ModelFile]) -> None:
        self._files = list(files)
        self._searched = True
        self.files.clear()
        for model in self._files:
            item = QListWidgetItem(_t("item", name=model.name, size=size_text(model.size), source=model.source.value,
                                      where=str(model.path.parent)))
            item.setToolTip(str(model.path))
            self.files.addItem(item)
        self.files.setVisible(bool(self._files))
        if self._files:
            self.files.setCurrentRow(0)
        self._say_found()

    async def _ask_offer(self) -> None:
        assert self._setup is not None
        try:
            offer = await self._setup.offer()
        except DownloadError as err:
            self._offer = None
            self.offer_label.setText(html.escape(_t("offer.failed", reason=str(err))))
            return
        self.show_offer(offer)

    def show_offer(self, offer: DownloadOffer) -> None:
        self._offer = offer
        self._say_offer()
        self.download_button.show()

    # -- choices ---------------------------------------------------------------------------------------------
    def _selection_changed(self) -> None:
        self.use_button.setEnabled(self.files.currentRow() >= 0 and self._setup is not None)

    def _use_selected(self) -> None:
        row = self.files.currentRow()
        if 0 <= row < len(self._files):
            self._tasks.spawn(self.use(self._files[row].path), name="use-model")

    def _choose(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, _t("choose.title"), str(Path.home()), _t("choose.filter"))
        if path:
            self._tasks.spawn(self.use(Path(path)), name="use-model")

    async def use(self, path: Path) -> None:
        """Checks ``path``, saves it as the companions' model and hands the settings to the window."""
        assert self._setup is not None
        try:
            model = await self._setup.check(path)
        except NotAModelFile as err:
            show_result(self.result, "error", _t("not_model", reason=str(err)))
            self.result.show()
            return
        try:
            settings = await self._setup.use(model.path)
        except OSError as err:
            show_result(self.result, "error", _t("not_saved", reason=str(err)))
            self.result.show()
            return
        show_result(self.result, "busy", _t("starting", name=model.name))
        self.result.show()
        self.model_chosen.emit(settings)

    # -- the download ----------------------------------------------------------------------------------------
    def _download(self) -> None:
        if self._offer is not None and self._setup is not None and self._cancel is None:
            self._tasks.spawn(self.download(self._offer), name="model-download")

    async def download(self, offer: DownloadOffer) -> None:
        """Downloads ``offer`` (the user clicked Download after reading what it is); on success the model is used."""
        assert self._setup is not None
        cancel = self._cancel = asyncio.Event()
        self.download_button.setEnabled(False)
        self.cancel_button.show()
        self.progress.setValue(int(1000 * offer.already_have / offer.size) if offer.size else 0)
        self.progress.show()
        self.result.hide()
        try:
            path = await self._setup.download(offer, self._on_progress, cancel)
        except DownloadCancelled:
            self._after_download()
            await self._paused()
            return
        except DownloadError as err:
            self._after_download()
            show_result(self.result, "error", _t("failed", reason=str(err)))
            self.result.show()
            await self._ask_offer()  # what is kept is offered again, to continue
            return
        self._after_download()
        self.progress.setValue(1000)
        self.progress.show()
        await self.use(path)

    def _on_progress(self, progress: DownloadProgress) -> None:
        self.progress.setValue(int(1000 * progress.fraction))
        show_result(self.result, "busy", _t("progress", done=size_text(progress.done), total=size_text(progress.total),
                                            speed=size_text(int(progress.bytes_per_s))))
        self.result.show()

    def _cancel_download(self) -> None:
        if self._cancel is not None:
            self._cancel.set()

    def _after_download(self) -> None:
        self._cancel = None
        self.cancel_button.hide()
        self.progress.hide()
        self.download_button.setEnabled(True)

    async def _paused(self) -> None:
        await self._ask_offer()  # the part kept: the offer now continues it
        offer = self._offer
        if offer is not None:
            show_result(self.result, "busy", _t("cancelled", done=size_text(offer.already_have),
                                                total=size_text(offer.size)))
            self.result.show()

    # -- words -----------------------------------------------------------------------------------------------
    @staticmethod
    def _paragraph(name: str) -> QLabel:
        label = named(QLabel(), name)
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        return label

    def _say_found(self) -> None:
        if not self._searched:
            self.found_label.setText(html.escape(_t("searching")))
        else:
            self.found_label.setText(html.escape(_t("found" if self._files else "none_found")))

    def _say_offer(self) -> None:
        offer = self._offer
        if offer is None:
            self.offer_label.setText(html.escape(_t("offer.asking")))
            return
        text = _t("offer", name=html.escape(offer.model.name), size=size_text(offer.size),
                  licence=f'<a href="{html.escape(offer.model.licence_url)}">{html.escape(offer.model.licence)}</a>',
                  memory=size_text(RECOMMENDED_MEMORY), free=size_text(offer.free_space))
        if offer.already_have:
            text += " " + html.escape(_t("offer.resume", done=size_text(offer.already_have)))
        self.offer_label.setText(text)
        self.offer_label.setOpenExternalLinks(True)
        self.download_button.setText(_t("resume", size=size_text(offer.needs)) if offer.already_have
                                     else _t("download", size=size_text(offer.size)))

    def changeEvent(self, event: QEvent) -> None:
        if is_language_change(event):
            self._retranslate()
        super().changeEvent(event)

    def _retranslate(self) -> None:
        self.title.setText(_t("title"))
        self.intro.setText(html.escape(_t("intro")))
        self.use_button.setText(_t("use"))
        self.choose_button.setText(_t("choose"))
        self.cancel_button.setText(_t("cancel"))
        self.download_button.setText(_t("download", size=""))
        self._say_found()
        self._say_offer()


class ModelStatusNotice:
    """The model runner's state in the status bar; a restart after a crash, or a model that cannot start, also in a
    notification (the reason in its details)."""

    def __init__(self, status_bar: QStatusBar, notifications: NotificationArea) -> None:
        self._status_bar = status_bar
        self._notifications = notifications
        self._stop: Callable[[], None] | None = None

    def attach(self, setup: ModelSetup) -> None:
        self.detach()
        self._stop = setup.follow_status(self.show)
        status = setup.status()
        if status is not None:
            self.show(status)

    def detach(self) -> None:
        if self._stop is not None:
            self._stop()
            self._stop = None

    def show(self, status: RunnerStatus) -> None:
        name = status.options.alias
        if status.state in (RunnerState.STARTING,):
            self._status_bar.showMessage(_t("status.loading", name=name))
        elif status.state is RunnerState.RESTARTING:
            self._status_bar.showMessage(_t("status.restarting"))
        elif status.state is RunnerState.READY:
            self._status_bar.showMessage(_t("status.ready", name=name), 5000)
            if status.restarts:
                self._notifications.notify(_t("restarted.title"), _t("restarted.body"), "warning",
                                           details=status.reason)
        elif status.state is RunnerState.FAILED:
            self._status_bar.clearMessage()
            self._notifications.notify(_t("failed.title"), _t("failed.body"), "error", details=status.reason)
