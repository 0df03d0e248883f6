"""The settings dialog's words: English in the code, Japanese in resources/i18n/madoi_ja.ts (ui/window/i18n.py)."""

from __future__ import annotations

from typing import Final

from app.devices.voices import speech_problem
from companions.common.languages import Language
from ui.window.i18n import QT_TRANSLATE_NOOP, Numerus, Texts

TEXTS: Final = Texts("settings", {
    "title": QT_TRANSLATE_NOOP("settings", "Madoi settings"),
    "tab.general": QT_TRANSLATE_NOOP("settings", "General"),
    "tab.llm": QT_TRANSLATE_NOOP("settings", "Language model"),
    "tab.devices": QT_TRANSLATE_NOOP("settings", "Camera and voice"),
    "tab.bridge": QT_TRANSLATE_NOOP("settings", "Bridge"),
    "tab.companions": QT_TRANSLATE_NOOP("settings", "Companions"),
    "tab.search": QT_TRANSLATE_NOOP("settings", "Search"),
    "language": QT_TRANSLATE_NOOP("settings", "Language"),
    "theme": QT_TRANSLATE_NOOP("settings", "Theme"),
    "user_name": QT_TRANSLATE_NOOP("settings", "Your name"),
    "speak_first.after": QT_TRANSLATE_NOOP("settings", "Speak first after a silence of"),
    "speak_first.minutes": QT_TRANSLATE_NOOP("settings", " minutes"),
    "speak_first.never": QT_TRANSLATE_NOOP("settings", "never"),
    "speak_first.hint": QT_TRANSLATE_NOOP(
        "settings", "The companions may then say something when you have been quiet that long (at most 4 times an "
                    "hour, never while you type or speak)."),
    "speak_first.on_notice": QT_TRANSLATE_NOOP(
        "settings", "Speak first when they notice you (with “Let them notice you” on in the camera switch's menu)"),
    "theme.system": QT_TRANSLATE_NOOP("settings", "Follow the system"),
    "theme.light": QT_TRANSLATE_NOOP("settings", "Light"),
    "theme.dark": QT_TRANSLATE_NOOP("settings", "Dark"),
    "base_url": QT_TRANSLATE_NOOP("settings", "Endpoint URL"),
    "api_key": QT_TRANSLATE_NOOP("settings", "API key"),
    "model": QT_TRANSLATE_NOOP("settings", "Model"),
    "test_connection": QT_TRANSLATE_NOOP("settings", "Test connection"),
    "base_url.hint": QT_TRANSLATE_NOOP(
        "settings", "e.g. http://127.0.0.1:11434/v1 (Ollama) or https://api.openai.com/v1"),
    "model.hint": QT_TRANSLATE_NOOP("settings", "Empty: the server's default"),
    "key.keyring": QT_TRANSLATE_NOOP(
        "settings", "Stored in the system keyring, never in the settings file or the logs."),
    "key.file": QT_TRANSLATE_NOOP(
        "settings", "No system keyring found: the key is kept in {path}, readable only by you "
                    "(never in the settings file or the logs)."),
    "key.session": QT_TRANSLATE_NOOP(
        "settings", "No system keyring, and {path} cannot be written: the key is kept in memory for this "
                    "session only (set MADOI_LLM_API_KEY to keep it)."),
    "token.keyring": QT_TRANSLATE_NOOP(
        "settings", "The token is stored in the system keyring, never in the settings file or the logs."),
    "token.file": QT_TRANSLATE_NOOP(
        "settings", "No system keyring found: the token is kept in {path}, readable only by you."),
    "token.session": QT_TRANSLATE_NOOP(
        "settings", "No system keyring, and {path} cannot be written: the token is kept in memory for this "
                    "session only (set MADOI_BRIDGE_TOKEN to keep it)."),
    "conn.ok": Numerus.translate("settings", "OK: %n models", None, 0),
    "conn.failed": QT_TRANSLATE_NOOP("settings", "Failed: {error}"),
    "testing": QT_TRANSLATE_NOOP("settings", "Testing…"),
    "need_url": QT_TRANSLATE_NOOP("settings", "Enter an endpoint URL first."),
    "camera_source": QT_TRANSLATE_NOOP("settings", "Camera"),
    "camera_source.hint": QT_TRANSLATE_NOOP(
        "settings", "Device number (0, 1 …), a video file, a stream URL, or none"),
    "preview_fps": QT_TRANSLATE_NOOP("settings", "Preview frames per second"),
    "voice_enabled": QT_TRANSLATE_NOOP("settings", "Speak the companions' messages aloud"),
    "rate": QT_TRANSLATE_NOOP("settings", "Speaking rate (words per minute)"),
    "volume": QT_TRANSLATE_NOOP("settings", "Volume"),
    "test_voice": QT_TRANSLATE_NOOP("settings", "Test voice"),
    "voice.sample": QT_TRANSLATE_NOOP("settings", "Hello! This is Madoi."),
    "voice.ok": QT_TRANSLATE_NOOP("settings", "Spoken."),
    "voice.ok_by": QT_TRANSLATE_NOOP("settings", "Spoken by {voice}."),
    "voice.none": QT_TRANSLATE_NOOP("settings", "Voice output is not available."),
    "voice.failed": QT_TRANSLATE_NOOP("settings", "Not heard: {error}"),
    "voice.off": QT_TRANSLATE_NOOP("settings", "speech is turned off in the settings"),
    "voice.no_device": QT_TRANSLATE_NOOP("settings", "no sound device or audio player was found"),
    "voice.no_engine": QT_TRANSLATE_NOOP("settings", "no speech engine (install espeak-ng)"),
    "voice.not_started": QT_TRANSLATE_NOOP("settings", "the speaker has not started yet"),
    "voice.interrupted": QT_TRANSLATE_NOOP("settings", "the test was interrupted"),
    "voice.failed_synthesis": QT_TRANSLATE_NOOP("settings", "speech synthesis failed"),
    "companion.asks": QT_TRANSLATE_NOOP("settings", "Its card"),
    "companion.allow": QT_TRANSLATE_NOOP("settings", "Allow this card to do this (asked again if the card changes)"),
    "save": QT_TRANSLATE_NOOP("settings", "Save"),
    "cancel": QT_TRANSLATE_NOOP("settings", "Cancel"),
    "bridge_enabled": QT_TRANSLATE_NOOP("settings", "Let other programs join over WebSocket"),
    "host": QT_TRANSLATE_NOOP("settings", "Listen on"),
    "port": QT_TRANSLATE_NOOP("settings", "Port"),
    "token": QT_TRANSLATE_NOOP("settings", "Access token"),
    "generate": QT_TRANSLATE_NOOP("settings", "Generate"),
    "err.port_off": QT_TRANSLATE_NOOP("settings", "Choose a port from 1 to 65535, or turn the bridge off."),
    "err.token": QT_TRANSLATE_NOOP(
        "settings", "A token is required when the bridge listens beyond this computer."),
    "save_failed": QT_TRANSLATE_NOOP("settings", "Could not save: {error}"),
    # the Companions tab
    "companions.intro": QT_TRANSLATE_NOOP(
        "settings", "Each companion's model and voice. Empty: what its card says."),
    "companion.model": QT_TRANSLATE_NOOP("settings", "Model"),
    "companion.model.card": QT_TRANSLATE_NOOP("settings", "As the card says ({model})"),
    "companion.model.default": QT_TRANSLATE_NOOP("settings", "the default model"),
    "companion.voice": QT_TRANSLATE_NOOP("settings", "Voice"),
    "companion.voice.card": QT_TRANSLATE_NOOP("settings", "As the card says ({voice})"),
    "companion.voice.engine": QT_TRANSLATE_NOOP("settings", "the engine's choice"),
    "companion.voice.female": QT_TRANSLATE_NOOP("settings", "{name}, female voice {n}"),
    "companion.voice.male": QT_TRANSLATE_NOOP("settings", "{name}, male voice {n}"),
    "companion.test_model": QT_TRANSLATE_NOOP("settings", "Test"),
    "companion.test_voice": QT_TRANSLATE_NOOP("settings", "Test voice"),
    "companion.voice.sample": QT_TRANSLATE_NOOP("settings", "Hello, I am {name}. Nice to meet you!"),
    "model.ok": QT_TRANSLATE_NOOP("settings", "{model} answered in {s:.1f} s."),
    "model.refused": QT_TRANSLATE_NOOP("settings", "The server refused the API key."),
    "model.unknown": QT_TRANSLATE_NOOP("settings", "The server has no model named {model}."),
    "model.unreachable": QT_TRANSLATE_NOOP("settings", "No model server answers at {url}."),
    "model.timeout": QT_TRANSLATE_NOOP("settings", "{model} did not answer in time."),
    "model.none": QT_TRANSLATE_NOOP("settings", "No language model is set up: choose one in the Language model tab."),
    "model.failed": QT_TRANSLATE_NOOP("settings", "{model} did not answer: {error}"),
    "companions.none": QT_TRANSLATE_NOOP("settings", "No companion cards were found."),
    # the Search tab
    "folders": QT_TRANSLATE_NOOP("settings", "Knowledge folders"),
    "folders.hint": QT_TRANSLATE_NOOP(
        "settings", "The companions and the search panel search the documents in these folders. "
                    "New folders are indexed as soon as you save."),
    "folders.add": QT_TRANSLATE_NOOP("settings", "Add…"),
    "folders.remove": QT_TRANSLATE_NOOP("settings", "Remove"),
    "folders.choose": QT_TRANSLATE_NOOP("settings", "Choose a knowledge folder"),
    "folders.missing": QT_TRANSLATE_NOOP("settings", "{folder} does not exist."),
})


def text(key: str, language: Language | None = None, /, **values: object) -> str:
    """The text for ``key`` in ``language`` (the window's when None), with ``values`` filled in."""
    return TEXTS.text(key, language, **values)


def voice_problem_text(reason: str, language: Language | None = None) -> str:
    """The voice test's failure in ``language``: why nothing was heard, in the speaker's own words only when it
    gave a reason no one foresaw (the full reason belongs in a tooltip)."""
    return text("voice.failed", language, error=speech_reason_text(reason, language))


def speech_reason_text(reason: str, language: Language | None = None) -> str:
    """Why speech did not work, in ``language``; the speaker's own words when the reason is not a known one."""
    problem = speech_problem(reason)
    match problem.kind:
        case "other":
            return problem.reason
        case "failed":
            return text("voice.failed_synthesis", language)
        case _:
            return text(f"voice.{problem.kind}", language)
