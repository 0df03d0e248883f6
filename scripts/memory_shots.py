"""Pictures of long-term memory for the README: the Memory view, and what the companions recalled for a turn (the
Turns panel's list), on the real runtime with conversations imported as if said on earlier days.

    xvfb-run -a .venv/bin/python scripts/memory_shots.py [OUT_DIR]   (default docs/screenshots)

Writes memory-view-ja.png and turns-recalled-ja.png; the runtime's home is a temporary folder.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PAST = [  # (days ago, [(from, to, text)])
    (9, [("user", [], "うちの猫、モチっていうんだ。白くて、一日中寝てるよ"),
         ("akari", ["user"], "モチちゃん！名前からしてふわふわしてそう"),
         ("hina", ["user"], "白い猫さん、写真も見てみたいな")]),
    (6, [("user", ["akari"], "来月、妹と沖縄に行くことになった"),
         ("akari", ["user"], "いいなあ、沖縄！海の写真、たくさん撮ってきてね")]),
    (2, [("user", [], "最近、朝にジョギングを始めたんだ。まだ三日目だけど"),
         ("souta", ["user"], "三日続けば、あとは習慣になります。無理はしないように"),
         ("akari", ["user"], "えらい！わたしも一緒に走りたいな")]),
]


async def shoot(out: Path) -> None:
    from app.conversations.transfer import ConversationImporter, ImportReport, TransferConversation
    from app.memory.access import RuntimeMemory
    from app.runtime.panels import RuntimePeople
    from app.runtime.runtime import Runtime
    from app.settings.model import load_settings
    from companions.wire.protocol import Message
    from ui.memory.recalled_view import RecalledView
    from ui.memory.view import MemoryView

    runtime = Runtime(load_settings())
    await runtime.start()
    try:
        assert runtime.parts.search is not None
        assert runtime.parts.cast.store is not None
        await runtime.parts.search.reindex()
        importer = ConversationImporter(runtime.store, runtime.parts.cast.store, runtime.parts.search.engine,
                                        user_id="user", names={c.id: c.name for c in runtime.parts.cast})
        now = dt.datetime.now().astimezone().replace(hour=20, minute=5, second=0, microsecond=0)
        for days, lines in PAST:
            start = now - dt.timedelta(days=days)
            conversation = TransferConversation.model_validate({"title": lines[0][2][:20], "messages": [
                {"id": f"shot-{days}-{n}", "from": sender, "to": to, "message": text,
                 "time": (start + dt.timedelta(minutes=n)).isoformat()} for n, (sender, to, text) in enumerate(lines)]})
            await importer.add(conversation, ImportReport())

        people = RuntimePeople(runtime)
        view = MemoryView(RuntimeMemory(runtime), people)
        view.companion.setCurrentIndex(view.companion.findData("akari"))
        view.resize(720, 420)
        view.show()
        await view.refresh()
        view.lines.item(1).setSelected(True)
        await asyncio.sleep(0.3)
        view.grab().save(str(out / "memory-view-ja.png"))
        view.close()

        recalled = RecalledView(runtime.bus, people)
        recalled.resize(460, 260)
        question = Message.create(from_="user", message="ねえ、うちの猫の名前覚えてる？あと旅行の話も", to=[])
        from companions.memory.recall import MemoryRecalled

        for companion in ("akari", "hina"):
            recall = runtime.parts.cast.companions[companion].recall
            assert recall is not None
            items = await recall.port.recall(companion, question.params.message)
            recalled.show_recalled(MemoryRecalled(companion, question.params.id, tuple(items)))
        recalled.show()
        await asyncio.sleep(0.3)
        recalled.grab().save(str(out / "turns-recalled-ja.png"))
        recalled.close()
    finally:
        await runtime.stop()


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    home = tempfile.mkdtemp(prefix="madoi-memory-shots-")
    for name in [n for n in os.environ if n.startswith("MADOI_")]:
        del os.environ[name]
    os.environ.update(MADOI_HOME=home, MADOI_LANGUAGE="ja", MADOI_BRIDGE_PORT="0", MADOI_CAMERA="none",
                      MADOI_VOICE_ENABLED="false")
    import qasync
    from PySide6.QtWidgets import QApplication

    from ui.window.i18n import use_language

    app = QApplication(sys.argv[:1])
    app.setQuitOnLastWindowClosed(False)  # each picture is a window of its own, closed after it is taken
    use_language("ja")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        loop.run_until_complete(shoot(out))
    print(f"wrote {out / 'memory-view-ja.png'} and {out / 'turns-recalled-ja.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
