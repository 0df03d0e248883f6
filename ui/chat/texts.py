"""The words of the chat view and the conversation list, in English and Japanese (the language setting picks)."""

from __future__ import annotations

from typing import Final

from companions.companion.filler import filler_reason
from companions.wire.protocol import Message
from ui.window.i18n import QT_TRANSLATE_NOOP, Numerus, Texts

TEXTS: Final = Texts("chat", {
    # chat view
    "you": QT_TRANSLATE_NOOP("chat", "You"),
    "everyone": QT_TRANSLATE_NOOP("chat", "Everyone"),
    "to": QT_TRANSLATE_NOOP("chat", "To: {names}"),
    "to.tooltip": QT_TRANSLATE_NOOP("chat", "Who receives your next message (everyone, or the companions you tick)"),
    # short: at 1024 px the box is narrow beside its buttons (the rest of the keys in its tooltip)
    "placeholder": QT_TRANSLATE_NOOP("chat", "Write to the companions… (Enter sends)"),
    "input.tooltip": QT_TRANSLATE_NOOP("chat", "Enter sends; Shift+Enter starts a new line; Esc interrupts"),
    "send": QT_TRANSLATE_NOOP("chat", "Send"),
    "composing": QT_TRANSLATE_NOOP("chat", "composing…"),
    "waiting": QT_TRANSLATE_NOOP("chat", "waiting to speak…"),
    "speaking": QT_TRANSLATE_NOOP("chat", "speaking"),
    "send_failed": QT_TRANSLATE_NOOP("chat", "Not sent: {error}. Your text is still in the box."),
    "not_started": QT_TRANSLATE_NOOP("chat", "the companions have not started yet"),
    "no_model": QT_TRANSLATE_NOOP(
        "chat", "the companions have no language model yet (see above, or the settings: Ctrl+,)"),
    # the language model does not answer (ui/chat/model_notice.py): what went wrong, where, and what may help
    "model.unreachable.connection-refused": QT_TRANSLATE_NOOP(
        "chat", "The companions can't reach their language model (connection refused at {host}). Is the model "
                "server running?"),
    "model.unreachable.unknown-host": QT_TRANSLATE_NOOP(
        "chat", "The companions can't reach their language model: the address {host} is not known. Check the "
                "address in the model settings."),
    "model.unreachable": QT_TRANSLATE_NOOP(
        "chat", "The companions can't reach their language model at {host}. Is the model server running, and is its "
                "address right?"),
    "model.crashed": QT_TRANSLATE_NOOP(
        "chat", "The companions' language model at {host} stopped in the middle of an answer. Start it again, or "
                "choose another model."),
    "model.timed-out": QT_TRANSLATE_NOOP(
        "chat", "The companions' language model at {host} did not answer in time. It may be busy or stuck: restart "
                "it, or choose a smaller model."),
    "model.refused": QT_TRANSLATE_NOOP(
        "chat", "The language model at {host} refused the companions' request. Check the model name and the API key "
                "in the model settings."),
    "model.other": QT_TRANSLATE_NOOP(
        "chat", "Something is wrong with the companions' language model at {host}. The model settings may help."),
    "model.checking": QT_TRANSLATE_NOOP("chat", "Madoi checks every few seconds whether it is back."),
    "model.waiting": QT_TRANSLATE_NOOP(
        "chat", "Your message waits in the box and goes by itself as soon as the model answers again."),
    "model.settings": QT_TRANSLATE_NOOP("chat", "Model settings…"),
    "model.restart": QT_TRANSLATE_NOOP("chat", "Restart the model"),
    "earlier": QT_TRANSLATE_NOOP(
        "chat", "Earlier messages of this conversation are not shown here; search finds them."),
    "note.edited": QT_TRANSLATE_NOOP("chat", "edited"),
    # a stock filler said instead of the companion's own line, and why (companions/companion/filler.py)
    "filler.repeat": QT_TRANSLATE_NOOP("chat", "stand-in: the model repeated itself"),
    "filler.parrot": QT_TRANSLATE_NOOP("chat", "stand-in: the model echoed the message"),
    "filler.not-itself": QT_TRANSLATE_NOOP("chat", "stand-in: the model spoke as someone else"),
    "filler.language": QT_TRANSLATE_NOOP("chat", "stand-in: the model used another language"),
    "filler.empty": QT_TRANSLATE_NOOP("chat", "stand-in: nothing usable came back"),
    "filler.time": QT_TRANSLATE_NOOP("chat", "stand-in: no time to try again"),
    "filler.prompt": QT_TRANSLATE_NOOP("chat", "stand-in: the model wrote its instructions back"),
    "filler.contradiction": QT_TRANSLATE_NOOP("chat", "stand-in: the model contradicted itself"),
    "emotion.happy": QT_TRANSLATE_NOOP("chat", "happy"),
    "emotion.sad": QT_TRANSLATE_NOOP("chat", "sad"),
    "emotion.angry": QT_TRANSLATE_NOOP("chat", "angry"),
    "emotion.neutral": QT_TRANSLATE_NOOP("chat", "neutral"),
    # conversation list
    "conversations": QT_TRANSLATE_NOOP("chat", "Conversations"),
    "new": QT_TRANSLATE_NOOP("chat", "New"),
    "new.tooltip": QT_TRANSLATE_NOOP("chat", "Start a new conversation"),
    "delete": QT_TRANSLATE_NOOP("chat", "Delete…"),
    "delete.tooltip": QT_TRANSLATE_NOOP("chat", "Delete the selected conversation"),
    "untitled": QT_TRANSLATE_NOOP("chat", "New conversation"),
    "when.today": QT_TRANSLATE_NOOP("chat", "today {time}"),
    "when.yesterday": QT_TRANSLATE_NOOP("chat", "yesterday {time}"),
    "summary": Numerus.translate("chat", "%n messages · {when}", None, 0),
    "confirm.title": QT_TRANSLATE_NOOP("chat", "Delete this conversation?"),
    "confirm.body": Numerus.translate("chat", "“{title}” and its %n messages will be deleted for good.", None, 0),
    "confirm.delete": QT_TRANSLATE_NOOP("chat", "Delete"),
    "confirm.cancel": QT_TRANSLATE_NOOP("chat", "Cancel"),
    "failed": QT_TRANSLATE_NOOP("chat", "Could not do it: {error}"),
})

EMOTION_MARKS: Final[dict[str, str]] = {"happy": "😊", "sad": "😢", "angry": "😠", "neutral": "😐"}


def chat_text(key: str, language: str | None = None, /, **values: object) -> str:
    """The text for ``key`` in ``language`` ("ja" or "en"), with ``values`` filled in."""
    return TEXTS.text(key, language, **values)


def message_note(message: Message, language: str | None = None, *, edited: bool = False) -> str:
    """The quiet note a message's bubble carries: "edited" once the user edited it, else why a stock filler stood in
    for the companion's own line (nothing for a line of its own)."""
    if edited:
        return chat_text("note.edited", language)
    reason = filler_reason(message)
    return chat_text(f"filler.{reason}", language) if reason is not None else ""


def emotion_label(emotion: str, language: str | None = None) -> str:
    """What the view shows for an emotion: a face and a word (the word alone says it where faces do not render)."""
    mark = EMOTION_MARKS.get(emotion, "")
    key = f"emotion.{emotion}"
    word = chat_text(key, language) if key in TEXTS else emotion
    return f"{mark} {word}".strip()
