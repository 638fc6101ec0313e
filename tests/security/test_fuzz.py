"""Bounded fuzzing (hypothesis) of the source loader, the reader's artifact parsing, every gateway operation and MCP stdio.

Each property counts the inputs it tried and fails on the first crash (an exception that
is not the component's documented error, a non-envelope answer, or an INTERNAL envelope
where the brief forbids one), after hypothesis has shrunk it to a minimal input. A summary
line per property (inputs, crashes, known defects, seconds) is printed even under -q.

``TOOLCAT_FUZZ_EXAMPLES=N`` runs every property with N examples (``make fuzz``); the
default keeps the whole file well under a minute on two cores. Hypothesis keeps no
example database (``database=None``), so nothing is written into the repository.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import reprlib
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import REPO, write_tree

from toolcat.build import build, compile_catalog
from toolcat.build.errors import CatalogError
from toolcat.format.dialects import dialect_tools
from toolcat.format.envelope import ReaderError
from toolcat.mcp.server import CatalogServer
from toolcat.mcp.stdio import Drop, Oversize, Reply, check_line
from toolcat.reader import Catalog

FUZZ_EXAMPLES = int(os.environ.get("TOOLCAT_FUZZ_EXAMPLES", "0") or 0)
#: One input may take this long before it counts as a hang (SIGALRM; main thread only).
HANG_SECONDS = int(os.environ.get("TOOLCAT_FUZZ_HANG_SECONDS", "10"))
#: TOOLCAT_FUZZ_COLLECT=1 keeps going after a crash and prints one example per crash site (for triage).
COLLECT = os.environ.get("TOOLCAT_FUZZ_COLLECT") == "1"


def fuzz_settings(default_examples: int) -> settings:
    """Hypothesis settings: ``default_examples`` (or TOOLCAT_FUZZ_EXAMPLES), no deadline, no database."""
    return settings(
        max_examples=FUZZ_EXAMPLES or default_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
        # the CI budget replays the same inputs every run (a rare find must not turn CI red at random);
        # make fuzz (TOOLCAT_FUZZ_EXAMPLES) explores new ones
        derandomize=not FUZZ_EXAMPLES,
    )


# -- tallies and the crash guard ------------------------------------------------------------------


@dataclass
class Tally:
    """What one property saw: inputs tried, crashes, known (routed) defects and outcome counts."""

    name: str
    tried: int = 0
    crashes: int = 0
    known: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)
    started: float = field(default_factory=time.perf_counter)
    sites: dict[str, str] = field(default_factory=dict)
    internal: Counter[str] = field(default_factory=Counter)

    def line(self) -> str:
        """The summary line printed after the property ran (and, when collecting, one line per crash site)."""
        known = ", ".join(f"{n} {k}" for k, n in sorted(self.known.items())) or "none"
        top = ", ".join(f"{k}={n}" for k, n in self.outcomes.most_common(8))
        sites = "".join(f"\n  crash site {site}: {example}" for site, example in sorted(self.sites.items()))
        if COLLECT:  # for triage; a green run's INTERNAL envelopes are checked against the log by the property
            sites += "".join(f"\n  INTERNAL envelope x{n}: {what}" for what, n in self.internal.most_common())
        return (
            f"fuzz {self.name}: {self.tried} inputs, {self.crashes} crashes, known defects: {known}, "
            f"{time.perf_counter() - self.started:.1f} s [{top}]{sites}"
        )


class Hang(BaseException):
    """Raised by SIGALRM when one input runs longer than HANG_SECONDS (a BaseException, so no ``except Exception`` eats it)."""


@dataclass(frozen=True, slots=True)
class KnownDefect:
    """A crash class already routed to its owner: matched on the exception type and traceback text (``a|b``: either)."""

    name: str
    exception: type[BaseException]
    where: str


#: Crash classes already routed to an owner and not yet fixed (matched so a property can go on counting).
#: Empty: K1-K5, found by this harness during issue 11, are fixed and pinned by the tests at the end,
#: so any such crash now fails its property.
KNOWN: list[KnownDefect] = []


@contextlib.contextmanager
def hang_guard() -> Iterator[None]:
    """Turn an input that runs past HANG_SECONDS into a :class:`Hang` crash instead of a stuck test run."""

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise Hang(f"one input ran longer than {HANG_SECONDS} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def known_defect(exc: BaseException) -> str | None:
    """The name of the routed defect this exception belongs to, if any."""
    text = "".join(traceback.format_exception(exc))
    for known in KNOWN:
        if isinstance(exc, known.exception) and any(part in text for part in known.where.split("|")):
            return known.name
    return None


@contextlib.contextmanager
def guarded(tally: Tally, describe: Callable[[], str]) -> Iterator[None]:
    """Count one input; a crash is printed with the input and re-raised (so hypothesis shrinks it)."""
    tally.tried += 1
    try:
        with hang_guard():
            yield
    except (Exception, Hang) as exc:
        name = known_defect(exc)
        if name is not None:
            tally.known[name] += 1
            tally.outcomes["known"] += 1
            return
        tally.crashes += 1
        where = crash_site(exc)
        if COLLECT:
            first = where not in tally.sites
            example = f"{str(exc)[:300]} {' '.join(getattr(exc, '__notes__', []))} <- {describe()[:400]}"
            if first or len(example) < len(tally.sites[where]):
                tally.sites[where] = example
            return
        print(
            f"\nCRASH in {tally.name} at {where}: {type(exc).__name__}: {str(exc)[:300]} "
            f"{' '.join(getattr(exc, '__notes__', []))}\n  input: {describe()[:600]}"
        )
        raise


def crash_site(exc: BaseException) -> str:
    """The innermost frame of the project's code (compiler/) in the exception's chain: file:line function."""
    site = "?"
    current: BaseException | None = exc
    while current is not None:
        for frame in traceback.extract_tb(current.__traceback__):
            if "/compiler/" in frame.filename:
                site = f"{frame.filename.split('/compiler/')[-1]}:{frame.lineno} {frame.name}"
        current = current.__cause__
    return f"{type(exc).__name__} at {site}"


@pytest.fixture
def tally(request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]) -> Iterator[Tally]:
    """A tally named after the test, whose summary line is printed when the test ends."""
    counted = Tally(request.node.name.removeprefix("test_"))
    yield counted
    with capsys.disabled():
        print(f"\n{counted.line()}")


def check_envelope(tally: Tally, answer: Any, *, internal_is_crash: bool) -> None:
    """An operation's answer: a dict with ``ok`` true or false; an error carries code and message."""
    assert isinstance(answer, dict), f"not a dict: {type(answer).__name__}"
    assert answer.get("ok") in {True, False}, f"no ok flag: {sorted(answer)[:10]}"
    try:
        json.dumps(answer, default=repr)
    except RecursionError as exc:
        raise AssertionError("the answer is not JSON-serialisable: RecursionError (it nests too deep)") from exc
    if answer["ok"] is False:
        error = answer.get("error")
        assert isinstance(error, dict), answer
        assert isinstance(error.get("code"), str), answer
        assert isinstance(error.get("message"), str), answer
        tally.outcomes[error["code"]] += 1
        if error["code"] == "INTERNAL":
            tally.internal[
                error["message"].split(":", 2)[0][:80] + ": " + str((error.get("details") or {}).get("exception"))
            ] += 1
            if internal_is_crash or COLLECT:
                print(f"\nINTERNAL in {tally.name}: {error['message'][:300]}")
            assert not internal_is_crash, f"INTERNAL envelope: {error['message'][:300]}"
    else:
        tally.outcomes["ok"] += 1


