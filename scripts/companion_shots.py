"""Pictures of companions of one's own, for scripts/screenshots.py: a character card imported in the companion
editor, and a conversation with that companion on the scripted demo endpoint (real HTTP, the real runtime).

The character card is made here like any card people share: a PNG picture (drawn with Qt) carrying a SillyTavern
V2 card in its ``chara`` text chunk, with a lorebook and fields Madoi keeps but does not use.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from pathlib import Path

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QRadialGradient

CARD = {
    "spec": "chara_card_v2", "spec_version": "2.0",
    "data": {
        "name": "桜井さくら",
        "description": "{{char}}は京都の古本屋で働く大学生。{{user}}とは幼なじみで、雨の日は店番をしている。",
        "personality": "おっとりしていて、本の話になると早口になる。",
        "scenario": "雨の日の午後、三条通りの古本屋。",
        "first_mes": "あ、{{user}}！いらっしゃい。今日は何を探してるの？",
        "mes_example": "<START>\n{{user}}: おすすめは？\n{{char}}: この詩集、すごくいいよ。表紙もきれいでしょ？",
        "alternate_greetings": ["雨、やまないね。"],
        "creator_notes": "Drawn for Madoi's screenshots.", "tags": ["kyoto", "books"], "creator": "madoi",
        "character_book": {"name": "三条通り", "entries": [
            {"keys": ["古本屋", "店"], "content": "{{char}}の店は三条通りにある。創業は昭和初期。", "enabled": True},
            {"keys": ["猫"], "content": "店には三毛猫のタマがいる。", "enabled": True}]},
    },
}


def character_png(path: Path) -> Path:
    """A round-faced character on a pink ground, carrying :data:`CARD` (what a card site would hand out)."""
    image = QImage(400, 560, QImage.Format.Format_ARGB32)
    image.fill(QColor("#f6d5de"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    glow = QRadialGradient(QPointF(200, 230), 260)
    glow.setColorAt(0, QColor("#fff3f6"))
    glow.setColorAt(1, QColor("#e9a6b8"))
    painter.fillRect(image.rect(), glow)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#5b3a2e"))
    painter.drawEllipse(QRectF(85, 100, 230, 250))  # hair
    painter.setBrush(QColor("#ffe4d2"))
    painter.drawEllipse(QRectF(110, 150, 180, 190))  # face
    painter.setBrush(QColor("#5b3a2e"))
    painter.drawChord(QRectF(100, 110, 200, 120), 0, 180 * 16)  # fringe
    painter.setBrush(QColor("#3b2a4a"))
    for x in (160, 240):
        painter.drawEllipse(QRectF(x - 11, 235, 22, 26))  # eyes
    painter.setBrush(QColor("#f49ab0"))
    for x in (140, 260):
        painter.drawEllipse(QRectF(x - 16, 272, 32, 16))  # cheeks
    painter.setPen(QColor("#b0475f"))
    painter.drawArc(QRectF(180, 278, 40, 24), 200 * 16, 140 * 16)  # smile
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor("#7a9e7e"))
    painter.drawRoundedRect(QRectF(90, 360, 220, 220), 60, 60)  # shoulders
    painter.end()
    image.setText("chara", base64.b64encode(json.dumps(CARD, ensure_ascii=False).encode()).decode())
    if not image.save(str(path), "PNG"):
        raise SystemExit(f"could not write {path}")
    return path


async def shoot_companions(out: Path, home: Path) -> list[Path]:
    """``companion-editor-ja.png`` and ``main-window-imported-ja.png`` (returns both paths)."""
    from app.cards.library import CardLibrary
    from app.runtime.runtime import Runtime
    from app.settings.model import load_settings
    from companions.testing.openai_server import OpenAITestServer
    from companions.testing.openai_server.demo_director import DemoDirector
    from scripts.main_window_shots import dispose
    from tests.ui.scripted_runtime import until
    from ui.window.main_window import MainWindow

    await asyncio.to_thread(home.mkdir, parents=True, exist_ok=True)
    for name in ("MADOI_LANGUAGE", "MADOI_GENERAL_THEME", "MADOI_CAMERA"):
        os.environ.pop(name, None)
    os.environ.update({"MADOI_HOME": str(home), "MADOI_LANGUAGE": "ja", "MADOI_CAMERA": "none"})
    imported = CardLibrary(load_settings()).import_file(character_png(home / "sakura-card.png"))
    card_id = imported.card.id
    written: list[Path] = []
    async with OpenAITestServer(models=["demo-model"], fallback=DemoDirector()) as server:
        os.environ["MADOI_LLM_BASE_URL"] = server.base_url
        runtime = Runtime(load_settings())
        await runtime.start()
        try:
            window = MainWindow(runtime)
            window.resize(1360, 820)
            window.show()
            await window.attach()
            if window.companions_desk.prompt is not None:
                window.companions_desk.prompt.close()
            runtime.parts.conversations.send("さくら、こんにちは！おすすめの本はある？", to=[card_id])
            await until(window.chat.message_shown,
                        lambda: any(b.key != "" and not b.provisional and b.header.startswith(imported.card.name("ja"))
                                    for b in window.chat.view.bubbles()), 60)  # her line said, not "thinking"
            await asyncio.sleep(0.5)  # the loop (Qt's) paints every panel's last update
            path = out / "main-window-imported-ja.png"
            if not window.grab().save(str(path)):
                raise SystemExit(f"could not write {path}")
            written.append(path)

            editor = window.companions_desk.open_editor()
            editor.resize(980, 720)
            editor.list.setCurrentRow(editor.list.count() - 1)
            await asyncio.sleep(0.5)
            path = out / "companion-editor-ja.png"
            if not editor.grab().save(str(path)):
                raise SystemExit(f"could not write {path}")
            written.append(path)
            await dispose(editor, window)
        finally:
            await runtime.stop()
            os.environ.pop("MADOI_LLM_BASE_URL", None)
    return written
