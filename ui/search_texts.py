"""The words of the search panel, in English and Japanese (the language setting picks)."""

from __future__ import annotations

from typing import Final

TEXTS: Final[dict[str, tuple[str, str]]] = {  # key: (en, ja)
    "title": ("Search", "検索"),
    "placeholder": ("Search your documents and past conversations… (Enter searches)",
                    "資料と過去の会話を検索…（Enter で検索）"),
    "query.name": ("Search query", "検索語"),
    "search": ("Search", "検索"),
    "search.tooltip": ("Search the index (Enter in the box does the same)",
                       "索引を検索します（入力欄で Enter でも同じ）"),
    "research": ("Research", "調べる"),
    "research.tooltip": ("Let the research agent plan several searches and write an answer with citations",
                         "リサーチエージェントが複数の検索を計画して、出典つきの答えを書きます"),
    "cancel": ("Cancel", "中止"),
    "cancel.tooltip": ("Stop the search or research in progress", "実行中の検索・調査を止めます"),
    "reindex": ("Update index", "索引を更新"),
    "reindex.tooltip": ("Index new and changed files of the knowledge folders now",
                        "資料フォルダーの新しいファイルと変更されたファイルを今すぐ索引に入れます"),
    # states
    "unavailable": ("Search is not available.", "検索は利用できません。"),
    "unavailable.reason": ("Search is not available: {reason}", "検索は利用できません: {reason}"),
    "blank": ("Type a question first.", "先に質問を入力してください。"),
    "searching": ("Searching “{query}”…", "「{query}」を検索中…"),
    "found": ("{n} hits for “{query}” in {ms} ms", "「{query}」: {n} 件（{ms} ms）"),
    "no_hits": ("No hits for “{query}”.", "「{query}」に一致するものはありませんでした。"),
    "index_empty": ("The index is empty: nothing to search yet. Add knowledge folders in the settings.",
                    "索引が空です。まだ検索できるものがありません。設定で資料フォルダーを追加してください。"),
    "partial": (" (indexing is still running: more may be found soon)",
                "（索引の作成中です。後でもっと見つかるかもしれません）"),
    "search_failed": ("Search failed: {error}", "検索に失敗しました: {error}"),
    "cancelled": ("Cancelled.", "中止しました。"),
    "stopped": ("Search has stopped.", "検索は停止しました。"),
    # index
    "indexing": ("Indexing %v / %m", "索引を作成中 %v / %m"),
    "indexing.start": ("Indexing…", "索引を作成中…"),
    "indexing.file": ("Indexing {file}", "索引に追加中: {file}"),
    "indexed": ("{n} documents indexed", "{n} 件の文書を索引済み"),
    "indexed.changed": ("{n} documents indexed ({changed} new or changed)",
                        "{n} 件の文書を索引済み（新規・変更 {changed} 件）"),
    "indexed.empty": ("The index is empty.", "索引は空です。"),
    "index.problems": ("Indexing problems: {problems}", "索引作成の問題: {problems}"),
    "index.failed": ("Could not update the index: {error}", "索引を更新できませんでした: {error}"),
    # classification
    "classification": ("Query", "質問の分類"),
    "classification.none": ("Search to see how the question is understood.",
                            "検索すると、質問がどう解釈されたかがここに出ます。"),
    "field.type": ("Type", "種類"),
    "field.confidence": ("Confidence", "確信度"),
    "field.entities": ("Entities", "エンティティ"),
    "field.keywords": ("Keywords", "キーワード"),
    "field.weights": ("Weights", "重み"),
    "field.intent": ("Intent", "意図"),
    "type.local": ("local — a specific fact", "ローカル — 特定の情報"),
    "type.global": ("global — the overall picture", "グローバル — 全体像"),
    "type.relationship": ("relationship — how things relate", "関係 — 物事の関係"),
    "type.hybrid": ("hybrid — overall and related", "ハイブリッド — 全体と関係"),
    "classified_by.rules": ("classified by rules", "ルールで分類"),
    "classified_by.llm": ("classified by the language model", "言語モデルで分類"),
    "classified_by.fallback": ("classified by rules (the language model failed: {reason})",
                               "ルールで分類（言語モデルが失敗: {reason}）"),
    "intent": ("{intent} ({by})", "{intent}（{by}）"),
    "none": ("—", "—"),
    "list_sep": (", ", "、"),
    "quoted": ("“{text}”", "「{text}」"),
    # results
    "channel.fused": ("Fused", "統合"),
    "channel.keyword": ("Keyword", "キーワード"),
    "channel.semantic": ("Semantic", "意味"),
    "channel.graph": ("Graph", "グラフ"),
    "tab": ("{name} ({n})", "{name} ({n})"),
    "results.name": ("Search results", "検索結果"),
    "hit": ("{rank}. {source} · {score}", "{rank}. {source} · {score}"),
    "score": ("score {score}", "スコア {score}"),
    "channel_score": ("{score}", "{score}"),
    "hit.channels": ("keyword {keyword} · semantic {semantic} · graph {graph}",
                     "キーワード {keyword} · 意味 {semantic} · グラフ {graph}"),
    "channel.empty": ("This channel found nothing.", "このチャンネルでは見つかりませんでした。"),
    "channel.off": ("This channel is off: the embedding model is not installed.",
                    "このチャンネルは無効です（埋め込みモデルが入っていません）。"),
    "weights": ("keyword {keyword} · semantic {semantic} · graph {graph}",
                "キーワード {keyword} · 意味 {semantic} · グラフ {graph}"),
    # research
    "research.title": ("Research", "調査"),
    "research.idle": ("Research answers a question from several searches, with citations.",
                      "「調べる」は複数の検索から出典つきで質問に答えます。"),
    "research.starting": ("Starting the research…", "調査を始めています…"),
    "stage.planning": ("Planning the searches…", "検索を計画中…"),
    "stage.searching": ("Searching (round {round}): {queries}", "検索中（{round} 回目）: {queries}"),
    "stage.reflecting": ("Checking what is still missing (round {round})…", "足りない情報を確認中（{round} 回目）…"),
    "stage.synthesizing": ("Writing the answer from {detail}…", "{detail} から答えを書いています…"),
    "stage.done": ("Done: {n} citations from {queries} searches.", "完了: {queries} 回の検索から出典 {n} 件。"),
    "stage.cancelled": ("Research cancelled.", "調査を中止しました。"),
    "stage.failed": ("Research failed: {error}", "調査に失敗しました: {error}"),
    "sources": ("{n} sources", "{n} 件の資料"),
    "answer.name": ("Research answer", "調査の答え"),
    "answer.extractive": ("Extractive answer: no language model is configured, so these are the best sentences of "
                          "the sources.",
                          "抜粋による答え: 言語モデルが設定されていないため、資料から最適な文を選んでいます。"),
    "answer.model_failed": ("Extractive answer: the language model did not write one ({reason}), so these are the "
                            "best sentences of the sources.",
                            "抜粋による答え: 言語モデルが答えを書けなかったため（{reason}）、"
                            "資料から最適な文を選んでいます。"),
    "answer.model": ("Answer written by the language model from the sources.",
                     "資料をもとに言語モデルが書いた答えです。"),
    "citations": ("Citations", "出典"),
    "citation": ("[{n}] {source}", "[{n}] {source}"),
    "conversation": ("conversation {id}", "会話 {id}"),
}


def search_text(key: str, language: str, **values: object) -> str:
    """The text for ``key`` in ``language`` ("ja" or "en"), with ``values`` filled in."""
    en, ja = TEXTS[key]
    template = ja if language == "ja" else en
    return template.format(**values) if values else template