# -- JSON values an agent (or a hostile host) can send --------------------------------------------

NASTY_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "root",
        ".",
        "..",
        "../../etc/passwd",
        "/etc/passwd",
        "~",
        "\x00",
        "a\x00b",
        "\u202e",
        "\ud7ff",
        "\r\n",
        "\t",
        "%s%n",
        "{0}",
        "${HOME}",
        "$(id)",
        "`id`",
        "<script>alert(1)</script>",
        "javascript:alert(1)",
        "(a+)+$",
        "(-+)+y",
        "([",
        "\\",
        "*",
        "**/*",
        "?",
        "[",
        "NaN",
        "-1",
        "1e999",
        "0x10",
        "null",
        "true",
        "x" * 5000,
        "é" * 300,
        "🙂" * 100,
        "util.math.eval",
        "util_math_eval",
        "task.code_review",
        "code-reviewer",
        "file.read",
        "file.search",
        "files",
        "utilities/compute",
        "utilities.compute",
        "onto.task",
        "util",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**100, 10**4000])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | NASTY_STRINGS
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10) | NASTY_STRINGS, inner, max_size=5)
    ),
    max_leaves=20,
)


def nested(depth: int, leaf: Any = 1) -> Any:
    """A list nested ``depth`` levels deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@dataclass(frozen=True, slots=True)
class Deep:
    """A placeholder for a list nested ``depth`` deep: drawn small (hypothesis can print it), built before the call."""

    depth: int


def materialize(value: Any) -> Any:
    """``value`` with every :class:`Deep` placeholder replaced by its nested list (iteratively, on a copy)."""
    if isinstance(value, Deep):
        return nested(value.depth)
    if not isinstance(value, dict | list):
        return value
    root: Any = dict(value) if isinstance(value, dict) else list(value)
    stack = [root]
    while stack:
        item = stack.pop()
        keys = list(item) if isinstance(item, dict) else range(len(item))
        for key in keys:
            child = item[key]
            if isinstance(child, Deep):
                item[key] = nested(child.depth)
            elif isinstance(child, dict | list):
                item[key] = dict(child) if isinstance(child, dict) else list(child)
                stack.append(item[key])
    return root


def short_repr(value: Any) -> str:
    """A bounded repr (no recursion past a few levels) for crash reports."""
    bounded = reprlib.Repr()
    bounded.maxlevel, bounded.maxstring, bounded.maxother, bounded.maxlist, bounded.maxdict = 6, 80, 80, 8, 8
    return bounded.repr(value)


DEEP = st.sampled_from([50, 100, 200, 1000, 3000]).map(Deep)
ARGUMENT_VALUES = JSON_VALUES | DEEP


# == a. the source loader ==========================================================================

BASE_TOOL: dict[str, Any] = {
    "id": "grp.math.eval",
    "summary": "Evaluate an arithmetic expression.",
    "kind": "read",
    "description": "Evaluates an expression exactly.",
    "args_schema": {
        "type": "object",
        "properties": {"expression": {"type": "string", "minLength": 1}},
        "required": ["expression"],
        "additionalProperties": False,
    },
    "examples": [{"description": "add", "args": {"expression": "1+2"}}],
    "tags": ["math"],
    "handler": "toolcat.examples.util:util_math_eval",
}
BASE_NODE = {"title": "Group", "summary": "A group of tools.", "tags": ["g"]}
BASE_SKILL = (
    "---\nname: demo-skill\ndescription: Demonstrates skills. Use when testing.\nlicense: MIT\n"
    "metadata:\n  version: '1.0'\n---\n# Demo\n\nRead references/guide.md when asked.\n"
)
TOOL_FIELDS = [
    "id",
    "summary",
    "description",
    "args_schema",
    "result_schema",
    "examples",
    "errors",
    "tags",
    "kind",
    "optional",
    "when_to_use",
    "policy",
    "annotations",
    "categories",
    "handler",
    "version",
    "deprecated",
    "alias",
]

SCHEMA_KEYWORDS = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "pattern",
        "enum",
        "default",
        "$ref",
        "$defs",
        "items",
        "minimum",
        "maxLength",
        "format",
        "additionalProperties",
        "oneOf",
        "$dynamicRef",
        "$id",
        "$schema",
        "const",
        "patternProperties",
        "not",
    ]
)
SCHEMA_VALUES = JSON_VALUES | st.sampled_from(
    [
        "object",
        "string",
        "integer",
        "number",
        "array",
        "boolean",
        "null",
        "#",
        "#/$defs/a",
        "#/$defs/missing",
        "http://127.0.0.1:9/schema.json",
        "file:///etc/passwd",
        "urn:x",
        "(a+)+$",
        "([",
        "^[a-z]+$",
        "https://json-schema.org/draft/2020-12/schema",
        "http://json-schema.org/draft-04/schema#",
    ]
)
SCHEMAS = st.recursive(
    st.dictionaries(SCHEMA_KEYWORDS, SCHEMA_VALUES, max_size=4),
    lambda inner: (
        st.dictionaries(SCHEMA_KEYWORDS, inner | SCHEMA_VALUES | st.lists(inner, max_size=3), max_size=4)
        | st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(st.text(max_size=6), inner, max_size=3)}
        )
    ),
    max_leaves=12,
)


@st.composite
def tool_mappings(draw: st.DrawFn) -> dict[str, Any]:
    """A tool mapping: the valid base tool with some fields replaced, removed or added."""
    tool = dict(BASE_TOOL)
    for name in draw(st.lists(st.sampled_from(TOOL_FIELDS), max_size=5, unique=True)):
        action = draw(st.sampled_from(["drop", "json", "schema"]))
        if action == "drop":
            tool.pop(name, None)
        elif action == "schema" and name in {"args_schema", "result_schema"}:
            tool[name] = draw(SCHEMAS)
        else:
            tool[name] = draw(JSON_VALUES)
    if draw(st.booleans()):
        tool[draw(st.text(max_size=12))] = draw(JSON_VALUES)
    return tool


YAML_TOKENS = st.sampled_from(
    [
        "&a ",
        "*a",
        "<<: *a\n",
        "&a [*a]",
        "!!python/object/apply:os.system ['id']",
        "!!binary AAAA",
        "!!str ",
        "!!int ",
        "!!float ",
        "!!timestamp ",
        "!!set ",
        "!!omap ",
        "{",
        "}",
        "[",
        "]",
        ":",
        ": ",
        "- ",
        "? ",
        "\t",
        "\n",
        "---\n",
        "...\n",
        "%YAML 1.1\n",
        "%TAG ! tag:x:\n",
        "|\n",
        ">-\n",
        "\x00",
        "\ufeff",
        "\r\n",
        "'",
        '"',
        "#",
        "~",
        "null",
        "1e999",
        ".nan",
        ".inf",
        "0x1F",
        "0o17",
        "2026-03-17",
        "12:30:00",
        "9" * 5000,
        "id: ",
        "tools:\n",
        "name: ",
        "description: ",
        "title: ",
        "\u2028",
        "\x85",
        "\\u0000",
        "a" * 3000,
    ]
)


@st.composite
def mutated_text(draw: st.DrawFn, base: str) -> bytes:
    """``base`` with a few insertions, deletions, replacements and duplications (tokens, text or bytes)."""
    data = bytearray(base.encode("utf-8"))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        payload = draw(YAML_TOKENS.map(str.encode) | st.text(max_size=12).map(str.encode) | st.binary(max_size=6))
        end = min(len(data), at + draw(st.integers(0, 20)))
        if op == "insert":
            data[at:at] = payload
        elif op == "delete":
            del data[at:end]
        elif op == "replace":
            data[at:end] = payload
        else:
            data[at:at] = data[at:end]
    return bytes(data)


def dump(value: Any, as_json: bool) -> bytes:
    """A YAML or JSON rendering of ``value`` (what an author could have written)."""
    if as_json:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")
    return yaml.safe_dump(value, allow_unicode=True, sort_keys=False).encode("utf-8")


@st.composite
def source_trees(draw: st.DrawFn) -> tuple[str, dict[str, bytes]]:
    """A small catalogue source tree with one file broken: structurally (random fields) or as text (mutations)."""
    as_json = draw(st.booleans())
    tools_name = "grp/tools.json" if as_json else "grp/tools.yaml"
    tree: dict[str, bytes] = {
        "_node.yaml": dump({"title": "Fuzz", "summary": "A catalogue under fuzzing."}, as_json=False),
        "grp/_node.yaml": dump(BASE_NODE, as_json=False),
        tools_name: dump({"tools": [BASE_TOOL, {**BASE_TOOL, "id": "grp.math.other", "alias": "other"}]}, as_json),
        "skills/demo-skill/SKILL.md": BASE_SKILL.encode(),
        "skills/demo-skill/references/guide.md": b"# Guide\n",
    }
    target = draw(st.sampled_from(["tools", "tools_text", "node", "node_text", "root_node", "skill", "skill_text"]))
    if target == "tools":
        shape = draw(st.sampled_from(["list", "single", "raw"]))
        tools = draw(st.lists(tool_mappings(), min_size=1, max_size=3))
        body: Any = {"tools": tools} if shape == "list" else tools[0] if shape == "single" else draw(JSON_VALUES)
        tree[tools_name] = dump(body, as_json)
    elif target == "tools_text":
        tree[tools_name] = draw(mutated_text(tree[tools_name].decode()))
    elif target in {"node", "root_node"}:
        node = dict(BASE_NODE)
        for key in draw(st.lists(st.sampled_from(["title", "summary", "tags", "extra"]), max_size=3, unique=True)):
            node[key] = draw(JSON_VALUES)
        tree["grp/_node.yaml" if target == "node" else "_node.yaml"] = dump(
            node if draw(st.booleans()) else draw(JSON_VALUES), as_json=False
        )
    elif target == "node_text":
        tree["grp/_node.yaml"] = draw(mutated_text(tree["grp/_node.yaml"].decode()))
    elif target == "skill":
        front = {"name": "demo-skill", "description": "Demonstrates skills. Use when testing."}
        for key in draw(
            st.lists(
                st.sampled_from(
                    ["name", "description", "license", "compatibility", "metadata", "allowed-tools", "tags", "version"]
                ),
                max_size=4,
                unique=True,
            )
        ):
            front[key] = draw(JSON_VALUES)
        frontmatter = yaml.safe_dump(front if draw(st.booleans()) else draw(JSON_VALUES), allow_unicode=True)
        tree["skills/demo-skill/SKILL.md"] = f"---\n{frontmatter}---\n{draw(st.text(max_size=200))}\n".encode()
    else:
        tree["skills/demo-skill/SKILL.md"] = draw(mutated_text(BASE_SKILL))
    return target, tree


def write_bytes_tree(root: Path, tree: dict[str, bytes]) -> Path:
    """Write ``{relative path: bytes}`` under a fresh ``root``."""
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def test_source_loader_answers_every_tree_with_success_or_diagnostics(tmp_path: Path, tally: Tally) -> None:
    """Random and mutated tools files, _node.yaml and SKILL.md frontmatter load, or fail with SourceError/CatalogError."""
    counter = iter(range(10**9))

    @fuzz_settings(300)
    @given(source_trees())
    def run(case: tuple[str, dict[str, bytes]]) -> None:
        target, tree = case
        src = write_bytes_tree(tmp_path / f"src{next(counter)}", tree)
        with guarded(tally, lambda: f"{target}: {tree!r}"):
            message = None
            try:
                compile_catalog(src, strict=False)
            except CatalogError as exc:  # SourceError (diagnostics) or a CatalogError naming the problem
                message = str(exc.message)
            assert message is None or message.strip(), "a CatalogError without a message"
            tally.outcomes["valid" if message is None else "diagnostics"] += 1

    run()
    assert tally.crashes == 0 or COLLECT


# == b. the reader's parsing of artifacts (a hostile host) =========================================

FUZZ_TREE: dict[str, Any] = {
    "_node.yaml": {"title": "Fuzz", "summary": "A small catalogue for artifact fuzzing."},
    "grp/_node.yaml": {"title": "Group", "summary": "Arithmetic and files.", "tags": ["g"]},
    "grp/tools.yaml": {
        "tools": [
            BASE_TOOL,
            {
                "id": "grp.host.only",
                "summary": "A tool the host runs.",
                "kind": "write",
                "args_schema": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}},
            },
        ]
    },
    "grp/sub/tools.yaml": {
        "tools": [
            {
                "id": "grp.sub.echo",
                "summary": "Echo nested text.",
                "kind": "read",
                "categories": ["grp"],
                "args_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            }
        ]
    },
    "skills/demo-skill/SKILL.md": BASE_SKILL,
    "skills/demo-skill/references/guide.md": "# Guide\n\nThe level 3 text.\n",
}
DEEP_MARK = "\u0000deep\u0000"


def _walk_refs(value: Any) -> Iterator[dict[str, Any]]:
    """Every ``{path, sha256, bytes}`` ref inside a parsed artifact (iteratively)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("path"), str) and isinstance(item.get("sha256"), str):
                yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _paths(value: Any) -> list[tuple[Any, ...]]:
    """Every JSON path (tuple of keys and indexes) in a document, the root included."""
    out: list[tuple[Any, ...]] = [()]
    stack: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while stack:
        path, item = stack.pop()
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else []
        for key, child in children:
            out.append((*path, key))
            stack.append(((*path, key), child))
    return out


