"""The patterns and text analysis behind the rule-based query classifier (seed 002), for Japanese and English.

Two rule sets live here:

* the seed's plain rules, verbatim (``SEED_GLOBAL_PATTERNS``, ``SEED_RELATIONSHIP_PATTERNS``), kept as the baseline
  the benchmark measures against;
* Madoi's rules, which add the cues people actually use when they compare two things ("which of A and B ...",
  「AとB、どちらが…」, "is A older than B") and when they ask about a whole collection ("key themes", 「傾向」).

Japanese is analysed with MeCab over Open JTalk's dictionary (nouns and proper nouns become entities and keywords);
English with plain word patterns. Everything here is pure and fast (well under a millisecond per query).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from companions.search.classify.japanese import analyse_to, noun_runs
from companions.search.classify.relations import CAUSE, PAIR_PREDICATE, asks_for_fact, relation_cues

# --- the seed's rules, verbatim (baseline) -------------------------------------------------------------------------

SEED_GLOBAL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE if p.isascii() else 0)
    for p in (
        r"全体(の|は)", r"概要", r"テーマ", r"主(な|要な)話題", r"何について", r"どんな内容", r"要約", r"まとめ",
        r"overview", r"summary", r"what is this (about|document)", r"main (topic|theme)",
    )
)
SEED_RELATIONSHIP_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE if p.isascii() else 0)
    for p in (
        r"(.+)と(.+)の関係", r"(.+)と(.+)の違い", r"(.+)と(.+)の比較", r"(.+)が(.+)に与える影響", r"なぜ(.+)が(.+)",
        r"(.+)はなぜ(.+)", r"(.+)と(.+)はどう関連",
        r"relationship between", r"difference between", r"compare (.+) (and|with) (.+)",
        r"how does (.+) (affect|impact) (.+)",
    )
)

# --- Madoi's rules ---------------------------------------------------------------------------------------------------

# Questions about a whole collection: themes, trends, summaries, "what is all this about". The seed's cues come
# first (テーマ no longer fires inside テーマパーク or テーマ曲, which name a thing, not a theme).
GLOBAL_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"全体|概要|テーマ(?!パーク|曲|ソング|館)|主(な|要な)(話題|論点|ポイント|トピック)|何について|どんな内容|要約|まとめ"),
    re.compile(r"全般|総じて|総括|大まか|おおまか|ざっくり|一言で|要点|論点|トピック|トレンド|傾向|一通り"),
    re.compile(r"(すべて|全て|全部|一連)の(文書|資料|ドキュメント|ファイル|ノート|メモ|記事|会話|議事録)"),
    re.compile(r"(何|なに)が(書かれ|語られ|話され|議論され)|どんな(こと|話|話題|議論|意見)(が|について)"),
    re.compile(r"(よく|繰り返し|たびたび|毎回|いつも|何度も)(のように)?(出て|登場|話題に|語られ|話され)"),
    re.compile(r"\b(overview|summary|summari[sz]e|summari[sz]ing|gist|big picture|high[- ]level|in a nutshell"
               r"|takeaways?)\b", re.I),
    re.compile(r"\b(main|key|major|central|common|recurring|overall|general|overarching) "
               r"(topics?|themes?|points?|ideas?|issues?|trends?|findings?|messages?|subjects?|concerns?)\b", re.I),
    re.compile(r"\b(overall|trends?|patterns?|in general)\b", re.I),
    re.compile(r"\bwhat (is|are) (this|these|the|all the|my|our) "
               r"(documents?|notes?|files?|texts?|corpus|collection|articles?|conversations?|material)s? "
               r"(mostly |mainly |all |generally )?about\b|\bwhat is this (about|document)", re.I),
    re.compile(r"\bwhat (kinds?|sorts?|types?) of (topics|subjects|things|themes|content)\b", re.I),
    re.compile(r"\b(mostly|mainly|generally) (about|discuss|discussing|talk|talking|cover|covering|say|saying)\b",
               re.I),
    re.compile(r"\bwhat (do|does) (the|these|this|all the|my|our) \w+ (mostly |mainly )?(cover|discuss|say)\b", re.I),
    re.compile(r"\b(across|throughout) (all |the |these |my )*(documents?|notes?|files?|corpus|collection"
               r"|archives?|sources?|records?|data|diary)\b", re.I),
    re.compile(r"\b(across|throughout) (all|everything|the (whole|entire))\b|\bwhat (themes|topics|trends)\b", re.I),
)

# What a person keeps: notes, diaries, minutes, mail, papers... Asked about as a whole ("what do my notes keep
# coming back to", 「保存した記事はどんなジャンルに偏っている？」), a collection noun comes with an aggregate word;
# either alone is common in questions about one fact ("the Wi-Fi password in my notes", 「一番高い山」).
_JA_COLLECTION = (r"ノート|メモ|日記|議事録|資料|論文|記事|レシピ|記録|会話|メール|ファイル|文書|日報|フィードバック"
                  r"|レビュー|ブックマーク|ログ|履歴|知識ベース|レポート|報告書|ドキュメント|アーカイブ|クリップ"
                  r"|インタビュー|アンケート|顧客の声|データ|書いた(もの|文章)|文章|フォルダ|手帳|写真|相談|投稿|ブログ"
                  r"|チャット|スレッド|エッセイ|週報|月報|取材|家計簿|動画|溜ま|溜め")
_JA_AGGREGATE = (r"多い|多く|一番|よく|いつも|共通|通底|繰り返|目立|中心|主な|主要|大きな|流れ|移り変わ|変遷"
                 r"|振り返|ハイライト|一覧|三行|一言|ひとこと|ざっと|ざっくり|大づかみ|大まか|偏|ジャンル|分野"
                 r"|雰囲気|どんな|結局|カバー|守備範囲|癖|推測|動き|読み取|総合|踏まえ|通して|見渡|全部|すべて|全て"
                 r"|何が入って|見返|毎回|大きく分け|要するに|波|散らば|拾い集め|全体像|分類|カテゴリ|広がり"
                 r"|課題|あぶり出|洗い出|空気感|割いて|並べ|共通点|見え(る|て|た)|スタイル|好み|特徴|(?<!何)種類|系が|ランキング"
                 r"|モチーフ|印象|全体的|ひっくるめ|通読|要点|盛り上が|変わってき|変化してき|増えてい|減ってい|いちばん"
                 r"|読み返|目を通|ひと通り|流行|はやり|ハマ|夢中|今まで|これまで")
_EN_COLLECTION = (r"notes|notebooks?|journal|diar(y|ies)|minutes|documents|docs|papers|articles|recipes|records|logs"
                  r"|chats?|conversations|(chat|conversation) history|messages|e?mails|files|reports|feedback"
                  r"|reviews|bookmarks|archive|collection|material|materials|knowledge base|essays|drafts|tickets"
                  r"|(survey )?responses|interviews|entries|reading list|clips|sources|corpus|posts|letters"
                  r"|writing|saved \w+|transcripts|answers|links|newsletters|threads|comments|photos|screenshots"
                  r"|slides|memos|surveys|retros|retrospectives|journals|meetings|calls|sessions|blog( posts)?"
                  r"|forum|podcasts|episodes|videos|history|folder|inbox|timeline|log|drive|directory|wiki|vault"
                  r"|(my|our|all (of )?(my|our|the)|these|those) (?!two|three|both)(\w+ )?\w+s")
_EN_AGGREGATE = (r"mostly|mainly|generally|usually|overall|whole|all|every|across|throughout|recurr\w*"
                 r"|coming back|dominant|dominate|most often|most common|common|frequent\w*|main|key|major|themes?"
                 r"|topics?|subjects?|genres?|patterns?|trends?|kinds? of|sorts? of|types? of|stands? out|mood"
                 r"|tone|shift\w*|changed?|evolv\w*|highlights|outline|skim|runs? through|thread|concern\w*"
                 r"|conclusions|describe|cover|lately|these days|over the (past|last) \w+|(past|last) (year|months"
                 r"|weeks|quarter)|this (year|quarter|month)|vibe|characteri[sz]e|through-?line|big ideas|broad\w*"
                 r"|categor\w*|organi[sz]e|group|cluster|top (\w+ )?(three|five|ten|\d+)|take up|recap"
                 r"|sentiment|style|complaints|(they're|they are|it's) about")
COLLECTION_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"({_JA_COLLECTION}).*({_JA_AGGREGATE})|({_JA_AGGREGATE}).*({_JA_COLLECTION})"),
    re.compile(rf"\b({_EN_COLLECTION})\b.*\b({_EN_AGGREGATE})\b|\b({_EN_AGGREGATE})\b.*\b({_EN_COLLECTION})\b",
               re.I),
    # Cues that speak of a whole on their own.
    re.compile(r"全(メモ|ノート|記事|ファイル|資料|文書|データ|件|体像)|大づかみ|三行で|一言で|ひとことで|総括|俯瞰|概観"
               r"|振り返って|大きな流れ|移り変わり|(最近|いつも)よく(考え|話|書|相談|悩)"
               r"|(ノート|メモ|資料|記事|論文|文書|ファイル|レポート|写真|データ)(群|一式|全部|ぜんぶ)"),
    re.compile(r"\b(gist|big picture|sum (it |this |them |everything )?up|sum up|wrap up|boil .+ down|roughly speaking"
               r"|broadly|in a nutshell|at a glance|bird'?s[- ]eye|looking back|looking at (everything|it all|all)"
               r"|as a whole|on the whole|all in all|in (one|a few|two|three) (lines?|sentences?|words?))\b"
               r"|\b(mostly|mainly|usually|most) (been )?(think|talk|writ|worr|discuss|ask)\w*"
               r"|\bwhat (have|has) (i|we|you|he|she|they|the \w+) been \w+ing (about|on)\b"
               r"|\b(rundown|run-through|roundup|digest|recap) of\b"
               r"|\b(sort|classify|categori[sz]e|group|cluster|bucket|organi[sz]e) (all )?(of )?"
               r"(my|our|the|these|those) [\w' ]+ (into|by)\b"
               r"|\b(what|which) (subjects|topics|themes|genres|kinds|sorts|types|things) (have|has|do|did) \w+"
               r" [\w ]*\bmost\b"
               r"|\b(years?|months?|weeks?|decades?|quarters?) (worth )?of (my |our |the )?(\w+ )?"
               rf"({_EN_COLLECTION})\b", re.I),
)
# A question scoped to the whole collection ("across all my notes", 「これまでの会話全体で」): with a cause, a relation
# or a comparison, even of two named things, it is a composite (hybrid) question.
_SCOPE = re.compile(r"全体|全般|総じて|これまでの|すべての|全ての|全部の|通して|通じて|総合"
                    r"|\b(across|throughout|overall|in general|generally|everything|as a whole)\b", re.I)
_COMPARING = re.compile(r"違|異な|比べ|比較|差|\b(differ\w*|diverg\w*|compar\w*|contrast\w*)\b", re.I)

# Two things set side by side: 「AとB、どちらが…」「AとBのうち」「AとBでは」, with a comma or a particle after B.
# A and B hold no が/を/は: a clause ("Xが所属するグループと…") is not one of two things set side by side.
_JA_COORDINATION = re.compile(
    r"(?P<a>[^、。？?！!\sがをは]{1,40}?)と(?!は|して|する|し|いう|いった|なっ|なる|なり|共に|ともに|言|思)"
    r"(?P<b>[^、。？?！!\sがをは]{1,40}?)(?:、|，|,|\s|で(?:は)?(?=[^き])|のうち|のどちら|のどっち|は、|は(?=どちら|どっち|同じ|共に|ともに|二人とも|両方|違う|異な|それぞれ))"
)
# Words that compare or relate: "which of", "same", "in common", "more than", "earlier".
_JA_COMPARISON = re.compile(
    r"どちら|どっち|いずれ|同じ|共通|違う|違い|異な|二人とも|両方|双方|両者|ともに|共に|それぞれ|比べ|比較"
    r"|(?<!に)より(?!前|後|上の)|ほうが|方が|年上|年下|年長|ふたりとも|2人とも|先に|[\d０-９一二三四五六七八九十何]倍"
)
# 「AとBの開始日が早いのは」: two things, then a comparative adjective picking one of them.
_JA_PICK_ONE = re.compile(
    r"と.+?(早|遅|多|少な|高|低|大き|小さ|長|短|古|新し|若|広|狭|重|軽|近|遠)(い|かった)のは"
)
# 『A』『B』 or 「A」「B」 side by side, without と.
_JA_QUOTED_PAIR = re.compile(r"[『「](?P<a>[^』」]+)[』」]\s*(?:と|、|,)?\s*[『「](?P<b>[^』」]+)[』」]")
# 「プロジェクト関連の文書」「関連する記事」: 関連 as "related" names a set of things, not a relation asked about.
_RELATED = r"関連(?!の|する|した|記事|資料|文書|書類|ファイル)"
_JA_RELATION = re.compile(rf"関係|{_RELATED}|つながり|繋がり|つなぐ|繋ぐ|影響|因果|なぜ|どうして|原因|理由|知り合|出会"
                          r"|対立|変更点|相違点|共通点|差分|関わ|結びつ|のせい|せいで|おかげで|親し|仲が|仲は|仲良"
                          r"|二つの|2つの|二人の|2人の|両社|両チーム"
                          r"|は[^、。？?]{1,20}の(部下|上司|兄|姉|弟|妹|父親?|母親?|息子|娘|夫|妻|友達|友人|同僚|先輩|後輩"
                          r"|親戚|いとこ|恋人|師匠|弟子|祖父|祖母|叔父|叔母|伯父|伯母)(？|\?|なの|ですか|か|$)"
                          r"|と[^、。？?]{1,20}の[^、。？?]{0,10}(差|違い|比較)")

# English comparison and relation cues.
_EN_RELATIONSHIP = re.compile(
    r"\b(relationship|relation|relations|connection|link|difference|differences|similarit(y|ies)|contrast)"
    r" (between|of|among)\b"
    r"|\b(compare|compared|comparing|comparison|versus|vs\.?|differ|differs|different from|in common|the same)\b"
    r"|\b(both|either|neither)\b"
    r"|\b(which|who)\b.*\bor\b|\bwhich of\b"  # "which is older, A or B", "which of A and B"
    r"|\b[A-Z][\w.+#-]* or (the )?[A-Z]"  # "is Sony or Panasonic ...": a choice between two named things
    r"|\b\w+er than\b|\b(more|less|fewer) \w+ than\b"
    r"|\bhow (does|did|do|is|are|was|were) .+ (affect|impact|influence|relate|related|connected|shape|change)\b"
    r"|\b(why|what causes|what caused|effect of|impact of|influence of)\b"
    r"|\b(cause|causes|caused|lead to|leads to|led to|result in|results in|resulted in)\b"
    r"|\b(impact|effect|influence)\b.*\bon\b|\bbetween\b.+\band\b"
    r"|\b(?!where\b)(\w+er|more|less|better|worse)\b.+\b(than|or)\b|\b(distinguish\w*|separat\w*|apart from"
    r"|outperform\w*|overlap\w*|in common|hurt|harm\w*|boost\w*|differences?|stacks? up|links|linked to|tied to"
    r"|break|broke|broken by)\b|\b(the|these|those|my) two\b|\brole\b.+\b(in|of|on)\b",
    re.I,
)
# Two named (capitalised) things together: "Alice and Bob", "Alice know Bob", "Mika Ken's cousin" (case-sensitive).
_EN_NAMED_RELATION = re.compile(
    r"\b(?!(?:What|How|Why|Which|Who|When|Where|Did|Do|Does|Is|Are|Was|Were)\b)[A-Z][\w'-]* and [A-Z][\w'-]*"
    r"|\b[A-Z]\w* (knows?|knew|met|meet|married|marry|works? with|worked with|reports? to|reported to) [A-Z]"
    r"|\b[A-Z]\w* and (his|her|their) \w+"
    r"|\b[A-Z]\w* [A-Z]\w*'s (cousin|brother|sister|father|mother|parent|son|daughter|wife|husband|partner"
    r"|friend|boss|colleague|uncle|aunt|grand\w+)\b")
# Cause and relation words; with a global cue they make a composite (hybrid) question ("why did the trend change").
_CAUSAL = re.compile(rf"関係|{_RELATED}|影響|因果|なぜ|どうして|原因|理由|きっかけ|要因|背景|つなが|繋が|結びつ"
                     r"|相互|関わ"
                     r"|\b(why|cause[sd]?|because|reasons?|affect(s|ed)?|impact(s|ed)?|influence[sd]?"
                     r"|relat(e|es|ed|ion|ions|ionship)|connect(s|ed)?|driv(es|ing)|drive (up|down)|trigger(s|ed)?"
                     r"|link(s|ed)?"
                     r"|lead(s)? to|led to|shap(e|es|ing))\b",
                     re.I)


# The two things of "between A and B", "compare A with B", "A vs B".
_EN_PAIR = re.compile(
    r"\b(?:between|compare|comparing)\s+(?P<a>[\w.+#-]+(?: [A-Z][\w.+#-]*)*)\s+(?:and|with|to|vs\.?)\s+"
    r"(?P<b>[\w.+#-]+(?: [A-Z][\w.+#-]*)*)"
    r"|(?P<c>[A-Z][\w.+#-]*) (?:vs\.?|versus) (?P<d>[A-Z][\w.+#-]*)",
    re.I,
)


# "Was Nara the capital before Kyoto?": two named things ordered in time.
_EN_ORDER = re.compile(r"\b(before|after|earlier than|later than)\b", re.I)


@dataclass(frozen=True, slots=True)
class RuleMatch:
    """What the rules saw in a query: the cues that fired and the entities a coordination pattern captured."""

    global_cues: tuple[str, ...]
    relationship_cues: tuple[str, ...]
    pair: tuple[str, ...]  # the A and B of 「AとB」 / "between A and B", when captured
    causal: bool  # a cause or relation word (なぜ, 影響, why, affect) is present
    scope: bool = False  # the question is scoped to the whole collection (全体, これまでの, across, overall)
    comparing: bool = False  # a comparison word (違い, 比べ, differ, diverge)


# The rules read at most this many characters of a text: its first and its last half of them, joined by a newline
# (no pattern's ``.`` crosses it). A query is short; a long message (recall classifies every message a companion
# answers) keeps its cues where people put them, in its opening or its closing question. The seed's ``(.+)と(.+)``
# patterns backtrack in cubic time: over a 2,000-character message they took 2.5 s (12.5 s at load 16) on the loop;
# over 256 characters 5 ms for prose, at most 60 ms for text made of their own cue words (load 12).
RULES_READ_CHARS = 256


def rules_text(text: str) -> str:
    """What the rules read of ``text`` (see :data:`RULES_READ_CHARS`)."""
    if len(text) <= RULES_READ_CHARS:
        return text
    half = RULES_READ_CHARS // 2
    return f"{text[:half]}\n{text[-half:]}"


def match_rules(query: str) -> RuleMatch:
    """Finds Madoi's global and relationship cues in ``query`` (its opening and closing, :func:`rules_text`)."""
    query = rules_text(query)
    global_cues = tuple(m.group(0) for p in (*GLOBAL_PATTERNS, *COLLECTION_PATTERNS) if (m := p.search(query)))
    rel: list[str] = relation_cues(query)
    pair: tuple[str, ...] = ()
    to = analyse_to(query)
    if (m := _particle_coordination(query, to.stray)) is not None:
        rel.append(m.group(0))
        pair = (m.group("a"), m.group("b"))
    if (m := _JA_QUOTED_PAIR.search(query)) is not None:
        rel.append(m.group(0))
        pair = pair or (m.group("a"), m.group("b"))
    for j in to.pairs:  # 「AとBは近い？」「AとBの提携は」: two nouns joined by と, then a word that relates them
        if j.after in ("、", "，", ",") or (PAIR_PREDICATE.search(query) and not asks_for_fact(query)):
            rel.append(f"{j.a}と{j.b}{j.after}")
            pair = pair or (j.a, j.b)
            break
    for pattern in (_JA_PICK_ONE, _JA_COMPARISON, _JA_RELATION, _EN_RELATIONSHIP, _EN_NAMED_RELATION):
        if (m := pattern.search(query)) is not None:
            rel.append(m.group(0))
    for pattern in SEED_RELATIONSHIP_PATTERNS:
        if (m := pattern.search(query)) is not None:
            rel.append(m.group(0))
            if not pair and m.re.groups >= 2 and "と" in m.re.pattern:
                pair = (m.group(1), m.group(2))
    if _EN_ORDER.search(query) and len(_named_things(query)) >= 2:
        rel.append("before/after two named things")
    if not pair and (m := _EN_PAIR.search(query)) is not None:
        pair = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
    cleaned = tuple(e for e in (_clean_entity(p) for p in pair) if e)
    causal = _CAUSAL.search(query) is not None or CAUSE.search(query) is not None
    return RuleMatch(global_cues, tuple(rel), cleaned, causal,
                     _SCOPE.search(query) is not None, _COMPARING.search(query) is not None)


