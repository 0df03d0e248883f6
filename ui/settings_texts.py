"""The settings dialog's words in English and Japanese (the language setting picks one)."""

from __future__ import annotations

from typing import Literal

from app.devices.voices import speech_problem

Language = Literal["ja", "en"]

TEXTS: dict[str, tuple[str, str]] = {  # key: (en, ja)
    "title": ("Madoi settings", "円居の設定"),
    "tab.general": ("General", "全般"), "tab.llm": ("Language model", "言語モデル"),
    "tab.devices": ("Camera and voice", "カメラと音声"), "tab.bridge": ("Bridge", "ブリッジ"),
    "language": ("Language", "言語"), "theme": ("Theme", "テーマ"), "user_name": ("Your name", "あなたの名前"),
    "theme.system": ("Follow the system", "システムに合わせる"), "theme.light": ("Light", "ライト"),
    "theme.dark": ("Dark", "ダーク"),
    "base_url": ("Endpoint URL", "エンドポイント URL"), "api_key": ("API key", "API キー"),
    "model": ("Model", "モデル"), "test_connection": ("Test connection", "接続テスト"),
    "base_url.hint": ("e.g. http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1",
                      "例: http://127.0.0.1:11434/v1 (Ollama) または https://api.openai.com/v1"),
    "model.hint": ("Empty: the server's default", "空欄: サーバーの既定のモデル"),
    "key.keyring": ("Stored in the system keyring, never in the settings file or the logs.",
                    "システムのキーリングに保存します。設定ファイルやログには書きません。"),
    "key.session": ("No system keyring found: the key is kept in memory for this session only "
                    "(set MADOI_LLM_API_KEY to keep it).",
                    "システムのキーリングがありません。キーはこのセッションの間だけメモリに保持します"
                    "（保存するには MADOI_LLM_API_KEY を設定してください）。"),
    "conn.ok": ("OK: {n} models", "接続できました（モデル {n} 個）"),
    "conn.failed": ("Failed: {error}", "接続できません: {error}"),
    "testing": ("Testing…", "テスト中…"), "need_url": ("Enter an endpoint URL first.", "先に URL を入力してください。"),
    "camera_source": ("Camera", "カメラ"),
    "camera_source.hint": ("Device number (0, 1 …), a video file, a stream URL, or none",
                           "デバイス番号 (0, 1 …)、動画ファイル、ストリーム URL、または none"),
    "preview_fps": ("Preview frames per second", "プレビューのフレームレート"),
    "voice_enabled": ("Speak the companions' messages aloud", "コンパニオンの発言を読み上げる"),
    "rate": ("Speaking rate (words per minute)", "話す速さ（語/分）"), "volume": ("Volume", "音量"),
    "test_voice": ("Test voice", "音声テスト"), "voice.sample": ("Hello! This is Madoi.", "こんにちは、円居です。"),
    "voice.ok": ("Spoken.", "再生しました。"),
    "voice.none": ("Voice output is not available.", "音声出力が使えません。"),
    "voice.failed": ("Not heard: {error}", "再生できませんでした: {error}"),
    "voice.off": ("speech is turned off in the settings", "設定で音声がオフになっています"),
    "voice.no_device": ("no sound device or audio player was found",
                        "音を出すデバイスか再生プログラムが見つかりません"),
    "voice.no_engine": ("no speech engine (install espeak-ng)",
                        "音声合成エンジンがありません（espeak-ng を入れてください）"),
    "voice.not_started": ("the speaker has not started yet", "音声出力はまだ起動していません"),
    "voice.interrupted": ("the test was interrupted", "テストが中断されました"),
    "voice.failed_synthesis": ("speech synthesis failed", "音声合成に失敗しました"),
    "save": ("Save", "保存"), "cancel": ("Cancel", "キャンセル"),
    "bridge_enabled": ("Let other programs join over WebSocket", "他のプログラムを WebSocket で参加させる"),
    "host": ("Listen on", "待ち受けアドレス"), "port": ("Port", "ポート"),
    "token": ("Access token", "アクセストークン"),
    "generate": ("Generate", "生成"),
    "err.port_off": ("Choose a port from 1 to 65535, or turn the bridge off.",
                     "1〜65535 のポートを選ぶか、ブリッジをオフにしてください。"),
    "err.token": ("A token is required when the bridge listens beyond this computer.",
                  "このコンピューター以外から接続できる場合はトークンが必要です。"),
    "save_failed": ("Could not save: {error}", "保存できませんでした: {error}"),
}


def text(key: str, language: Language) -> str:
    en, ja = TEXTS[key]
    return ja if language == "ja" else en


def voice_problem_text(reason: str, language: Language) -> str:
    """The voice test's failure in ``language``: why nothing was heard, in the speaker's own words only when it
    gave a reason no one foresaw (the full reason belongs in a tooltip)."""
    problem = speech_problem(reason)
    match problem.kind:
        case "other":
            why = problem.reason
        case "failed":
            why = text("voice.failed_synthesis", language)
        case _:
            why = text(f"voice.{problem.kind}", language)
    return text("voice.failed", language).format(error=why)