def _render(value: Any, depth: int) -> bytes:
    """Compact JSON of ``value``, with the deep-nesting marker replaced by ``depth`` nested lists."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace(json.dumps(DEEP_MARK), "[" * depth + "]" * depth).encode("utf-8")


class ArtifactTamperer:
    """A copy of a build whose JSON artifacts can be rewritten, with every ref up the chain re-hashed to match."""

    def __init__(self, original: Path, work: Path) -> None:
        self.work = work
        self.files = {p.relative_to(original).as_posix(): p.read_bytes() for p in original.rglob("*") if p.is_file()}
        # the reader's artifacts alone: the build's private files (.toolcat-*) are never read by a reader, and their
        # content follows the machine's caches (the vector cache's shard names), which would make the draws of a
        # derandomized run depend on the machine's history
        self.json_files = sorted(
            rel
            for rel in self.files
            if rel.endswith(".json") and not rel.startswith(("site/", ".toolcat")) and "/.toolcat" not in rel
        )
        self.written: set[str] = set()
        for rel, data in self.files.items():
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            (work / rel).write_bytes(data)

    def reset(self) -> None:
        """Put back every file the last example changed."""
        for rel in self.written:
            (self.work / rel).write_bytes(self.files[rel])
        self.written.clear()

    def tamper(self, rel: str, data: bytes) -> None:
        """Write ``data`` as ``rel`` and re-hash the refs that point to it, up to catalog.json."""
        current = {rel: data}
        queue = [rel]
        while queue:
            child = queue.pop()
            digest, size = hashlib.sha256(current[child]).hexdigest(), len(current[child])
            for parent in self.json_files:
                if parent == rel:
                    continue  # the tampered file keeps exactly the bytes the example chose
                doc = json.loads(current.get(parent, self.files[parent]))
                hit = False
                for ref in _walk_refs(doc):
                    if ref["path"] == child and (ref["sha256"], ref.get("bytes")) != (digest, size):
                        ref["sha256"], ref["bytes"] = digest, size
                        hit = True
                if hit:
                    pretty = parent == "catalog.json"
                    current[parent] = json.dumps(
                        doc,
                        sort_keys=True,
                        indent=2 if pretty else None,
                        separators=None if pretty else (",", ":"),
                        ensure_ascii=False,
                    ).encode("utf-8")
                    queue.append(parent)
        for path, content in current.items():
            (self.work / path).write_bytes(content)
            self.written.add(path)


@st.composite
def artifact_mutations(draw: st.DrawFn, tamperer: ArtifactTamperer) -> tuple[str, Any, int, str]:
    """(file, mutated document, nesting depth for the marker, description): one artifact given a wrong shape."""
    rel = draw(st.sampled_from(tamperer.json_files))
    doc = json.loads(tamperer.files[rel])
    paths = _paths(doc)
    depth = draw(st.sampled_from([10, 100, 500, 5000]))
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(paths))
        kind = draw(st.sampled_from(["replace", "delete", "deep", "wrong_type"]))
        value: Any = None
        if kind == "replace":
            value = draw(JSON_VALUES)
        elif kind == "deep":
            value = DEEP_MARK
        elif kind == "wrong_type":
            value = draw(
                st.sampled_from(
                    [
                        None,
                        0,
                        -1,
                        10**400,
                        1.5,
                        True,
                        "",
                        "x",
                        [],
                        {},
                        [None],
                        {"": None},
                        "../../../etc/passwd",
                        {"path": "../x", "sha256": "0" * 64, "bytes": 1},
                    ]
                )
            )
        edits.append((path, kind, value if kind != "deep" else f"<{depth} nested lists>"))
        if not path:
            doc = value if kind != "delete" else {}
            paths = [()]
            continue
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            if kind == "delete":
                del parent[path[-1]]
            else:
                parent[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue  # an earlier edit removed this path
    return rel, doc, depth, f"{rel}: {edits}"


def reader_calls(cat: Catalog) -> list[tuple[str, Callable[[], Any]]]:
    """Every reader operation, with arguments that reach the artifacts they read."""
    tool, skill = "grp.math.eval", "task.demo_skill"
    return [
        ("list", cat.list),
        ("list grp", lambda: cat.list("grp")),
        ("list grp/sub", lambda: cat.list(["grp", "sub"], limit=1, cursor="o:1")),
        ("list tags", lambda: cat.list(tags=["g", "math"])),
        ("list query", lambda: cat.list(query="evaluate expression")),
        ("search_nodes", lambda: cat.search_nodes("arithmetic")),
        ("search_tool_by_category", lambda: cat.search_tool_by_category("echo", "grp")),
        ("expand_tool", lambda: cat.expand_tool(tool)),
        ("expand_tool alias", lambda: cat.expand_tool("grp_math_eval")),
        ("call_tool", lambda: cat.call_tool(tool, {"expression": "1+2"})),
        ("tool_help root", lambda: cat.tool_help("root")),
        ("tool_help group", lambda: cat.tool_help("grp")),
        ("tool_help op", lambda: cat.tool_help(tool, "full", include_schemas=True)),
        ("tool_help missing", lambda: cat.tool_help("grp.math.evl")),
        ("tool_exec dry", lambda: cat.tool_exec(tool, {"expression": "2*3"}, dry_run=True)),
        ("tool_exec", lambda: cat.tool_exec(tool, {"expression": "2*3"}, idempotency_key="k1")),
        ("tool_exec host", lambda: cat.tool_exec("grp.host.only", {})),
        (
            "tool_batch",
            lambda: cat.tool_batch([{"op": tool, "args": {"expression": "1"}}, {"op": skill, "args": {}}], "parallel"),
        ),
        ("tool_list", cat.tool_list),
        ("tool_list ns", lambda: cat.tool_list("grp", ["g"])),
        ("tool_describe skill", lambda: cat.tool_describe(skill)),
        ("find_tool", lambda: cat.find_tool("echo some text")),
        ("read_skill_resource", lambda: cat.read_skill_resource(skill, "references/guide.md")),
        ("skill level 2", lambda: cat.tool_exec(skill, {})),
        ("prompt_section", lambda: cat.prompt_section("evaluate arithmetic", 500)),
    ]


def server_calls(server: CatalogServer) -> list[tuple[str, Callable[[], Any]]]:
    """The MCP server's own reads of the build (prompt, skill resources), which must not raise either."""

    def read_skill() -> Any:
        try:
            return server.read_resource("toolcat://skills/demo-skill")
        except Exception as exc:  # an MCPError (a protocol error to the client) is an answer
            if type(exc).__name__ != "MCPError":
                raise
            return None

    return [
        ("mcp system_prompt", server.system_prompt),
        ("mcp skill_resources", server.skill_resources),
        ("mcp read_resource", read_skill),
    ]


