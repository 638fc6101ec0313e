"""The ``util.*`` tools of the example catalogue: clock and time zones, safe arithmetic, JSON path queries and text helpers.

Time zones come from :mod:`zoneinfo`; arithmetic is an :mod:`ast` walker over numbers and a fixed
table of functions, never ``eval``; text summaries are extractive (lead or most salient sentences).
"""

from __future__ import annotations

import ast
import datetime as dt
import difflib
import math
import operator
import re
from collections import Counter
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ._shared import WORD, JSONDict, words

__all__ = [
    "util_json_query",
    "util_math_eval",
    "util_text_diff",
    "util_text_summarize",
    "util_text_word_count",
    "util_time_convert",
    "util_time_now",
]

# ---------------------------------------------------------------------------
# util.time.*
# ---------------------------------------------------------------------------


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown IANA time zone {name!r} (e.g. 'Europe/Berlin', 'America/New_York', 'UTC')") from None


def _describe(moment: dt.datetime, zone_name: str) -> JSONDict:
    offset = moment.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    dst = moment.dst()
    return {
        "timezone": zone_name,
        "iso8601": moment.isoformat(timespec="seconds"),
        "unix_seconds": int(moment.timestamp()),
        "utc_offset": f"{sign}{hours:02d}:{mins:02d}",
        "date": moment.date().isoformat(),
        "time": moment.strftime("%H:%M:%S"),
        "weekday": moment.strftime("%A"),
        "is_dst": bool(dst),
    }


def util_time_now(args: JSONDict) -> JSONDict:
    """``util.time.now``: the current date and time in an IANA time zone."""
    name = str(args.get("timezone", "UTC"))
    return _describe(dt.datetime.now(_zone(name)), name)


def util_time_convert(args: JSONDict) -> JSONDict:
    """``util.time.convert``: a timestamp expressed in another time zone."""
    raw = str(args["time"])
    try:
        moment = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"{raw!r} is not an ISO 8601 date-time (e.g. 2026-11-24T15:30:00+01:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(str(args.get("from_timezone", "UTC"))))
    target = str(args["to_timezone"])
    result = _describe(moment.astimezone(_zone(target)), target)
    result["input"] = raw
    return result


# ---------------------------------------------------------------------------
# util.math.eval
# ---------------------------------------------------------------------------

#: What an arithmetic expression computes with.
Number = int | float

_MAX_EXPONENT = 10_000
_MAX_RESULT_BITS = 4_096


def _safe_pow(base: Number, exponent: Number) -> Number:
    if isinstance(exponent, int | float) and abs(exponent) > _MAX_EXPONENT:
        raise ValueError(f"exponent {exponent} is too large (limit {_MAX_EXPONENT})")
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base).bit_length() * exponent > _MAX_RESULT_BITS
    ):
        raise ValueError("result would be too large")
    result: Number = operator.pow(base, exponent)
    return result


def _safe_factorial(value: Number) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > 170:
        raise ValueError("factorial takes an integer from 0 to 170")
    return math.factorial(value)


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _safe_pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[Number], Number]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Number]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "cbrt": math.cbrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "degrees": math.degrees,
    "radians": math.radians,
    "hypot": math.hypot,
    "floor": math.floor,
    "ceil": math.ceil,
    "factorial": _safe_factorial,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _evaluate(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise TypeError(f"unsupported literal {node.value!r}; only numbers are allowed")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ValueError(f"unknown name {node.id!r}; constants are {', '.join(sorted(_CONSTANTS))}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
            allowed = ", ".join(sorted(_FUNCTIONS))
            raise ValueError(f"unsupported function call; allowed functions: {allowed}")
        return _FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args))
    raise ValueError(f"unsupported syntax: {type(node).__name__}")