def _particle_coordination(query: str, stray: frozenset[int]) -> re.Match[str] | None:
    """The first 「AとB、」 of :data:`_JA_COORDINATION` whose と can join two things (not the と of ひとこと)."""
    pos = 0
    while (m := _JA_COORDINATION.search(query, pos)) is not None:
        if m.start("b") - 1 not in stray:
            return m
        pos = m.start() + 1
    return None


def _named_things(query: str) -> list[str]:
    return [m.group(1) for m in _CAPITALISED.finditer(query) if m.group(1) not in _EN_QUESTION_OPENERS]


def relation_hint(query: str) -> str:
    """The kind of relation asked about: comparison, relationship, causation, reason or general (seed order)."""
    if re.search(r"違い|比較|比べ|どちら|どっち|同じ|共通|異な|より|difference|differ|compare|comparison|versus|"
                 r"\bvs\b|\bwhich\b|\bboth\b|same|\w+er than|more \w+ than", query, re.I):
        return "comparison"
    if re.search(r"関係|関連|つながり|繋がり|relationship|related|relation|connection|link", query, re.I):
        return "relationship"
    if re.search(r"影響|因果|affect|impact|influence|effect|cause", query, re.I):
        return "causation"
    if re.search(r"なぜ|どうして|理由|原因|why|reason", query, re.I):
        return "reason"
    return "general"