@pytest.fixture(scope="module")
def fuzz_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small catalogue whose artifacts get tampered with, compiled once."""
    root = tmp_path_factory.mktemp("fuzzbuild")
    build(write_tree(root / "src", FUZZ_TREE), root / "build")
    return root / "build"


def test_reader_answers_tampered_artifacts_with_envelopes(
    fuzz_build: Path, tmp_path: Path, tally: Tally, caplog: pytest.LogCaptureFixture
) -> None:
    """Wrong-shaped artifacts under valid hashes: open raises only ReaderError; every operation returns an envelope.

    An INTERNAL envelope is allowed here (the artifacts are tampered), but each must leave its traceback in the
    host's log: the log is captured, and counted against the envelopes.
    """
    tamperer = ArtifactTamperer(fuzz_build, tmp_path / "build")
    caplog.set_level(logging.ERROR, logger="toolcat")

    @fuzz_settings(200)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        tamperer.reset()
        rel, doc, depth, describe = data.draw(artifact_mutations(tamperer))
        tamperer.tamper(rel, _render(doc, depth))
        with guarded(tally, lambda: describe):
            try:
                cat = Catalog.open(tamperer.work)
            except ReaderError as exc:
                tally.outcomes[f"open:{exc.code}"] += 1
                return
            for name, call in [*reader_calls(cat), *server_calls(CatalogServer(cat, poll_seconds=0))]:
                try:
                    answer = call()
                except BaseException as exc:
                    exc.add_note(f"operation: {name}")
                    raise
                if not name.startswith("mcp "):
                    check_envelope(tally, answer, internal_is_crash=False)
            with contextlib.suppress(ReaderError):  # refresh() may raise ReaderError, as open does
                cat.refresh()

    run()
    assert tally.crashes == 0 or COLLECT
    logged = [r for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert len(logged) >= sum(tally.internal.values()), (len(logged), tally.internal)


# == c. every gateway operation with arbitrary arguments ===========================================

PYTHON_READ_TOOLS = [
    "util.math.eval",
    "util.json.query",
    "util.text.summarize",
    "util.text.word_count",
    "util.text.diff",
    "util.time.now",
    "util.time.convert",
    "file.read",
    "file.search",
    "file.dir",
    "file.stat",
    "onto.task.list",
    "onto.task.search",
    "task.code_review",
]
OTHER_TOOLS = ["util.web.search", "cal.event.create", "file.write", "storage.get_object", "refactor.rename_symbol"]
METHODS = {tool.method: tool for dialect in ("spec", "gateway", "namespaced") for tool in dialect_tools(dialect)}


@st.composite
def tool_args(draw: st.DrawFn, cat: Catalog, tool_id: str) -> Any:
    """Arguments for a real tool: its schema's property names with arbitrary values, or any JSON at all."""
    if draw(st.integers(0, 4)) == 0:
        return draw(ARGUMENT_VALUES)
    spec = cat.expand_tool(tool_id)
    names = sorted((spec.get("args_schema") or {}).get("properties") or {}) or ["x"]
    keys = draw(st.lists(st.sampled_from(names) | st.text(max_size=8), max_size=4, unique=True))
    return {key: draw(ARGUMENT_VALUES) for key in keys}


