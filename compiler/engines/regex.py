"""Regular expressions from outside toolcat run in RE2: linear time, no catastrophic backtracking.

Python's ``re`` backtracks: ``(a+)+$`` over 30 characters runs for minutes and holds the
GIL, so one agent (or one catalogue schema) could freeze every client of a gateway. Every
pattern that comes from an agent's arguments or a catalogue's schema is compiled here with
google-re2, imported lazily so that the reader stays stdlib-only at import time.

RE2 has no backreferences, lookaround or atomic groups. A pattern that uses them raises
:class:`UnsupportedPatternError`, a pattern that no engine accepts raises :class:`InvalidPatternError`;
both say why and how to rewrite it. :func:`backtracking_risk` is the build's static check
for the shapes that make backtracking engines (JavaScript, Python's ``re``) exponential.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from ..format.errors import ToolcatError

#: Patterns longer than this are not analysed by :func:`backtracking_risk` (RE2 still runs them).
ANALYSIS_LIMIT = 4000
#: A repetition whose maximum exceeds this counts as unbounded for :func:`backtracking_risk`.
LARGE_REPEAT = 10
#: RE2's memory budget (program and DFA cache) for an agent's pattern, compiled for one call.
AGENT_MAX_MEM = 8 << 20
#: The budget of each cached schema pattern (a few hundred are kept; real ones need kilobytes).
SCHEMA_MAX_MEM = 2 << 20

_ESCAPE = re.compile(r"\\(u\{[0-9A-Fa-f]{1,6}\}|u[0-9A-Fa-f]{4}|c[A-Za-z]|Z|.)", re.DOTALL)
_OPEN_COUNT = re.compile(r"(?<!\\)\{,(\d+)\}")

SCHEMA_HINT = (
    "RE2 has no lookaround or backreferences: a lookahead (?=X) becomes allOf: [{pattern: X}, ...], "
    "a negative lookahead (?!X) becomes not: {pattern: X}; otherwise check the value in the handler."
)
AGENT_HINT = (
    "This tool runs regular expressions in RE2 (linear time): no lookaround, backreferences or atomic "
    "groups. Search for a plainer pattern and filter the matching lines yourself, "
    "or pass fixed_string: true to search for literal text."
)


class PatternError(ValueError, ToolcatError):
    """A pattern toolcat will not run: ``reason`` says why, ``hint`` how to rewrite it."""

    def __init__(self, pattern: str, reason: str, hint: str) -> None:
        super().__init__(f"regular expression {pattern!r}: {reason}")
        self.pattern = pattern
        self.reason = reason
        self.hint = hint


class InvalidPatternError(PatternError):
    """No regex engine accepts the pattern (``(["``)."""


class UnsupportedPatternError(PatternError):
    """A backtracking engine accepts the pattern, RE2 does not (lookaround, backreferences, ...)."""


def to_re2_syntax(pattern: str) -> str:
    r"""The pattern in RE2's spelling: ``\uXXXX``/``\u{X}`` → ``\x{X}``, ``\cA`` → ``\x{1}``, ``\Z`` → ``\z``.

    JSON Schema patterns are ECMA-262 and file.search patterns are Python; both spell a few
    escapes that RE2 writes differently. ``{,n}`` (Python's ``{0,n}``) is spelt out too.
    """

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        if body.startswith("u{"):
            return "\\x{" + body[2:]
        if body[0] == "u" and len(body) == 5:
            return "\\x{" + body[1:] + "}"
        if body[0] == "c" and len(body) == 2:
            return "\\x{%x}" % (ord(body[1].upper()) - 64)
        if body == "Z":
            return "\\z"
        return match.group(0)

    return _OPEN_COUNT.sub(r"{0,\1}", _ESCAPE.sub(one, pattern))


def _unsupported(message: str) -> tuple[str, str]:
    """Why RE2 refused a pattern that Python's ``re`` accepts, and how to rewrite it."""
    for marker, what in (
        ("(?=", "lookahead (?=...)"),
        ("(?!", "negative lookahead (?!...)"),
        ("(?<=", "lookbehind (?<=...)"),
        ("(?<!", "negative lookbehind (?<!...)"),
        ("(?P=", "a named backreference (?P=name)"),
        ("(?>", "an atomic group (?>...)"),
        ("(?(", "a conditional group (?(...)...)"),
        ("++", "a possessive quantifier"),
        ("*+", "a possessive quantifier"),
        ("?+", "a possessive quantifier"),
    ):
        if marker in message:
            return f"uses {what}, which RE2 does not support", SCHEMA_HINT
    if re.search(r"invalid escape sequence: \\[1-9]", message) or "\\g<" in message:
        return "uses a backreference, which RE2 does not support", SCHEMA_HINT
    if "(?x" in message:
        return (
            "uses verbose mode (?x), which RE2 does not support",
            "Remove (?x) and the spaces and comments it allowed.",
        )
    if "repetition size" in message:
        return (
            "repeats something more than 1000 times, over RE2's limit",
            "Use a count of at most 1000, or bound the length with minLength/maxLength instead.",
        )
    if "too large" in message or "too big" in message:
        return "is too large for RE2's memory budget", "Simplify it; a long list of alternatives is better as an enum."
    return f"is not accepted by RE2 ({message})", SCHEMA_HINT


def compile_pattern(pattern: str, *, ignore_case: bool = False, max_mem: int = AGENT_MAX_MEM) -> Any:
    """The RE2 regex of ``pattern``; raises :class:`PatternError`, or ImportError without google-re2.

    Not cached: an agent sends a new pattern with each call. Schema patterns go through
    :func:`search`, which caches a bounded number of them with a smaller memory budget each.
    """
    import re2  # type: ignore[import-untyped]  # noqa: PLC0415 - optional: the reader is stdlib-only at import

    options = re2.Options()
    options.log_errors = False
    options.case_sensitive = not ignore_case
    options.max_mem = max_mem
    try:
        return re2.compile(to_re2_syntax(pattern), options)
    except UnicodeEncodeError:
        raise InvalidPatternError(
            pattern, "contains a lone surrogate, which is not text", "Write the character itself or a \\x{...} escape."
        ) from None
    except re2.error as exc:
        message = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
    try:
        re.compile(pattern)  # only to tell "invalid" from "unsupported": compiling does not backtrack
    except (re.error, RecursionError, OverflowError) as exc:
        raise InvalidPatternError(
            pattern,
            f"is not a valid regular expression ({exc})",
            "Fix the syntax: escape literal ( ) [ ] { } . * + ? with a backslash.",
        ) from None
    raise UnsupportedPatternError(pattern, *_unsupported(message))


@functools.lru_cache(maxsize=256)
def _schema_regex(pattern: str) -> Any:
    return compile_pattern(pattern, max_mem=SCHEMA_MAX_MEM)


def search(pattern: str, text: str) -> bool:
    """True when ``pattern`` matches somewhere in ``text`` (JSON Schema's ``pattern`` semantics)."""
    try:
        return _schema_regex(pattern).search(text) is not None
    except UnicodeEncodeError:  # a lone surrogate (JSON allows "\ud800"); RE2 matches UTF-8
        return _schema_regex(pattern).search(text.encode("utf-8", "replace").decode("utf-8")) is not None


def check(pattern: str) -> PatternError | None:
    """What is wrong with ``pattern`` for toolcat (None when RE2 runs it); falls back to ``re`` without RE2."""
    try:
        _schema_regex(pattern)
    except PatternError as exc:
        return exc
    except ImportError:
        try:
            re.compile(pattern)
        except (re.error, RecursionError, OverflowError) as exc:
            return InvalidPatternError(
                pattern,
                f"is not a valid regular expression ({exc})",
                "Fix the syntax: escape literal ( ) [ ] { } . * + ? with a backslash.",
            )
    return None


# -- static analysis of backtracking shapes ------------------------------------------------------
_SAMPLES = "aA0 _-./:@,;!'\"\t\n\r\\|#$%&*+=?<>()[]{}~^`é中\u00a0"


def backtracking_risk(pattern: str) -> str | None:
    r"""Why a backtracking engine may take exponential time on ``pattern``, or None.

    Looks at Python's parse tree for the ReDoS shapes: an unbounded repetition whose body
    contains another repetition with nothing mandatory beside it (``(a+)+``, ``(\w+\s?)+``,
    ``((ab)+)*``), whose body can match runs of one character of two different lengths
    (``(a|aa)*``, ``([a-z]+.)+``), or whose body has two alternatives that match the same
    text (``(a|a)*``). A heuristic: Python's parser merges single-character alternatives
    such as ``(\w|\d)`` into one class, so those are not seen.
    """
    if len(pattern) > ANALYSIS_LIMIT:
        return None
    try:
        c = importlib.import_module("re._constants")  # private, stable since 3.11; only the build needs it
        tree = importlib.import_module("re._parser").parse(pattern)
        return _Analysis(c, _samples(pattern)).walk(list(tree), inside=False)
    except (re.error, RecursionError, OverflowError, ImportError, ValueError):
        return None  # not parseable by Python, or nested too deeply to analyse: no warning either way


def _samples(pattern: str) -> str:
    return "".join(sorted(set(_SAMPLES) | {ch for ch in pattern if ch.isprintable()}))


class _Analysis:
    """One walk over a parse tree of ``re._parser``; ``c`` is ``re._constants``."""

    def __init__(self, c: Any, samples: str) -> None:
        self.c = c
        self.samples = samples
        self.repeats = (c.MAX_REPEAT, c.MIN_REPEAT)

    def walk(self, seq: list[Any], *, inside: bool) -> str | None:
        """The first risky shape in ``seq``; ``inside`` is True under an unbounded repetition."""
        c = self.c
        for op, av in seq:
            if op in self.repeats:
                _, high, body = av
                unbounded = high == c.MAXREPEAT or high > LARGE_REPEAT
                if unbounded:
                    found = self.risky_body(list(body))
                    if found:
                        return found
                found = self.walk(list(body), inside=inside or unbounded)
            elif op is c.SUBPATTERN:
                found = self.walk(list(av[-1]), inside=inside)
            elif op is c.BRANCH:
                branches = [list(b) for b in av[1]]
                found = self.ambiguous_branches(branches) if inside else None
                for branch in branches:
                    found = found or self.walk(branch, inside=inside)
            elif op in (c.ASSERT, c.ASSERT_NOT):
                found = self.walk(list(av[1]), inside=inside)
            elif op is c.GROUPREF_EXISTS:
                found = self.walk(list(av[1]), inside=inside) or (
                    self.walk(list(av[2]), inside=inside) if av[2] else None
                )
            else:  # literals, classes, anchors; atomic groups and possessive repeats never backtrack
                found = None
            if found:
                return found
        return None

    def risky_body(self, body: list[Any]) -> str | None:
        """Why repeating ``body`` without bound is ambiguous, or None."""
        if self.lonely_repeat(body):
            return "a repetition inside a repetition, with nothing mandatory beside it (like (a+)+)"
        for ch in self.samples:
            lengths = {n for n in self.run_lengths(body, ch) if n > 0}
            if len(lengths) > 1:
                return (
                    f"the repeated part matches runs of {ch!r} of different lengths, so a long run can be "
                    "split between repetitions in exponentially many ways (like (a|aa)* or ([a-z]+.)+)"
                )
        return None

    def lonely_repeat(self, seq: list[Any]) -> bool:
        """True when ``seq`` holds a repetition (max ≥ 2) and everything beside it can match nothing."""
        c = self.c
        for index, (op, av) in enumerate(seq):
            rest = seq[:index] + seq[index + 1 :]
            if not all(self.nullable([item]) for item in rest):
                continue
            if op in self.repeats and av[1] >= 2:
                return True
            if op is c.SUBPATTERN and self.lonely_repeat(list(av[-1])):
                return True
            if op is c.BRANCH and any(self.lonely_repeat(list(b)) for b in av[1]):
                return True
        return False

    def ambiguous_branches(self, branches: list[list[Any]]) -> str | None:
        for i, first in enumerate(branches):
            for second in branches[i + 1 :]:
                if first == second or (self.nullable(first) and self.nullable(second)):
                    return "two alternatives of a repeated group match the same text (like (a|a)*)"
        return None

    def nullable(self, seq: list[Any]) -> bool:
        """True when ``seq`` can match the empty string."""
        c = self.c
        for op, av in seq:
            if op in self.repeats:
                ok = av[0] == 0 or self.nullable(list(av[2]))
            elif op is c.SUBPATTERN:
                ok = self.nullable(list(av[-1]))
            elif op is c.BRANCH:
                ok = any(self.nullable(list(b)) for b in av[1])
            elif op in (c.AT, c.ASSERT, c.ASSERT_NOT, c.GROUPREF):
                ok = True
            elif op in (c.ATOMIC_GROUP, getattr(c, "POSSESSIVE_REPEAT", None)):
                ok = self.nullable(list(av[-1])) or (op is not c.ATOMIC_GROUP and av[0] == 0)
            else:
                ok = False
            if not ok:
                return False
        return True

    def run_lengths(self, seq: list[Any], ch: str, cap: int = 4) -> set[int]:
        """Lengths (capped at ``cap``) of the runs of ``ch`` that ``seq`` can match in full."""
        lengths = {0}
        for op, av in seq:
            item = self.item_lengths(op, av, ch, cap)
            lengths = {min(a + b, cap) for a in lengths for b in item}
            if not lengths:
                return set()
        return lengths

    def item_lengths(self, op: Any, av: Any, ch: str, cap: int) -> set[int]:
        c = self.c
        if op in self.repeats or op is getattr(c, "POSSESSIVE_REPEAT", None):
            low, high, body = av
            one = self.run_lengths(list(body), ch, cap)
            out = {0} if low == 0 else set()
            current = {0}
            for count in range(1, min(high, cap) + 1):
                current = {min(a + b, cap) for a in current for b in one}
                if count >= low:
                    out |= current
            if high > cap and one - {0}:
                out |= {cap}
            return out
        if op in (c.SUBPATTERN, c.ATOMIC_GROUP):
            return self.run_lengths(list(av[-1]), ch, cap)
        if op is c.BRANCH:
            return set().union(*(self.run_lengths(list(b), ch, cap) for b in av[1]))
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT, c.GROUPREF):
            return {0}
        return {1} if self.matches(op, av, ch) else set()

    def matches(self, op: Any, av: Any, ch: str) -> bool:
        """True when the one-character item ``(op, av)`` matches ``ch``."""
        c = self.c
        code = ord(ch)
        if op is c.LITERAL:
            return bool(av == code)
        if op is c.NOT_LITERAL:
            return bool(av != code)
        if op is c.ANY:
            return ch != "\n"
        if op is c.IN:
            negate = bool(av) and av[0][0] is c.NEGATE
            hit = any(self.in_item(o, a, ch) for o, a in (av[1:] if negate else av))
            return hit != negate
        if op is c.CATEGORY:
            return self.in_item(op, av, ch)
        return False

    def in_item(self, op: Any, av: Any, ch: str) -> bool:
        c = self.c
        code = ord(ch)
        if op is c.LITERAL:
            return bool(av == code)
        if op is c.RANGE:
            return bool(av[0] <= code <= av[1])
        if op is c.CATEGORY:
            name = str(av)
            tests = {
                "DIGIT": ch.isdigit(),
                "SPACE": ch.isspace(),
                "WORD": ch.isalnum() or ch == "_",
                "LINEBREAK": ch == "\n",
            }
            for key, value in tests.items():
                if name.endswith("NOT_" + key):
                    return not value
                if name.endswith(key):
                    return value
        return False