# --- entities and keywords -------------------------------------------------------------------------------------------

SEED_STOP_WORDS = frozenset({
    "は", "が", "を", "に", "の", "と", "で", "も", "や", "か", "て", "だ", "です", "ます", "する", "ある", "いる",
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "have", "has", "had", "do", "does", "did", "will",
    "would", "could", "should", "may", "might", "can", "what", "how", "why",
})
STOP_WORDS = SEED_STOP_WORDS | frozenset({
    # question words and fillers that are never worth searching for
    "何", "なに", "どれ", "どこ", "だれ", "誰", "いつ", "どう", "どの", "どちら", "どっち", "こと", "もの", "ため",
    "これ", "それ", "あれ", "この", "その", "よう", "方", "ほう", "教え", "教える", "ください", "について",
    "of", "in", "on", "to", "for", "and", "or", "with", "about", "this", "that", "these", "those", "which", "who",
    "whom", "when", "where", "me", "my", "our", "your", "it", "its", "tell", "please", "between", "there", "than",
})
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|「([^」]+)」|『([^』]+)』|“([^”]+)”")
_CAPITALISED = re.compile(r"(?<![\w'])([A-Z][a-zA-Z0-9.+#-]*[a-zA-Z0-9+#])")
_EN_QUESTION_OPENERS = frozenset({
    "What", "How", "Why", "Which", "Who", "When", "Where", "Is", "Are", "Was", "Were", "Do", "Does", "Did", "Can",
    "Could", "Should", "Would", "Will", "Tell", "Please", "Compare", "Give", "Summarize", "Summarise", "List",
    "Explain", "Describe", "The", "A", "An", "In", "Of", "And", "Or", "I", "My", "Our", "This", "That", "These",
})
_TRAILING_PARTICLES = re.compile(r"(?:の|は|が|を|に|で|も|さん|選手)+$")