@st.composite
def gateway_calls(draw: st.DrawFn, cat: Catalog) -> tuple[str, dict[str, Any]]:
    """(method, keyword arguments): any dialect operation with arbitrary JSON for any subset of its parameters."""
    method = draw(st.sampled_from(sorted(METHODS)))
    schema = METHODS[method].input_schema
    params = sorted(schema.get("properties") or {})
    chosen = {*schema.get("required", []), *draw(st.lists(st.sampled_from(params), unique=True))}
    kwargs = {name: draw(ARGUMENT_VALUES) for name in sorted(chosen)}
    if method in {"tool_exec", "call_tool", "expand_tool", "tool_describe"} and draw(st.booleans()):
        tool_id = draw(st.sampled_from(PYTHON_READ_TOOLS + OTHER_TOOLS))
        key = {"tool_exec": "op", "call_tool": "tool_id", "expand_tool": "tool_id", "tool_describe": "name"}[method]
        kwargs[key] = tool_id
        if method in {"tool_exec", "call_tool"}:
            kwargs["args"] = draw(tool_args(cat, tool_id))
    if method == "tool_batch" and draw(st.booleans()):
        items = []
        for _ in range(draw(st.integers(0, 4))):
            tool_id = draw(st.sampled_from(PYTHON_READ_TOOLS + OTHER_TOOLS))
            item: dict[str, Any] = {"op": tool_id, "args": draw(tool_args(cat, tool_id))}
            if draw(st.booleans()):
                item["dry_run"] = draw(st.booleans())
            items.append(item if draw(st.integers(0, 5)) else draw(ARGUMENT_VALUES))
        kwargs["ops"] = items
    return method, kwargs


TYPED_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "string": st.text(max_size=40) | NASTY_STRINGS,
    "integer": st.integers(-(2**70), 2**70),
    "number": st.floats(allow_nan=False, allow_infinity=False),
    "boolean": st.booleans(),
    "array": st.lists(JSON_VALUES | DEEP, max_size=4),
    "object": st.dictionaries(st.text(max_size=8), JSON_VALUES | DEEP, max_size=4),
}


