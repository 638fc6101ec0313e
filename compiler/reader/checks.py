"""The argument checks every reader operation shares: names, limits, tags, node paths, cursors, envelopes.

One of each, used by the catalogue's dialects and by :mod:`toolcat.reader.search.searcher` alike: a bad
argument is a BAD_REQUEST envelope that says what was expected.
"""

from __future__ import annotations

import os
from typing import Any

from ..format.envelope import ReaderError
from ..format.types import Json

#: The most results one page holds; a larger ``limit`` is capped to it.
MAX_LIMIT = 50
MAX_NAME = 300
#: A node path is at most this many names deep.
MAX_PATH_DEPTH = 32
ROOT_NAMES = ("", "root", "/", ".")
#: Every cursor is ``o:<offset>``, followed by ``:<key>`` when it belongs to one query and category.
CURSOR_PREFIX = "o"


def trace_id() -> str:
    """A fresh random id for one operation (or one session)."""
    return os.urandom(8).hex()


def shown(value: Any, limit: int = 80) -> str:
    """A short repr of a value from a caller: bounded in length and nesting, so deep input cannot recurse."""
    import reprlib  # noqa: PLC0415 - only on errors

    shower = reprlib.Repr()
    shower.maxlevel = 4
    shower.maxstring = shower.maxother = limit
    shower.maxlist = shower.maxtuple = shower.maxdict = shower.maxset = 8
    try:
        return shower.repr(value)[:limit]
    except (RecursionError, ValueError):
        return f"<{type(value).__name__}>"


def ok(data: Json, *, help_path: str = "root", hints: list[str] | None = None, next_action: Json | None = None) -> Json:
    """A success envelope: ``ok: true``, the data, and where to go next."""
    return {"ok": True, **data, "help_path": help_path, "hints": list(hints or []), "next_action": next_action}


def bad(
    message: str, *, help_path: str = "root", hints: list[str] | None = None, details: Json | None = None
) -> ReaderError:
    """BAD_REQUEST pointing the agent at the help of ``help_path``."""
    return ReaderError(
        "BAD_REQUEST",
        message,
        help_path=help_path,
        hints=hints,
        details=details,
        next_action={"op": "help", "args": {"path": help_path}},
    )


#: What the readers strip from a caller's string: JavaScript's ``String.prototype.trim`` set (its WhiteSpace and
#: LineTerminator: tab, line feed, vertical tab, form feed, carriage return, the Zs spaces, U+2028, U+2029 and the byte
#: order mark), so the TypeScript reader, which trims, reads the same text. ``str.strip()`` differs: it keeps a byte
#: order mark and strips U+001C-U+001F and U+0085 (``tests/js/test_js_text.py`` checks the set against Node's).
TRIM = "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def trim(text: str) -> str:
    """``text`` without the :data:`TRIM` characters at its ends (``text.trim()`` in the TypeScript reader)."""
    return text.strip(TRIM)


def check_str(value: Any, name: str, *, allow_empty: bool = False, help_path: str = "root") -> str:
    """``value`` when it is a (non-empty) string of a sensible length; BAD_REQUEST otherwise."""
    if not isinstance(value, str) or (not allow_empty and not trim(value)) or len(value) > 4 * MAX_NAME:
        raise bad(
            f"'{name}' must be a non-empty string (at most {4 * MAX_NAME} characters), got {shown(value)}",
            help_path=help_path,
        )
    return value


def check_name(value: Any, *, help_path: str = "root") -> str:
    """A tool name (canonical id, alias or skill name) as given; BAD_REQUEST unless a non-empty, bounded string."""
    if not isinstance(value, str) or not trim(value) or len(value) > MAX_NAME:
        raise bad(f"a tool name must be a non-empty string, got {shown(value)}", help_path=help_path)
    return value


def or_default(value: Any, default: Any) -> Any:
    """``default`` when ``value`` is None: a null optional argument means the argument is absent (docs/reader.md)."""
    return default if value is None else value


def as_sent(value: Any, limit: int = MAX_NAME) -> tuple[str, bool]:
    """``(op, cut)``: a caller's op name exactly as sent, cut to ``limit`` characters (``cut`` says so).

    Anything but a string, which no op name is, comes back as a bounded repr (``None``, ``42``, ``{...}``).
    """
    if isinstance(value, str):
        return value[:limit], len(value) > limit
    return shown(value, limit), False


#: A query is ranked on at most this many characters; a longer one is cut (with a note), not refused.
MAX_QUERY_CHARS = 4 * MAX_NAME
#: A query longer than this is refused: no agent's task description is a megabyte.
MAX_QUERY_INPUT = 1_000_000