def is_japanese(text: str) -> bool:
    return re.search(r"[\u3040-\u30ff\u3400-\u9fff]", text) is not None


def _clean_entity(text: str) -> str:
    text = text.strip().strip(" 　「」『』\"'“”、，,。？?！!").strip()  # any whitespace (a form feed MeCab kept)
    return _TRAILING_PARTICLES.sub("", text) if is_japanese(text) else text


def extract_entities(query: str, pair: tuple[str, ...] = ()) -> list[str]:
    """Entity candidates: quoted phrases, a compared pair, capitalised English words, Japanese proper-noun runs."""
    found: list[str] = []

    def add(entity: str) -> None:
        entity = _clean_entity(entity)
        if entity and entity.lower() not in STOP_WORDS and entity not in found:
            found.append(entity)

    for m in _QUOTED.finditer(query):
        add(next(g for g in m.groups() if g))
    for entity in pair:
        add(entity)
    for m in _CAPITALISED.finditer(query):
        if m.group(1) not in _EN_QUESTION_OPENERS:
            add(m.group(1))
    if is_japanese(query):
        for run, proper in noun_runs(query):
            if proper:
                add(run)
    return found


def extract_keywords(query: str) -> list[str]:
    """Content words worth searching for: Japanese noun runs (via MeCab) and English words, minus stop words."""
    keywords: list[str] = []
    if is_japanese(query):
        for run, _ in noun_runs(query):
            if run not in STOP_WORDS and run not in keywords and not re.fullmatch(r"[\W\d_]+", run):
                keywords.append(run)
        return keywords
    for raw in re.split(r"[\s、,。.?！!？:;()\[\]{}\"“”]+", query):
        word = raw.strip("'")
        if len(word) > 1 and word.lower() not in STOP_WORDS and word not in keywords:
            keywords.append(word)
    return keywords


def seed_keywords(query: str) -> list[str]:
    """The seed's keyword extraction, verbatim: split on spaces and punctuation, drop stop words and 1-char words."""
    words = re.split(r"[\s、,。.?！!？]+", query)
    return [w for w in words if len(w) > 1 and w.lower() not in SEED_STOP_WORDS]


def seed_entities(query: str) -> list[str]:
    """The seed's entity extraction, verbatim: quoted phrases and capitalised words."""
    found: list[str] = []
    for pattern in (r"\"([^\"]+)\"", r"'([^']+)'", r"「([^」]+)」", r"『([^』]+)』", r"\b([A-Z][a-zA-Z]+)\b"):
        for m in re.finditer(pattern, query):
            if m.group(1) not in found:
                found.append(m.group(1))
    return found