@st.composite
def schema_arguments(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """An arguments object for a discovery tool: mostly well-typed per its input schema, sometimes anything at all."""
    properties = schema.get("properties") or {}
    names = sorted({*schema.get("required", []), *draw(st.lists(st.sampled_from(sorted(properties)), unique=True))})
    out: dict[str, Any] = {}
    for name in names:
        kind = properties[name].get("type")
        kinds = [kind] if isinstance(kind, str) else [k for k in kind or [] if k in TYPED_VALUES]
        typed = st.sampled_from(kinds).flatmap(TYPED_VALUES.__getitem__) if kinds else JSON_VALUES
        out[name] = draw(typed if draw(st.integers(0, 4)) else ARGUMENT_VALUES)
    if draw(st.integers(0, 5)) == 0:
        out[draw(st.text(max_size=8))] = draw(JSON_VALUES)
    return out


@contextlib.contextmanager
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Refuse every connection that is not to 127.0.0.1 (the example's http tools name acme.example)."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if host not in {"127.0.0.1", "::1", "localhost"} and self.family in {socket.AF_INET, socket.AF_INET6}:
            raise OSError(f"fuzzing: no network beyond 127.0.0.1 ({host})")
        real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in {"127.0.0.1", "::1", "localhost", None}:
            raise socket.gaierror(f"fuzzing: no DNS for {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TOOLCAT_SANDBOX pointing at a small temporary workspace for the file.* handlers."""
    root = tmp_path / "sandbox"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("# Title\n\n# ------------------------------------------------\nhello\n")
    (root / "docs" / "a.txt").write_text("alpha\nbeta\n" * 20)
    (root / "data.json").write_text('{"items": [{"price": 1}, {"price": 2}]}')
    monkeypatch.setenv("TOOLCAT_SANDBOX", str(root))
    return root


def test_every_gateway_operation_answers_arbitrary_arguments(
    example_build: Path, sandbox: Path, tally: Tally, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All 11 operations of the three dialects, with arbitrary JSON arguments, return envelopes and never INTERNAL."""
    cat = Catalog.open(example_build, read_only=True, audit=tmp_path / "audit.jsonl")

    @fuzz_settings(400)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        method, drawn = data.draw(gateway_calls(cat))
        with guarded(tally, lambda: f"{method}(**{short_repr(drawn)})"):
            answer = getattr(cat, method)(**materialize(drawn))
            check_envelope(tally, answer, internal_is_crash=True)

    with loopback_only(monkeypatch):
        run()
    assert tally.crashes == 0 or COLLECT


def test_mcp_tool_calls_with_arbitrary_arguments_answer_envelopes(
    example_build: Path, sandbox: Path, tally: Tally, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the MCP server's call path (input schema check, then the reader), any arguments object gets an envelope."""
    cat = Catalog.open(example_build, read_only=True)
    servers = {dialect: CatalogServer(cat, dialect, poll_seconds=0) for dialect in ("spec", "gateway", "namespaced")}
    tools = [(dialect, tool) for dialect in servers for tool in servers[dialect].tools]

    @fuzz_settings(200)
    @given(st.sampled_from(tools), st.data())
    def run(choice: tuple[str, Any], data: st.DataObject) -> None:
        dialect, tool = choice
        arguments = data.draw(schema_arguments(tool.input_schema))
        with guarded(tally, lambda: f"{dialect}.{tool.name}({short_repr(arguments)})"):
            answer = anyio.run(servers[dialect].call, tool, materialize(arguments))
            check_envelope(tally, answer, internal_is_crash=True)

    with loopback_only(monkeypatch):
        run()
    assert tally.crashes == 0 or COLLECT


# == d. MCP stdio: any line gets an answer the transport can write ==================================

JSONRPC_LINES = (
    st.fixed_dictionaries(
        {},
        optional={
            "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | JSON_VALUES,
            "id": st.integers() | st.text(max_size=8) | JSON_VALUES,
            "method": st.sampled_from(["ping", "tools/list", "tools/call", "initialize", "notifications/x"])
            | JSON_VALUES,
            "params": JSON_VALUES | st.dictionaries(st.text(max_size=8), JSON_VALUES | DEEP, max_size=3),
            "result": JSON_VALUES,
            "error": JSON_VALUES,
        },
    )
    .map(lambda message: json.dumps(message, default=lambda deep: DEEP_MARK + str(deep.depth)))
    .map(lambda text: _expand_deep_marks(text).encode())
)


def _expand_deep_marks(text: str) -> str:
    """JSON text with each ``"<DEEP_MARK>n"`` string replaced by n nested empty lists."""
    marker = json.dumps(DEEP_MARK)[:-1]
    while (start := text.find(marker)) >= 0:
        end = text.index('"', start + len(marker))
        depth = int(text[start + len(marker) : end])
        text = text[:start] + "[" * depth + "]" * depth + text[end + 1 :]
    return text


def test_stdio_line_check_answers_any_bytes(tally: Tally) -> None:
    """Any line (bytes, JSON, JSON-RPC-shaped) becomes a message for the SDK, a JSON-RPC error line, or a drop."""

    @fuzz_settings(500)
    @given(st.binary(max_size=200) | JSONRPC_LINES | st.builds(Oversize, st.binary(max_size=100), st.integers(0)))
    def run(line: bytes | Oversize) -> None:
        with guarded(tally, lambda: short_repr(line)):
            outcome = check_line(line)
            if isinstance(outcome, Reply):
                reply = json.loads(outcome.to_json())
                assert reply["jsonrpc"] == "2.0"
                assert reply["error"]["code"] in {-32700, -32600, -32602}
                assert reply["id"] is None or type(reply["id"]) in {str, int}
                tally.outcomes[str(outcome.code)] += 1
            else:
                assert isinstance(outcome, Drop) or type(outcome).__name__ == "SessionMessage"
                tally.outcomes[type(outcome).__name__] += 1

    run()
    assert tally.crashes == 0 or COLLECT


# == e. the importers and the http request builder (hostile specs, dumps, handlers and arguments) ==========

BASE_SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Fuzz API", "version": "1.0"},
    "servers": [{"url": "https://api.example.com/v1"}],
    "tags": [{"name": "items", "description": "Items."}],
    "components": {
        "schemas": {"Item": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}},
        "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
    },
    "security": [{"token": []}],
    "paths": {
        "/items/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {
                "operationId": "getItem",
                "tags": ["items"],
                "parameters": [{"name": "X-Trace", "in": "header", "schema": {"type": "string"}}],
                "responses": {"200": {"description": "The item."}, "404": {"description": "Missing."}},
            },
            "put": {
                "operationId": "putItem",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Item"}}}},
                "responses": {"204": {"description": "Saved."}},
            },
        }
    },
}
SPEC_VALUES = (
    JSON_VALUES
    | SCHEMAS
    | st.sampled_from(
        [
            {"$ref": "../../etc/passwd"},
            {"$ref": "file:///dev/zero"},
            {"$ref": "file:///etc/passwd"},
            {"$ref": "http://127.0.0.1:9/x.json"},
            {"$ref": "#/components/schemas/Item"},
            {"$ref": "#/nowhere"},
            {"$ref": 5},
            {"$schema": 5, "type": "object"},
            {"$id": [1], "type": "object"},
            {"name": "Content-Length", "in": "header"},
            {"name": "id", "in": "path"},
            "t" * 20_000,
        ]
    )
    | DEEP
)