def util_math_eval(args: JSONDict) -> JSONDict:
    """``util.math.eval``: evaluate an arithmetic expression without ``eval``."""
    expression = str(args["expression"])
    try:
        # "2^10" means a power to most people; rewriting the text keeps ** precedence
        tree = ast.parse(expression.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse expression: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > 200:
        raise ValueError("expression is too complex (more than 200 syntax nodes)")
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except OverflowError:
        raise ValueError("result is too large to represent") from None
    except TypeError as exc:
        raise ValueError(f"invalid expression: {exc}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("result is not a finite number")
    if isinstance(value, int) and abs(value) >= 2**63:
        try:
            value = float(value)
        except OverflowError:
            raise ValueError("result is too large to represent") from None
    precision = args.get("precision")
    if precision is not None and isinstance(value, float):
        value = round(value, int(precision))
    formatted = f"{value:,.{int(precision)}f}" if precision is not None else f"{value:,}"
    return {"expression": expression, "result": value, "formatted": formatted}


# ---------------------------------------------------------------------------
# util.json.query
# ---------------------------------------------------------------------------


class _Wildcard:
    """The ``*`` segment of a path: every member of an object or array."""


_WILDCARD = _Wildcard()
#: One step of a parsed path: a member name, an array index, or ``*``.
_Segment = str | int | _Wildcard
_SEGMENT = re.compile(
    r"""\.?(?P<name>[A-Za-z_$@][\w$@-]*|\d+|\*)"""
    r"""|\[(?:(?P<index>-?\d+)|(?P<star>\*)|"(?P<dq>[^"]*)"|'(?P<sq>[^']*)')\]"""
)


def _parse_path(path: str) -> list[_Segment]:
    text = path.strip()
    text = text.removeprefix("$")
    segments: list[_Segment] = []
    position = 0
    while position < len(text):
        found = _SEGMENT.match(text, position)
        if found is None or found.end() == position:
            raise ValueError(f"cannot parse path {path!r} at character {position + 1}")
        if found["name"] is not None:
            name = found["name"]
            segments.append(_WILDCARD if name == "*" else name)
        elif found["index"] is not None:
            segments.append(int(found["index"]))
        elif found["star"] is not None:
            segments.append(_WILDCARD)
        else:
            segments.append(found["dq"] if found["dq"] is not None else found["sq"])
        position = found.end()
    return segments


def _step(value: Any, segment: _Segment) -> list[Any]:
    if isinstance(segment, _Wildcard):
        if isinstance(value, dict):
            return list(value.values())
        if isinstance(value, list):
            return list(value)
        return []
    if isinstance(value, dict):
        key = str(segment)
        return [value[key]] if key in value else []
    if isinstance(value, list):
        try:
            index = int(segment)
        except (TypeError, ValueError):
            return []
        if -len(value) <= index < len(value):
            return [value[index]]
    return []


def util_json_query(args: JSONDict) -> JSONDict:
    """``util.json.query``: pick values out of JSON with a dotted path (``items[0].name``, ``*``)."""
    path = str(args["path"])
    segments = _parse_path(path)
    current: list[Any] = [args["data"]]
    for segment in segments:
        current = [found for value in current for found in _step(value, segment)]
    if any(segment is _WILDCARD for segment in segments):
        return {"path": path, "found": bool(current), "value": current, "match_count": len(current)}
    if current:
        return {"path": path, "found": True, "value": current[0], "match_count": 1}
    return {"path": path, "found": False, "value": args.get("default"), "match_count": 0}


# ---------------------------------------------------------------------------
# util.text.*
# ---------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"""(?:(?<=[.!?])|(?<=[.!?]["')\]]))\s+(?=["'(\[]?[A-Z0-9])""")
_STOPWORDS = words(
    "a an and are as at be been but by can could did do does for from had has have he her his i if in "
    "into is it its it's just more most my no not of on or our she so than that the their them then "
    "there these they this those to too was we were what when which who will with would you your"
)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        flat = " ".join(block.split())
        out.extend(s.strip() for s in _SENTENCE_END.split(flat) if s.strip())
    return out


def util_text_summarize(args: JSONDict) -> JSONDict:
    """``util.text.summarize``: an extractive summary (lead sentences or the most salient ones)."""
    text = str(args["text"])
    limit = int(args.get("max_sentences", 3))
    strategy = str(args.get("strategy", "lead"))
    sentences = _sentences(text)
    if strategy == "salient" and len(sentences) > limit:
        freq = Counter(w for w in WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 2)

        def score(sentence: str) -> float:
            words = [w for w in WORD.findall(sentence.lower()) if w in freq]
            return sum(freq[w] for w in words) / (len(words) + 3)

        ranked = sorted(range(len(sentences)), key=lambda i: (-score(sentences[i]), i))
        chosen = [sentences[i] for i in sorted(ranked[:limit])]
    else:
        chosen = sentences[:limit]
    summary = " ".join(chosen)
    return {
        "summary": summary,
        "sentences": chosen,
        "strategy": strategy,
        "source_sentences": len(sentences),
        "compression_ratio": round(len(summary) / len(text), 3) if text else 1.0,
    }


def util_text_word_count(args: JSONDict) -> JSONDict:
    """``util.text.word_count``: words, characters, sentences and reading time."""
    text = str(args["text"])
    wpm = int(args.get("words_per_minute", 238))
    words = len(text.split())
    return {
        "words": words,
        "characters": len(text),
        "characters_no_spaces": sum(1 for c in text if not c.isspace()),
        "lines": len(text.splitlines()),
        "sentences": len(_sentences(text)),
        "paragraphs": len([b for b in re.split(r"\n\s*\n", text) if b.strip()]),
        "reading_time_minutes": round(words / wpm, 1),
    }


def util_text_diff(args: JSONDict) -> JSONDict:
    """``util.text.diff``: a unified diff between two texts."""
    original, modified = str(args["original"]), str(args["modified"])
    if args.get("ignore_whitespace", False):

        def norm(s: str) -> list[str]:
            return [" ".join(line.split()) + "\n" for line in s.splitlines()]

        old_lines, new_lines = norm(original), norm(modified)
    else:
        old_lines, new_lines = original.splitlines(keepends=True), modified.splitlines(keepends=True)
    diff_lines = list(
        difflib.unified_diff(
            old_lines,
            new_lines,
            fromfile=str(args.get("from_label", "original")),
            tofile=str(args.get("to_label", "modified")),
            n=int(args.get("context_lines", 3)),
        )
    )
    diff = "".join(line if line.endswith("\n") else line + "\n" for line in diff_lines)
    added = sum(1 for line in diff_lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff_lines if line.startswith("-") and not line.startswith("---"))
    return {"diff": diff, "identical": not diff_lines, "added_lines": added, "removed_lines": removed}
