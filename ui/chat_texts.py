"""The words of the chat view and the conversation list, in English and Japanese (the language setting picks)."""

from __future__ import annotations

from typing import Final

TEXTS: Final[dict[str, tuple[str, str]]] = {  # key: (en, ja)
    # chat view
    "you": ("You", "あなた"),
    "everyone": ("Everyone", "全員"),
    "to": ("To: {names}", "宛先: {names}"),
    "to.tooltip": ("Who receives your next message (everyone, or the companions you tick)",
                   "次のメッセージの宛先（全員、またはチェックしたコンパニオン）"),
    "placeholder": ("Write to the companions… (Enter sends, Shift+Enter: new line)",
                    "コンパニオンに話しかける…（Enter で送信、Shift+Enter で改行）"),
    "send": ("Send", "送信"),
    "composing": ("composing…", "考え中…"),
    "waiting": ("waiting for the floor…", "話す順番を待っています…"),
    "speaking": ("speaking", "話しています"),
    "send_failed": ("Not sent: {error}. Your text is still in the box.",
                    "送信できませんでした: {error}。入力した文はそのまま残っています。"),
    "not_started": ("the companions have not started yet", "コンパニオンがまだ起動していません"),
    "no_model": ("the companions have no language model yet (see above, or the settings: Ctrl+,)",
                 "コンパニオンにまだ言語モデルがありません（上の案内か、設定 Ctrl+, から）"),
    "earlier": ("Earlier messages of this conversation are not shown here; search finds them.",
                "この会話のこれより前のメッセージは表示していません（検索で見つかります）。"),
    "emotion.happy": ("happy", "うれしい"),
    "emotion.sad": ("sad", "かなしい"),
    "emotion.angry": ("angry", "おこっている"),
    "emotion.neutral": ("neutral", "ふつう"),
    # conversation list
    "conversations": ("Conversations", "会話"),
    "new": ("New", "新しい会話"),
    "new.tooltip": ("Start a new conversation", "新しい会話を始めます"),
    "delete": ("Delete…", "削除…"),
    "delete.tooltip": ("Delete the selected conversation", "選んだ会話を削除します"),
    "untitled": ("New conversation", "新しい会話"),
    "summary": ("{n} messages · {when}", "{n} 件 · {when}"),
    "confirm.title": ("Delete this conversation?", "この会話を削除しますか？"),
    "confirm.body": ("“{title}” and its {n} messages will be deleted for good.",
                     "「{title}」と {n} 件のメッセージを完全に削除します。元に戻せません。"),
    "confirm.delete": ("Delete", "削除する"),
    "confirm.cancel": ("Cancel", "キャンセル"),
    "failed": ("Could not do it: {error}", "できませんでした: {error}"),
}

EMOTION_MARKS: Final[dict[str, str]] = {"happy": "😊", "sad": "😢", "angry": "😠", "neutral": "😐"}


def chat_text(key: str, language: str, **values: object) -> str:
    """The text for ``key`` in ``language`` ("ja" or "en"), with ``values`` filled in."""
    en, ja = TEXTS[key]
    template = ja if language == "ja" else en
    return template.format(**values) if values else template


def emotion_label(emotion: str, language: str) -> str:
    """What the view shows for an emotion: a face and a word (the word alone says it where faces do not render)."""
    mark = EMOTION_MARKS.get(emotion, "")
    key = f"emotion.{emotion}"
    word = chat_text(key, language) if key in TEXTS else emotion
    return f"{mark} {word}".strip()