def _replaced(draw: st.DrawFn, document: Any, times: int) -> tuple[Any, int]:
    """``document`` with ``times`` values replaced at random places; a deep value as the marker, and its depth."""
    depth = 0
    for _ in range(times):
        paths = _paths(document)
        target = draw(st.sampled_from(paths)) if paths else ()
        value = copy.deepcopy(draw(SPEC_VALUES))  # sampled constants are shared between examples
        if isinstance(value, Deep):  # rendered as text: json and yaml would recurse building it
            value, depth = DEEP_MARK, max(depth, value.depth)
        document = _set(target, value)(document) if target else value
    return document, depth


@st.composite
def openapi_specs(draw: st.DrawFn) -> tuple[bytes, str]:
    """The base spec with values replaced at random places, written as JSON or YAML (sometimes mutated as text)."""
    spec, depth = _replaced(draw, json.loads(json.dumps(BASE_SPEC)), draw(st.integers(1, 4)))
    as_json = depth > 0 or draw(st.booleans())
    text = _render(spec, depth) if as_json else dump(spec, as_json=False)
    if draw(st.integers(0, 9)) == 0:
        text = draw(mutated_text(text.decode("utf-8", errors="replace")))
    return text, "json" if as_json else "yaml"


def test_openapi_importer_answers_every_spec_with_sources_or_an_importer_error(tmp_path: Path, tally: Tally) -> None:
    """Hostile OpenAPI documents (wrong types, $refs to devices, files and hosts, deep or huge values) import or fail with ImporterError."""
    from toolcat.importers.common import ImporterError  # noqa: PLC0415
    from toolcat.importers.openapi.operations import import_openapi  # noqa: PLC0415

    counter = iter(range(10**9))

    @fuzz_settings(60)
    @given(openapi_specs())
    def run(case: tuple[bytes, str]) -> None:
        text, suffix = case
        work = tmp_path / f"case{next(counter)}"
        (work / "spec").mkdir(parents=True)
        (work / "spec" / f"api.{suffix}").write_bytes(text)
        with guarded(tally, lambda: text[:600].decode("utf-8", errors="replace")):
            try:
                result = import_openapi(str(work / "spec" / f"api.{suffix}"), namespace="fz", out=work / "out")
            except ImporterError as exc:
                assert str(exc).strip()  # noqa: PT017 - each of many inputs may fail; a message is the property
                tally.outcomes["ImporterError"] += 1
                return
            assert result.count == len(result.tool_ids)
            assert "root:x:0:0" not in "".join(p.read_text() for p in (work / "out").rglob("*.yaml"))
            tally.outcomes["imported"] += 1

    run()
    assert tally.crashes == 0 or COLLECT


MCP_TOOL = {
    "name": "get_thing",
    "description": "Get it.",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True},
}


@st.composite
def function_dumps(draw: st.DrawFn) -> tuple[bytes, str]:
    """A tools/list dump or provider definitions file, with values replaced at random places."""
    fmt = draw(st.sampled_from(["mcp", "openai", "anthropic", "gemini"]))
    data: Any = json.loads(json.dumps({"tools": [MCP_TOOL, {"name": "put_thing", "parameters": {"type": "object"}}]}))
    data, depth = _replaced(draw, data, draw(st.integers(0, 3)))
    return _render(data, depth), fmt


def test_function_and_mcp_importers_answer_every_dump(tmp_path: Path, tally: Tally) -> None:
    """Hostile tools/list dumps and provider definitions import or fail with ImporterError, through both importers."""
    from toolcat.importers.common import ImporterError  # noqa: PLC0415
    from toolcat.importers.functions import import_functions  # noqa: PLC0415
    from toolcat.importers.mcp import import_mcp  # noqa: PLC0415

    counter = iter(range(10**9))

    @fuzz_settings(60)
    @given(function_dumps())
    def run(case: tuple[bytes, str]) -> None:
        text, fmt = case
        work = tmp_path / f"case{next(counter)}"
        work.mkdir()
        (work / "dump.json").write_bytes(text)
        with guarded(tally, lambda: f"{fmt}: {text[:600]!r}"):
            for name, call in (
                ("functions", lambda: import_functions(work / "dump.json", fmt=fmt, namespace="fz", out=work / "f")),
                ("mcp", lambda: import_mcp(file=work / "dump.json", namespace="fz", out=work / "m")),
            ):
                try:
                    call()
                    tally.outcomes[f"{name}:imported"] += 1
                except ImporterError as exc:
                    assert str(exc).strip()  # noqa: PT017 - as above
                    tally.outcomes[f"{name}:ImporterError"] += 1

    run()
    assert tally.crashes == 0 or COLLECT


HEADER_NAMES = st.sampled_from(
    ["X-Trace", "Content-Length", "Host", "Transfer-Encoding", "X Bad", "", "Cookie", "a\r\nb"]
)
PARAM_SPECS = st.fixed_dictionaries(
    {"in": st.sampled_from(["path", "query", "header", "cookie", "body", 5])},
    optional={
        "name": HEADER_NAMES | st.text(max_size=8),
        "style": st.sampled_from(["form", "simple", "label", "matrix", "deepObject", "spaceDelimited", "x"]),
        "explode": st.booleans(),
        "allowReserved": st.booleans(),
    },
)


