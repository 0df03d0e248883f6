"""What a companion card would run or send, in the interface's words: each MCP server's exact command line (or
URL), the endpoint the conversation would go to, the environment variable whose value would be its key and the
privileged tools it grants itself (companions/cards/approval.py ``CardPrivileges``). The prompt, the editor and the
settings' Companions tab show these lines; the commands, URLs and tool names themselves are never translated."""

from __future__ import annotations

import shlex
from typing import Final

from companions.cards.approval import CardPrivileges
from ui.window.i18n import QT_TRANSLATE_NOOP, Texts

# (Kept in the editor's translation context: the texts were first written there.)
TEXTS: Final = Texts("companion_editor", {
    "asks.run": QT_TRANSLATE_NOOP("companion_editor", "runs the program: {command} (MCP server {server})"),
    "asks.connect": QT_TRANSLATE_NOOP("companion_editor", "connects to the MCP server {server} at {url}"),
    "asks.send": QT_TRANSLATE_NOOP("companion_editor", "sends the conversation to {url}"),
    "asks.key": QT_TRANSLATE_NOOP(
        "companion_editor", "sends the conversation to {url} with the value of the environment variable ${var} "
                            "as its key"),
    "asks.default_key": QT_TRANSLATE_NOOP(
        "companion_editor", "sends the value of the environment variable ${var} as a key to the default model "
                            "server"),
    "asks.vision": QT_TRANSLATE_NOOP("companion_editor", "uses the tool {tool}: looks through your camera"),
    "asks.search": QT_TRANSLATE_NOOP("companion_editor",
                                     "uses the tool {tool}: searches your files and past conversations"),
    "asks.plugin": QT_TRANSLATE_NOOP("companion_editor", "uses the tool {tool}: a plugin of that name"),
})


def privilege_lines(privileges: CardPrivileges, language: str) -> list[str]:
    """What a card would run or send, exactly (its command lines, URLs and variable), in ``language``'s words."""
    lines = []
    for server in privileges.servers:
        if server.url is not None:
            lines.append(TEXTS.text("asks.connect", language, server=repr(server.name), url=server.url))
            continue
        command = shlex.join([server.command or "", *server.args])
        extra = "".join(f" {k}={shlex.quote(v)}" for k, v in sorted(server.env.items()))
        extra += f" (cwd {server.cwd})" if server.cwd else ""
        lines.append(TEXTS.text("asks.run", language, command=command + extra, server=repr(server.name)))
    for tool in privileges.tools:
        key = f"asks.{tool}" if tool in ("vision", "search") else "asks.plugin"
        lines.append(TEXTS.text(key, language, tool=repr(tool)))
    if privileges.endpoint is not None:
        key = "asks.key" if privileges.key_env is not None else "asks.send"
        lines.append(TEXTS.text(key, language, url=privileges.endpoint, var=privileges.key_env))
    elif privileges.key_env is not None:
        lines.append(TEXTS.text("asks.default_key", language, var=privileges.key_env))
    return lines
