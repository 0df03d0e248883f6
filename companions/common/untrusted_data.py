"""Reading data that came from outside (imported files, cards, received frames) within bounds.

Python's readers trust their input. ``json.loads("[" * 100_000)`` raises ``RecursionError``, which is not a
``ValueError``: a SillyTavern chat with one such line used to abort its whole import. Nesting a few hundred levels
deep parses, then fails every serializer and validator after it. A YAML "billion laughs" (nine aliases, each to a
list of ten of the one before) is a few hundred bytes that read as 10^9 values: it made ``companions export`` take
40 s and 3.6 GB. Here each of these is a :class:`Unreadable` error with a reason for the user, so a caller skips
that one item and goes on with the others.
"""

from __future__ import annotations

import json
from typing import Any, Final

import yaml

MAX_JSON_DEPTH: Final = 64
"""Arrays and objects inside one another in one imported item. Real data nests 5-6 levels (a card's data,
character_book, entries, extensions ...); a few hundred already break serializers further on."""

MAX_YAML_NODES: Final = 200_000
"""Values a YAML document holds once its aliases are followed. A card with 200 lorebook entries is ~3,000; an
alias bomb is billions."""


class Unreadable(ValueError):
    """Data that cannot be read within bounds, or not at all; ``str()`` says why, in words for the user."""


def depth_of(value: Any, limit: int) -> int:
    """How deep ``value`` (decoded JSON or YAML) nests, counted up to ``limit + 1`` (without recursion: any depth
    and any width is safe to ask about)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_json(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """The JSON value of ``text``.

    Raises:
        Unreadable: not JSON (with the reader's reason), or nested deeper than ``max_depth``.
    """
    try:
        value = json.loads(text)
    except RecursionError:
        raise Unreadable(f"the JSON nests too deeply to read (more than {max_depth} levels)") from None
    except ValueError as err:  # JSONDecodeError and UnicodeDecodeError
        reason = f"{err.msg} at column {err.colno}" if isinstance(err, json.JSONDecodeError) else str(err)
        raise Unreadable(f"not JSON ({reason[:200]})") from None
    if depth_of(value, max_depth) > max_depth:
        raise Unreadable(f"the JSON nests more than {max_depth} levels deep")
    return value


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document whose aliases expand it beyond :data:`MAX_YAML_NODES` values
    before any Python object is built from it."""

    max_nodes: int = MAX_YAML_NODES

    def construct_document(self, node: yaml.Node) -> Any:
        _check_expansion(node, self.max_nodes)
        return super().construct_document(node)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_expansion(root: yaml.Node, max_nodes: int) -> None:
    """Counts the values ``root`` stands for with its aliases followed (each shared node's count is kept, so an
    alias bomb is counted in a few steps, never expanded). A node that holds itself has no end: refused too."""
    counted: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            on_path.discard(key)
            counted[key] = 1 + sum(counted[id(child)] for child in _children(node))
            if counted[key] > max_nodes:
                raise Unreadable(f"the YAML holds more than {max_nodes:,} values once its aliases are followed "
                                 "(an alias bomb?)")
            continue
        if key in counted:
            continue
        if key in on_path:
            raise Unreadable("the YAML holds itself through an alias (it would never end)")
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in counted)


def parse_yaml(text: str, *, max_nodes: int = MAX_YAML_NODES) -> Any:
    """The value of the YAML document ``text``, read with the safe loader.

    Raises:
        Unreadable: more than ``max_nodes`` values once aliases are followed, nested too deeply to read, or not
            valid YAML (with the reader's reason).
    """
    loader = _BoundedLoader(text)
    loader.max_nodes = max_nodes
    try:
        return loader.get_single_data()
    except RecursionError:
        raise Unreadable("the YAML is nested too deeply to read") from None
    except yaml.YAMLError as err:
        raise Unreadable(f"not valid YAML: {err}") from None
    finally:
        loader.dispose()