@st.composite
def http_calls(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """An http handler with random params, headers, body and auth, and random arguments for it."""
    names = draw(st.lists(st.sampled_from(["id", "q", "h", "c", "b"]), max_size=4, unique=True))
    params = {n: draw(PARAM_SPECS) for n in names}
    path_args = [n for n, spec in params.items() if spec["in"] == "path"]
    handler: dict[str, Any] = {
        "type": "http",
        "method": draw(st.sampled_from(["GET", "POST", "DELETE"])),
        "url": "https://api.example.com/v1/items" + "".join(f"/{{{n}}}" for n in path_args),
        "params": params,
    }
    if draw(st.booleans()):
        handler["headers"] = draw(st.dictionaries(HEADER_NAMES, st.text(max_size=8) | NASTY_STRINGS, max_size=2))
    if draw(st.booleans()):
        handler["body"] = {"encoding": draw(st.sampled_from(["json", "form", "multipart", "raw:text/plain", "x"]))}
    if draw(st.booleans()):
        handler["auth"] = {
            "type": draw(st.sampled_from(["bearer", "basic", "apiKey", "x"])),
            "env": draw(st.sampled_from(["FUZZ_TOKEN", "FUZZ_CRLF", "", "MISSING"])),
            "in": draw(st.sampled_from(["header", "query", "cookie"])),
            "name": draw(HEADER_NAMES),
        }
    args = {n: materialize(draw(ARGUMENT_VALUES)) for n in names + draw(st.lists(st.text(max_size=4), max_size=2))}
    return handler, args


def test_http_request_builder_answers_every_call_with_a_safe_request_or_an_envelope(tally: Tally) -> None:
    """Random handlers and arguments give a request with no framing header, control character or dot segment, or a ReaderError."""
    from toolcat.format.http_headers import has_control, header_name_problem  # noqa: PLC0415
    from toolcat.reader.execution.http_handler import build_request  # noqa: PLC0415

    environ = {"FUZZ_TOKEN": "tok", "FUZZ_CRLF": "a\r\nb"}

    @fuzz_settings(300)
    @given(http_calls())
    def run(case: tuple[dict[str, Any], dict[str, Any]]) -> None:
        handler, args = case
        with guarded(tally, lambda: short_repr(case)):
            try:
                method, url, body, headers = build_request("fz.call", handler, args, environ=environ)
            except ReaderError as exc:
                assert exc.code in {"VALIDATION_ERROR", "NOT_EXECUTABLE", "NOT_AUTHORIZED"}, exc.code  # noqa: PT017
                tally.outcomes[exc.code] += 1
                return
            assert all(header_name_problem(k) is None and not has_control(v) for k, v in headers.items()), headers
            path = url.split("?", 1)[0].removeprefix("https://api.example.com")
            assert not [seg for seg in path.split("/")[1:] if seg in {"", ".", ".."}], url
            assert body is None or isinstance(body, bytes)
            tally.outcomes[f"ok:{method}"] += 1

    run()
    assert tally.crashes == 0 or COLLECT


# == crashes the fuzzer found (K1-K5), fixed: each pins the minimal input it found ==================


def _tampered(
    fuzz_build: Path, work: Path, rel_of: Callable[[ArtifactTamperer], str], edit: Callable[[Any], Any], depth: int = 10
) -> Path:
    """A copy of the fuzz build with one artifact edited (and the refs above it re-hashed)."""
    tamperer = ArtifactTamperer(fuzz_build, work)
    rel = rel_of(tamperer)
    tamperer.tamper(rel, _render(edit(json.loads(tamperer.files[rel])), depth))
    return work


def _artifact(kind: str, **match: Any) -> Callable[[ArtifactTamperer], str]:
    def find(tamperer: ArtifactTamperer) -> str:
        for rel in tamperer.json_files:
            doc = json.loads(tamperer.files[rel])
            if isinstance(doc, dict) and doc.get("artifact") == kind and all(doc.get(k) == v for k, v in match.items()):
                return rel
        raise AssertionError(f"no {kind} artifact in the fuzz build")

    return find


def _set(path: tuple[Any, ...], value: Any) -> Callable[[Any], Any]:
    def edit(doc: Any) -> Any:
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
        return doc

    return edit


def test_known_k1_deep_artifact_json_is_refused_with_reader_error(fuzz_build: Path, tmp_path: Path) -> None:
    """A manifest whose stats ref is 5,000 nested lists (hashes valid): Catalog.open raises ReaderError, not RecursionError."""
    work = _tampered(fuzz_build, tmp_path / "b", _artifact("manifest"), _set(("stats",), DEEP_MARK), depth=5000)
    with pytest.raises(ReaderError):
        Catalog.open(work)


def test_known_k1_deep_catalog_json_is_refused_with_reader_error(fuzz_build: Path, tmp_path: Path) -> None:
    """catalog.json holding 5,000 nested lists: Catalog.open raises ReaderError, not RecursionError."""
    work = _tampered(fuzz_build, tmp_path / "b", lambda _t: "catalog.json", _set(("versions",), DEEP_MARK), depth=5000)
    with pytest.raises(ReaderError):
        Catalog.open(work)


def test_known_k2_node_cycle_does_not_hang(fuzz_build: Path, tmp_path: Path) -> None:
    """The root shard's first child claims path [] (the root): tool_list() answers within 5 s."""
    work = _tampered(fuzz_build, tmp_path / "b", _artifact("node", path=[]), _set(("children", 0, "path"), []))
    code = f"from toolcat.reader import Catalog; print(Catalog.open({str(work)!r}).tool_list()['ok'])"
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=5, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail("tool_list() on a catalogue whose node tree has a cycle ran past 5 s")
    assert done.returncode == 0, done.stderr[-500:]


def test_known_k3_prompt_index_of_wrong_shape_falls_back(fuzz_build: Path, tmp_path: Path) -> None:
    """A prompts index replaced by the number 38 (hashes valid): the server's system prompt falls back, no exception."""
    work = _tampered(fuzz_build, tmp_path / "b", _artifact("prompts"), lambda _doc: 38)
    server = CatalogServer(Catalog.open(work), poll_seconds=0)
    assert "tool_help" in server.system_prompt()


def test_known_k4_skill_resource_of_wrong_shape_is_skipped(fuzz_build: Path, tmp_path: Path) -> None:
    """A skill spec whose resource media_type is a list (hashes valid): resources/list answers without raising."""
    work = _tampered(
        fuzz_build,
        tmp_path / "b",
        _artifact("tool", tool_id="task.demo_skill"),
        _set(("skill", "resources", 0, "media_type"), [[1]]),
    )
    server = CatalogServer(Catalog.open(work), poll_seconds=0)
    assert isinstance(server.skill_resources(), list)


def test_known_k5_deep_arguments_through_the_server_call_answer_an_envelope(example_build: Path) -> None:
    """CatalogServer.call with a tool_id nested 3,000 lists deep answers a VALIDATION_ERROR envelope."""
    server = CatalogServer(Catalog.open(example_build, read_only=True), "spec", poll_seconds=0)
    tool = server.by_name["expand_tool"]
    answer = anyio.run(server.call, tool, {"tool_id": nested(3000)})
    assert answer["ok"] is False
    assert answer["error"]["code"] == "VALIDATION_ERROR"