def check_query(value: Any, name: str = "query") -> str:
    """A search query as the ranking takes it: a non-blank string, stripped, cut at :data:`MAX_QUERY_CHARS`.

    A blank or non-string query is BAD_REQUEST with an example of a good one. A long query (an agent pasting its
    whole task) is cut at a word boundary; :func:`query_note` says so in the answer.
    """
    if not isinstance(value, str) or not trim(value) or len(value) > MAX_QUERY_INPUT:
        raise ReaderError(
            "BAD_REQUEST",
            f"'{name}' must be a non-empty string, got {shown(value, 60)}",
            details={"got": shown(value, 60)},
            hints=[
                f"Say what you need in a few words: the action, the object and the domain, e.g. {name}='upload a file to an S3 bucket'."
            ],
        )
    text = trim(value)
    if len(text) <= MAX_QUERY_CHARS:
        return text
    cut = text[:MAX_QUERY_CHARS]
    space = cut.rfind(" ", MAX_QUERY_CHARS // 2)
    return cut[:space] if space > 0 else cut


def query_note(value: Any) -> str | None:
    """The note an answer carries when :func:`check_query` cut ``value``, else None."""
    if not isinstance(value, str) or len(trim(value)) <= MAX_QUERY_CHARS:
        return None
    return (
        f"The query was cut to its first {MAX_QUERY_CHARS:,} characters (of {len(trim(value)):,}); put the"
        " action, the object and the domain first, in a few words."
    )


def check_limit(limit: Any, default: int) -> int:
    """A page size from 1 to :data:`MAX_LIMIT` (larger ones are capped); None is ``default``."""
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise bad(
            f"'limit' must be an integer from 1 to {MAX_LIMIT}, got {shown(limit, 40)}",
            hints=[f"Use a limit between 1 and {MAX_LIMIT}."],
        )
    return min(MAX_LIMIT, limit)


def check_tags(tags: Any) -> list[str]:
    """Tags as a lower-case list (one string is one tag); BAD_REQUEST for anything else."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise bad(f"'tags' must be a list of strings, got {shown(tags)}")
    return [t.lower() for t in tags]


def check_bool(value: Any, name: str) -> bool:
    """``value`` when it is true or false; BAD_REQUEST otherwise."""
    if not isinstance(value, bool):
        raise bad(f"'{name}' must be true or false, got {shown(value)}")
    return value


def node_path(path: Any) -> tuple[str, ...]:
    """``["a","b"]``, ``"a/b"``, ``"a.b"`` → ``("a", "b")``; ``None``/``""``/``"root"`` → the root."""
    if path is None:
        return ()
    if isinstance(path, str):
        text = trim(path)
        if text in ROOT_NAMES:
            return ()
        parts = text.strip("/").replace("/", ".").split(".")
    elif isinstance(path, (list, tuple)) and all(isinstance(p, str) for p in path):
        parts = list(path)
    else:
        raise bad(f"a path is a list of names or a 'a/b' string, got {shown(path)}")
    if any(not p for p in parts) or len(parts) > MAX_PATH_DEPTH:
        raise bad(f"path {shown(path)} has an empty segment or more than {MAX_PATH_DEPTH} names")
    return tuple(parts)


def cursor_key(*parts: Any) -> str:
    """A short digest binding a cursor to the query and category it pages through."""
    import hashlib  # noqa: PLC0415 - stdlib, imported on first use

    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:8]


def encode_cursor(offset: int, key: str | None = None) -> str:
    """The cursor of the page that starts at ``offset``: ``o:<offset>`` or ``o:<offset>:<key>``."""
    return f"{CURSOR_PREFIX}:{offset}" + (f":{key}" if key else "")


def decode_cursor(cursor: Any, key: str | None = None) -> int:
    """The offset a cursor from :func:`encode_cursor` holds (0 for None); BAD_REQUEST for any other value."""
    if cursor is None:
        return 0
    parts = cursor.split(":") if isinstance(cursor, str) and len(cursor) <= 100 else []
    if len(parts) < 2 or parts[0] != CURSOR_PREFIX or not (parts[1].isascii() and parts[1].isdigit()):
        raise bad(
            f"cursor {shown(cursor)} is not one this reader returned; omit it to start over",
            details={"cursor": shown(cursor, 40)},
        )
    if parts[2:] != ([key] if key else []):
        raise bad(
            "this cursor belongs to another query or category",
            details={"cursor": shown(cursor, 40)},
            hints=["Pass back the next_cursor of the previous page with the same query and category."],
        )
    return int(parts[1])


def close_names(word: str, names: list[str], n: int = 5) -> list[str]:
    """Names spelled like ``word``, and names it is a prefix of (for did-you-mean hints)."""
    import difflib  # noqa: PLC0415 - only on errors

    found = difflib.get_close_matches(word, names, n=n, cutoff=0.5)
    prefixed = [name for name in names if name.startswith(word) or word.startswith(name + ".")]
    return list(dict.fromkeys([*found, *sorted(prefixed)[:n]]))[:n]


def child_name(asked: str, children: dict[str, dict[str, Any]]) -> str | None:
    """The child called ``asked``: exactly, else case-insensitively (also by its title); None when absent."""
    if asked in children:
        return asked
    folded = asked.casefold()
    for name, child in children.items():
        if name.casefold() == folded or str(child.get("title", "")).casefold() == folded:
            return name
    return None


def deprecation_note(spec: dict[str, Any]) -> str:
    """What an agent is told about a deprecated tool."""
    value = spec.get("deprecated")
    if isinstance(value, str) and trim(value):
        return f"{spec.get('tool_id')} is deprecated: {value}"
    return f"{spec.get('tool_id')} is deprecated; search for its replacement before relying on it"
