"""The default vote: a companion asks its own ChatModel for its State, as structured output.

The prompt (Japanese or English) gives the companion's persona, who is present, the recent conversation it heard,
the message that opened the turn and the closing stage the framework pushes toward; the model answers with
:class:`VoteOutput` JSON. Output is validated, repaired once, and otherwise replaced by ``listen``
(:func:`companions.llm.structured.generate_structured`); what stays unreadable raises :class:`InvalidVote`,
which the manager counts as ``listen``, so a weak model or garbage JSON never loses a turn.
The framework, not the model, decides ``from`` and ``messageId``; being addressed directly is also known without
the model and always counts as ``selected``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from companions.conversation.closing import later_stage
from companions.conversation.participant import InvalidVote, TurnContext, Vote
from companions.llm.structured import StructuredStats, generate_structured
from companions.llm.types import ChatMessage, ChatModel
from companions.protocol import Closing, Message, Speech

Language: TypeAlias = Literal["ja", "en"]
VOTE_FORMAT_NAME: Final = "vote"
TRANSCRIPT_LINES: Final = 12


class VoteOutput(BaseModel):
    """The JSON a companion's model must produce to vote."""

    model_config = ConfigDict(extra="ignore")

    state: Speech = Field(description="speak: you want the next turn; listen: you let others talk")
    importance: int = Field(ge=0, le=10, description="how much your contribution matters now, 0-10")
    selected: bool = Field(default=False, description="you were named or asked directly in the last message")
    closing: Closing = Field(default="none", description="where the conversation stands: none, pre-closing, "
                                                         "closing, terminal")
    reason: str = Field(default="", max_length=120, description="one short sentence: why")


FALLBACK: Final = VoteOutput(state="listen", importance=0, reason="")

_SYSTEM: Final[dict[Language, str]] = {
    "ja": (
        "あなたは複数人の会話に参加しているコンパニオン「{name}」(id: {id}) です。\n"
        "人物設定:\n{persona}\n\n"
        "今は発言せず、次のターンで話したいか(speak)聞きたいか(listen)だけを判断してください。\n"
        "- importance: 今あなたが話すことの重要度 (0〜10)。\n"
        "- selected: 直前の発言であなたが名指しされた、または直接質問されたなら true。\n"
        "- closing: 会話の収束段階。none (続いている) / pre-closing (話題が尽きかけ) / closing (締めに入っている) /"
        " terminal (別れの挨拶で終わるところ)。\n"
        "- reason: 理由を短く一文で。\n"
        "同じ話の繰り返しになっていたら、closing を進めてください。"
        "JSON オブジェクトだけで答えてください: "
        '{{"state": "speak"|"listen", "importance": 0-10, "selected": bool, "closing": "...", "reason": "..."}}'
    ),
    "en": (
        "You are the companion \"{name}\" (id: {id}) in a group conversation.\n"
        "Persona:\n{persona}\n\n"
        "Do not speak now. Only decide whether you want the next turn (speak) or want to listen (listen).\n"
        "- importance: how much it matters that you speak now (0-10).\n"
        "- selected: true if the last message named you or asked you directly.\n"
        "- closing: where the conversation stands: none (going on) / pre-closing (running out of topic) /"
        " closing (wrapping up) / terminal (final goodbye).\n"
        "- reason: one short sentence.\n"
        "If the conversation keeps repeating itself, move closing forward. "
        "Answer with only a JSON object: "
        '{{"state": "speak"|"listen", "importance": 0-10, "selected": bool, "closing": "...", "reason": "..."}}'
    ),
}

_USER: Final[dict[Language, str]] = {
    "ja": "参加者: {present}\n\n最近の会話:\n{transcript}\n\n直前の発言 ({sender} → {to}):\n{text}\n{hint}",
    "en": (
        "Present: {present}\n\nRecent conversation:\n{transcript}\n\n"
        "Last message ({sender} -> {to}):\n{text}\n{hint}"
    ),
}

_HINT: Final[dict[Language, str]] = {
    "ja": "\n注意: 会話が繰り返しになっています。closing を少なくとも「{stage}」にしてください。",
    "en": "\nNote: the conversation is repeating itself. Set closing to at least \"{stage}\".",
}


def _line(message: Message, names: Mapping[str, str]) -> str:
    sender = message.params.from_
    return f"{names.get(sender, sender)}: {message.params.message}"


def vote_messages(turn: TurnContext, *, companion_id: str, name: str, persona: str, language: Language,
                  names: Mapping[str, str] | None = None) -> list[ChatMessage]:
    """The vote prompt for one companion and one turn."""
    display = dict(names or {})
    earlier = [m for m in turn.history if m.params.id != turn.message.params.id][-TRANSCRIPT_LINES:]
    empty = "(なし)" if language == "ja" else "(nothing yet)"
    transcript = "\n".join(_line(m, display) for m in earlier) or empty
    everyone = "全員" if language == "ja" else "everyone"
    to = ", ".join(display.get(t, t) for t in turn.message.params.to) or everyone
    hint = _HINT[language].format(stage=turn.closing_hint) if turn.closing_hint != "none" else ""
    system = _SYSTEM[language].format(name=name, id=companion_id, persona=persona.strip() or "-")
    user = _USER[language].format(
        present=", ".join(display.get(p, p) for p in turn.present),
        transcript=transcript,
        sender=display.get(turn.message.params.from_, turn.message.params.from_),
        to=to,
        text=turn.message.params.message,
        hint=hint,
    )
    return [ChatMessage.system(system), ChatMessage.user(user)]


def to_vote(output: VoteOutput, turn: TurnContext) -> Vote:
    """The framework's view of a model's vote: directly addressed means selected; never less closed than the
    framework's push."""
    return Vote(
        state=output.state,
        importance=output.importance,
        selected=output.selected or turn.addressed_directly,
        closing=later_stage(output.closing, turn.closing_hint),
        reason=output.reason.strip(),
    )


@dataclass
class ModelVoter:
    """Votes for one companion with its own ChatModel. Use as ``Participant.vote`` (``await voter(turn)``)."""

    model: ChatModel
    companion_id: str
    name: str
    persona: str = ""
    language: Language = "ja"
    names: Mapping[str, str] = field(default_factory=dict)
    temperature: float | None = 0.2
    stats: StructuredStats = field(default_factory=StructuredStats)

    async def __call__(self, turn: TurnContext) -> Vote:
        messages = vote_messages(turn, companion_id=self.companion_id, name=self.name, persona=self.persona,
                                 language=self.language, names=self.names)
        output = await generate_structured(self.model, messages, VoteOutput, default=FALLBACK, counter=self.stats,
                                           name=VOTE_FORMAT_NAME, temperature=self.temperature)
        if output is FALLBACK:
            raise InvalidVote(f"{self.model.name}: no valid vote after a repair (counted as listen)")
        return to_vote(output, turn)
