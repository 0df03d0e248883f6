"""Relations between things, by kind, for the query classifier: what makes a question a relationship question.

The first rules listed the phrasings they had been shown ("how does X affect Y", 「AとBの関係」); people relate
two things in many more ways. The cues here are grouped by the kind of relation they express, each kind in
Japanese and English, and written as word families (every form of a verb), not as sentences:

* cause and effect -- X affects, shapes, feeds into, ripples through Y; Y happened because of, due to, thanks to
  X; what made, what is behind Y; 「Xが Yに響いた」「Xのせいで」「Xのおかげで」;
* agreement and conflict -- agree, disagree, contradict, clash, line up; 「食い違う」「矛盾」「一致」「ぶつかる」;
* how two things are tied -- relate to, tie into, fit with; X's relationship to/with Y; 「提携」「取引」「接点」;
* two things in one yes/no question ("do the textbook and the paper ...", "was my father born before my uncle",
  "is grandpa's town near my parents'?").

Some words relate two things only when two things are named (「AとBは近い？」 but 「駅から近い店は？」):
:data:`PAIR_PREDICATE` counts only with a pair 「AとB」. None of these words counts in a question that asks for a
name, a number, a time or a place (:func:`asks_for_fact`): there they describe the thing asked for.
"""

from __future__ import annotations

import re

# Cause and effect, agreement and conflict, ties: a relationship cue wherever it stands.
_EN_RELATION = re.compile(
    r"\b(affect(s|ed|ing)?|influenc(e|es|ed|ing)|impact(s|ed|ing)? on|shap(e|es|ed|ing)|ripple[sd]?|rippling"
    r"|knock-on|feeds? into|fed into|stems? from|stemmed from|contribut(e|es|ed|ing) to|because of|due to|owing to"
    r"|as a result of|thanks to|what(?:'s| is| was)? behind|what (made|makes|caused|causes|triggered|drove|drives)"
    r"|agree[sd]?|disagree\w*|contradict\w*|conflict(s|ed|ing)? with|clash\w*|at odds|line up|consistent with"
    r"|contrast\w*|(relat(e|es|ed)|connect(s|ed)?|tie[sd]?|link(s|ed)?|fit(s)?) (in)?to|tie[sd]? in"
    r"|(relationship|relation|connection|link|ties) (to|with)|introduced \w+ to)\b",
    re.I,
)
# A yes/no question about two things: "do A and B ...", "was A ... before B", "is A near B".
_EN_TWO_THINGS = re.compile(
    r"^(do|does|did|are|were|have|had|can|could|will|would)\s+(the |my |our |his |her |their |\w+'s )?[\w'-]+"
    r"( [\w'-]+)? and (the |my |our |his |her |their |\w+'s )?[\w'-]+"
    r"|^(is|are|was|were|did|does|do|has|have)\b.+\b(before|after|earlier than|later than|near|close to|far from"
    r"|next to|closer to|farther from|further from)\b"
    r"|^(did|does|do|has|have|will|would)\b.+\bhelp(ed|s)?\b",
    re.I,
)
# Before and after: what changed once something happened (「引っ越してから…変わった」「値下げしたら…伸びた」,
# "has my sleep improved since I started running", "did moving change my commute").
_CHANGE = (r"変わ|変化|増え|減|上が|下が|伸び|落ち|良くな|よくな|悪くな|改善|悪化|高くな|安くな|速くな|遅くな|楽にな"
           r"|治っ|治り|治る|消え")
_JA_AFTER_EVENT = re.compile(rf"(てから|でから|たら|だら|して以来|以来|以降|のあと|の後)[^。？?]*({_CHANGE})")
_EN_AFTER_EVENT = re.compile(
    r"\b(improv|worsen|chang|increas|decreas|drop|rose|rise|rising|grow|grew|shrank|shrink|fell|fall|got better"
    r"|got worse|gotten better|gotten worse)\w*\b.*\bsince\b"
    r"|\bsince\b.*\b(improv|worsen|chang|increas|decreas|drop|rose|rise|grow|grew|fell|got better|got worse)\w*"
    r"|\bhappen\w* (to [\w' ]+ )?(after|since)\b"
    r"|^(did|does|do|has|have|will|would|could|can) \w+ing\b"  # a gerund subject: "did switching to X help?"
    r"|\bmake (the |my |our |him |her |them |me |us )?\w+ (\w+er|more \w+|less \w+|better|worse)\b",
    re.I,
)
_JA_RELATION = re.compile(
    r"響い|響く|響き|もたら|左右|引き起こ|招い|食い違|矛盾|一致し|ぶつか|噛み合|かみ合|馴れ初め|紹介し"
    r"|効い(た|て)|につなが"
)
# Why, said casually (「なんで遅れたの？」, "how come"), and old against new (「新旧の見積書」): relationship cues
# even in a question that asks for a fact.
_ALWAYS = re.compile(r"なんで(?!しょう|す)|何故|どういうわけ|なにゆえ|新旧|ビフォー|\bhow come\b", re.I)
# A question that asks for a name, a number, a time, a place or a person asks for a fact: a cause or agreement word
# in it usually describes the thing asked for (「大雪をもたらす気団は何気団？」「一致しない応力を何という？」,
# "what is the drug that affects sleep called?"), so the weaker relation words above do not count there.
_ASKS_FOR_FACT = re.compile(
    r"何と(呼|言|い)|なんと(呼|言|い)|何という|なんという|何[\u4e00-\u9fff]|いつ|誰|だれ|どこ|とは何|何か[。？?]?$"
    r"|の名前|は[？?]$|とは[？?]?$"
    r"|^(when|where|who|whom|how many|how much|what time|what date|what year)\b"
    r"|\bwhat(?:'s| is| was| are| were) the (name|number|date|address|title|price|cost|year)\b|\bcalled\?",
    re.I,
)
# Relating words that need two things named together: 「AとBは近い？」「AとBの提携」「AとBの出会い」.
PAIR_PREDICATE = re.compile(
    r"近い|遠い|離れ|隣|早い|遅い|早かった|遅かった|先に|後に|知り合|出会|結婚|協力|共演|対戦|競|仲(?!介)|関わ|縁|似て|似た"
    r"|合併|契約|同い年|同期|同級|同じ|提携|取引|交流|接点|付き合い|つきあい"
)


def asks_for_fact(query: str) -> bool:
    """Whether ``query`` asks for a name, a number, a time, a place or a person."""
    return _ASKS_FOR_FACT.search(query.strip()) is not None


def relation_cues(query: str) -> list[str]:
    """The relation words of any kind in ``query`` (no pair needed); in a question that asks for a fact, only why
    and a yes/no question about two things count (and old against new)."""
    query = query.strip()
    patterns = (_ALWAYS, _EN_TWO_THINGS) if asks_for_fact(query) else (
        _ALWAYS, _EN_TWO_THINGS, _EN_RELATION, _EN_AFTER_EVENT, _JA_RELATION, _JA_AFTER_EVENT)
    return [m.group(0) for p in patterns if (m := p.search(query))]


# Cause and effect only: with a question about a whole collection it makes a composite (hybrid) question.
CAUSE = re.compile(
    r"響|もたら|左右|引き起こ|招い|のせい|おかげ|要因|背景"
    r"|\b(affect\w*|influenc\w*|shap(e|es|ed|ing)|ripple[sd]?|rippling|knock-on|feeds? into|fed into|stems? from"
    r"|contribut\w* to|because of|due to|owing to|thanks to|behind|what (made|makes|triggered|drove|drives)"
    r"|tends? to trigger|explain\w* why)\b",
    re.I,
)
