"""The TypeScript reader (js/) against the Python reader: the same builds over HTTP, the same answers.

Both readers open the same fixture builds served on 127.0.0.1 (the example catalogue, a generated
1,000-tool catalogue, and hostile hosts) and answer the same calls; answers must be equal, relevance and
confidence within 1e-6. The one intended difference is execution: the TypeScript reader runs no handler
(the host does), so ``executable``, the call ``next_action`` and the execution hints of a described tool are
left out of the comparison (docs/format.md, "Readers in other languages").
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import random
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import EXAMPLE_SRC, REPO, write_tree

from toolcat import Catalog
from toolcat.build import build
from toolcat.reader import ReaderError

JS = REPO / "js"
RUNNER = JS / "scripts" / "parity-runner.mjs"
NODE = shutil.which("node")
TOLERANCE = 1e-6
#: Hints about running a tool: the Python reader's depend on its handlers, the TypeScript reader runs none.
EXECUTION_HINTS = (
    "This host does not allow this tool's handler",
    "This tool has no handler this reader can run",
    "This reader cannot run this operation here",
    "Not runnable by this reader:",
    "Not runnable on this host:",
)

pytestmark = pytest.mark.slow


def _require_node() -> None:
    if NODE is None:
        pytest.skip("node is not installed: `make js` installs Debian's nodejs and builds js/ (needs root and apt)")
    if not (JS / "dist" / "index.js").is_file():
        pytest.skip("js/dist is not built: run `make js` (npm ci && npm run build in js/)")


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        """Keep the test output clean."""


@functools.cache
def _served(folder: str) -> str:
    """``folder`` served on 127.0.0.1 for the rest of the session; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=folder))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def run_js(url: str, calls: list[list[Any]], **options: Any) -> dict[str, Any]:
    """The TypeScript reader's answers to ``calls`` (``[method, *args]``) on the catalogue at ``url``."""
    payload = json.dumps({"url": url, "options": options, "calls": calls})
    done = subprocess.run([NODE, str(RUNNER)], input=payload, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


# -- one call, in both readers' spellings --------------------------------------------------------
def call(name: str, *args: Any, **kwargs: Any) -> tuple[Callable[[Catalog], Any], list[Any]]:
    """A Python call (method name and arguments) and the same call for the TypeScript runner."""
    camel = {
        "find_tool": "findTool",
        "search_nodes": "searchNodes",
        "search_tool_by_category": "searchToolByCategory",
        "expand_tool": "expandTool",
        "tool_describe": "toolDescribe",
        "always_loaded": "alwaysLoaded",
        "prompt": "prompt",
        "list": "list",
        "tool_list": "toolList",
        "tool_help": "toolHelp",
    }[name]
    if name in ("list", "tool_list", "tool_help"):  # keyword arguments: one options object
        keys = {"include_examples": "includeExamples", "include_schemas": "includeSchemas"}
        js = [camel, {keys.get(k, k): v for k, v in kwargs.items()}]
    else:
        js = [camel, *args]
    return (lambda catalog: getattr(catalog, name)(*args, **kwargs)), js


def _execution_free(answer: Any) -> Any:
    """A described tool's answer without what depends on who runs tools."""
    if (
        isinstance(answer, dict)
        and answer.get("ok") is True
        and ("executable" in answer or answer.get("level") == "operation")
    ):
        answer = dict(answer)
        answer.pop("executable", None)
        if isinstance(answer.get("next_action"), dict) and answer["next_action"].get("op") in (
            "call_tool",
            "tool_exec",
        ):
            answer["next_action"] = None
        answer.pop("next_action", None)
        answer["hints"] = [h for h in answer.get("hints", []) if not h.startswith(EXECUTION_HINTS)]
        if not answer["hints"]:
            answer.pop("hints")
    return answer


def assert_same(py: Any, js: Any, where: str = "$") -> None:
    """Equal JSON, numbers within TOLERANCE."""
    if isinstance(py, float) or isinstance(js, float):
        assert isinstance(js, (int, float)), f"{where}: {py!r} vs {js!r}"
        assert math.isclose(py, js, abs_tol=TOLERANCE), f"{where}: {py!r} vs {js!r}"
    elif isinstance(py, dict):
        assert isinstance(js, dict), f"{where}: {py!r} vs {js!r}"
        assert sorted(py) == sorted(js), f"{where}: keys {sorted(py)} vs {sorted(js)}"
        for key in py:
            assert_same(py[key], js[key], f"{where}.{key}")
    elif isinstance(py, (list, tuple)):
        assert isinstance(js, list), f"{where}: {py!r} vs {js!r}"
        assert len(py) == len(js), f"{where}: {len(py)} items vs {len(js)}:\n{py!r}\n{js!r}"
        for i, (a, b) in enumerate(zip(py, js, strict=True)):
            assert_same(a, b, f"{where}[{i}]")
    else:
        assert py == js, f"{where}: {py!r} vs {js!r}"


def compare(url: str, calls: list[tuple[Callable[[Catalog], Any], list[Any]]], tmp: Path, **py_options: Any) -> int:
    """Both readers answer ``calls`` on ``url``; every answer must agree. Returns how many were compared."""
    catalog = Catalog.open(url, cache_dir=tmp / "cache", **py_options)
    expected = [_execution_free(json.loads(json.dumps(fn(catalog)))) for fn, _ in calls]
    got = run_js(url, [js for _, js in calls])
    assert "open" not in got, got.get("open")
    for i, (py, js) in enumerate(zip(expected, got["answers"], strict=True)):
        assert_same(py, _execution_free(js), f"call {i} {calls[i][1]}")
    return len(expected)


# == fixtures ===================================================================================
@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The example catalogue, built and served."""
    _require_node()
    out = tmp_path_factory.mktemp("js_example") / "build"
    build(EXAMPLE_SRC, out)
    return _served(str(out)), out


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """A generated 1,000-tool catalogue (bench/gen_catalog.py), built and served."""
    _require_node()
    sys.path.insert(0, str(REPO / "bench"))
    from gen_catalog import generate  # noqa: PLC0415 - the benchmarks' generator

    root = tmp_path_factory.mktemp("js_generated")
    build(generate(root / "src", 1000), root / "build")
    return _served(str(root / "build")), root / "build"


def _spec_ids(build_dir: Path) -> list[str]:
    return sorted(p.name.rsplit(".", 2)[0] for p in (build_dir / "tools").glob("*.json"))


def _eval_queries() -> list[str]:
    data = yaml.safe_load((EXAMPLE_SRC / "evals" / "search.yaml").read_text(encoding="utf-8"))
    return [q["query"] for q in data["queries"]]


# == the example catalogue =======================================================================
def test_search_answers_agree_on_the_example(example, tmp_path):
    """find_tool, search_nodes and search_tool_by_category: the eval queries, names, typos and nonsense."""
    url, _ = example
    queries = [
        *_eval_queries(),
        "file.read",
        "FILE_READ",
        "file read",
        "code-reviewer",
        "convert to pdf",
        "reed a fiel",
        "xyzzy plugh",
        "s3 bucket ec2",
        "getHTTPResponse2 déjà vu",
        "open a PR on the repo",
    ]
    calls = []
    for q in queries:
        calls += [call("find_tool", q, 5), call("search_nodes", q, 5)]
        calls += [call("search_tool_by_category", q, "", 5), call("search_tool_by_category", q, "files", 3)]
    calls += [
        call("find_tool", "read a file", 1),
        call("find_tool", "   ", 5),
        call("find_tool", "read", 0),
        call("find_tool", "read", 500),
        call("search_nodes", 42, 5),
        call("search_tool_by_category", "read", "nowhere/at_all", 5),
        call("search_tool_by_category", "read", "Files", 5),
        call("search_tool_by_category", "read", ["coding", "refactoring"], 5),
        call("search_tool_by_category", "read", "files", 2, "o:2:deadbeef"),
        call("search_tool_by_category", "read", "files", 2, "nonsense"),
    ]
    # Blank and non-string queries: one BAD_REQUEST message for every search (checks.check_query).
    for blank in ("", "   ", "\n\t", None, 7, ["read"]):
        calls += [call("find_tool", blank, 5), call("search_nodes", blank, 5)]
        calls += [call("search_tool_by_category", blank, "files", 5), call("tool_help", query=blank)]
    # Long queries are cut at a word boundary and ranked on the cut text; the answer's first hint says so.
    for long in (_LONG_QUERY, _TASK_DESCRIPTION, "x" * 5000, " read a file " + "é" * 3000, "🙂 " * 700 + "pdf " * 200):
        calls += [call("find_tool", long, 5), call("search_nodes", long, 5)]
        calls += [call("search_tool_by_category", long, "", 5), call("search_tool_by_category", long, "files", 3)]
        calls += [call("tool_help", query=long, limit=3)]
    # Agent-written queries: a server/category label narrows find_tool; tool/task labels are dropped.
    for labelled in (
        "server: files / tool: read a file",
        "category=coding; action: rename a symbol",
        "namespace: nowhere | tool: read",
        "Task: convert the report to pdf",
        "app: files",
        # one line, as agents also write them: the hint ends at the next label; an overlong one at a word
        "server: files, tool: read a file",
        "server: file operations or document creation tool: read a text file from the local disk",
        "service: " + "storage bucket object " * 6 + "tool: upload a report",
    ):
        calls += [call("find_tool", labelled, 5), call("tool_help", query=labelled)]
    assert compare(url, calls, tmp_path) > 200


#: 5,000 characters: the words that count come after the first 1,200, which are about reading files.
_LONG_QUERY = (("read the contents of a local file " * 40)[:1300] + " convert the document to pdf" * 140)[:5000]
#: An agent pasting its whole task (18 KB): labelled lines, paths, code, and the purpose buried in the middle.
_TASK_DESCRIPTION = "\n".join(
    [
        "Task: we are migrating the billing service; please help with the following.",
        "Context: the repository has a src/ folder and a docs/ folder; CI runs on every push.",
        *[
            f"Step {i}: open src/module_{i}.py, rename the function handle_{i} to process_{i} across the codebase, "
            f"then update the tests in tests/test_module_{i}.py and write a short note (see ticket BILL-{1000 + i})."
            for i in range(94)
        ],
        "Finally: upload the generated report to the shared bucket and open a pull request.",
    ]
)


#: Characters where Python's and JavaScript's string handling part ways: case mappings that change length or differ
#: (ß, İ, ﬁ, final sigma, Turkish dotless i), combining marks, zero-width and bidirectional controls, line and
#: paragraph separators, other whitespace, quotes and backslashes (a hint quotes the query), surrogate pairs.
_ODD = [
    "ß",
    "ẞ",
    "İ",
    "\u0131",
    "ﬁ",
    "ﬀ",
    "Σ",
    "ς",
    "ǅ",
    "Å",
    "e\u0301",
    "\u0307",
    "\u200b",
    "\u200d",
    "\u2060",
    "\ufeff",
    "\u202e",
    "\u2066",
    "\u2028",
    "\u2029",
    "\u0085",
    "\u00a0",
    "\u3000",
    "\u1680",
    "\t",
    "\n",
    "\r\n",
    "\x0b",
    "\x1c",
    "\x00",
    "\x7f",
    "'",
    '"',
    "\\",
    "`",
    "😀",
    "👩‍💻",
    "🇫🇷",
    "\U0001d518\U0001d52b\U0001d526",
    "東京",
    "ファイル",
    "файл",
    "ملف",
    "١٢٣",
    "²",
    "½",
    "Ⅻ",
    "①",
    "\uff05",
    "\uff26\uff49\uff4c\uff45",
    "ǰ",
    "ŉ",
]


def _odd_queries(count: int) -> list[str]:
    """Seeded queries mixing the example's words with :data:`_ODD`: how pasted and non-English requests arrive."""
    rng = random.Random("odd")  # noqa: S311 - seeded queries, no secret
    words = [
        "read",
        "write",
        "file",
        "pdf",
        "convert",
        "rename",
        "upload",
        "bucket",
        "issue",
        "report",
        "SERVER:",
        "tool:",
    ]
    out = []
    for _ in range(count):
        parts = [rng.choice(_ODD) if rng.random() < 0.4 else rng.choice(words) for _ in range(rng.randint(1, 7))]
        glue = rng.choice(["", " ", " ", "\n", "_", "-", "."])
        out.append(glue.join(parts))
    return out


def test_odd_characters_get_the_same_answers(example, tmp_path):
    """Queries with case mappings, combining marks, controls, separators and quotes: the same answers, hints too."""
    url, _ = example
    queries = _odd_queries(120)
    calls = []
    for q in queries:
        calls += [call("find_tool", q, 5), call("search_nodes", q, 5), call("search_tool_by_category", q, "files", 3)]
        calls += [call("tool_help", query=q, limit=3)]
    rng = random.Random("odd names")  # noqa: S311 - seeded, no secret
    for name in ("file.read", "files", "coding/refactoring", "files.read_file"):  # names and paths, odd ends
        for _ in range(6):
            odd = rng.choice(_ODD) + name + rng.choice(_ODD)
            calls += [call("expand_tool", odd), call("list", path=odd), call("search_tool_by_category", "read", odd, 3)]
            calls += [call("tool_help", path=odd.replace("/", ".")), call("tool_list", namespace=odd.split("/")[0])]
            calls += [call("tool_describe", odd), call("prompt", odd)]
    catalog = Catalog.open(url, cache_dir=tmp_path / "cache")
    expected = [_execution_free(json.loads(json.dumps(fn(catalog)))) for fn, _ in calls]
    got = run_js(url, [js for _, js in calls])["answers"]
    wrong = []
    for (_, js_call), py, js in zip(calls, expected, got, strict=True):
        try:
            assert_same(py, _execution_free(js))
        except AssertionError as err:
            wrong.append(f"{js_call}: {str(err)[:300]}")
    assert not wrong, f"{len(wrong)} of {len(calls)} answers differ:\n" + "\n".join(wrong[:40])
    assert sum(1 for a in expected if a.get("matches")) > 60  # most of them are answered, not refused


def test_category_pages_follow_the_same_cursors(example, tmp_path):
    """A category search paged with the cursor each page returns: the same pages, the same cursors."""
    url, _ = example
    catalog = Catalog.open(url, cache_dir=tmp_path / "cache")
    cursor, pages = None, 0
    while pages < 6:
        page = catalog.search_tool_by_category("file", "", 2, cursor)
        assert_same(page, run_js(url, [["searchToolByCategory", "file", "", 2, cursor]])["answers"][0])
        cursor, pages = page.get("next_cursor"), pages + 1
        if cursor is None:
            break
    assert pages >= 2


def test_browsing_answers_agree_on_the_example(example, tmp_path):
    """list (paths, tags, query, cursors, bad arguments), tool_list and tool_help over the whole tree."""
    url, build_dir = example
    entry = json.loads((build_dir / "catalog.json").read_text())
    manifest = json.loads((build_dir / entry["manifest"]["path"]).read_text())
    calls = [
        call("list"),
        call("list", path="files"),
        call("list", path="Coding/Refactoring"),
        call("list", path=["coding", "refactoring"]),
        call("list", path="coding.refactorin"),
        call("list", path="nowhere"),
        call("list", path="files", limit=2, cursor="o:2"),
        call("list", path="files", cursor="bogus"),
        call("list", limit=0),
        call("list", tags=["read"]),
        call("list", path="files", query="read a file"),
        call("list", path="files", query="read", tags="read"),
        call("list", capability="code-analysis"),
        call("list", path=7),
        call("tool_list"),
        call("tool_list", namespace="file"),
        call("tool_list", namespace="nope"),
        call("tool_list", tags=["write"]),
        call("tool_help"),
        call("tool_help", format="full"),
        call("tool_help", path="bogus.path"),
        call("tool_help", query="rename a symbol"),
        call("tool_help", path="file", query="read"),
        call("tool_help", format="long"),
        call("tool_help", include_examples="yes"),
    ]
    for namespace in manifest["namespaces"]:
        calls += [call("tool_help", path=namespace), call("tool_help", path=namespace, format="full")]
    assert compare(url, calls, tmp_path) > 30


def test_agents_weak_answers_and_ways_forward_agree_on_the_example(example, tmp_path):
    """Agents, UNKNOWN_PATH's way forward, weak answers and argument defaults agree in both readers.

    Agents in lists, UNKNOWN_PATH's parent and next_action, a category search's help_path, find_tool's weak
    answer (the idf-weighted rule both ways), search_nodes' search of tools and tool_help's default field: Python gives
    each, and the TypeScript reader answers the same.
    """
    url, _ = example
    calls = [
        call("list", path="agents"),
        call("list", path="files/no_such_child"),
        call("list", path="zzz_qqq"),
        call("search_tool_by_category", "plan a feature", "agents/nowhere_here", 5),
        call("search_tool_by_category", "read", "files", 2),
        call("find_tool", "zip the reports", 5),
        call("find_tool", "plan a feature as small tasks", 5),
        call("search_nodes", "xyzzy plugh", 5),
        call("tool_help", path="task.plan", format="full"),
        call("expand_tool", "task.plan"),
        # the weak rule weighs words by idf: two made-up words among three common ones are weak (2 of 5 by count),
        # one unknown beside a rare known word is not (1 of 2 by count)
        call("find_tool", "xyzzy plugh file report folder", 5),
        call("find_tool", "scribble the postmortem", 5),
        call("search_tool_by_category", "xyzzy plugh file report folder", "", 5),
        call("search_nodes", "scribble the postmortem", 5),
    ]
    catalog = Catalog.open(url, cache_dir=tmp_path / "py")
    py = [fn(catalog) for fn, _ in calls]
    assert "agent" in {t.get("type") for t in py[0]["tools"]}
    assert py[1]["error"]["details"]["parent"] == "files"
    assert py[1]["error"]["next_action"]["op"] == "search_tool_by_category"
    assert py[3]["error"]["next_action"]["args"] == {"query": "plan a feature", "category_path": "agents"}
    assert py[4]["help_path"] == "files"
    assert py[5]["weak"] is True
    assert py[5]["matches"]
    assert py[7]["next_action"]["op"] == "search_tool_by_category"
    assert any("default" in arg for arg in py[8]["args"])
    assert py[10]["weak"] is True
    assert "weak" not in py[11]
    assert py[11]["matches"][0]["name"] == "task.incident_postmortem"
    assert py[12]["weak"] is True
    assert compare(url, calls, tmp_path) == len(calls)


def test_described_tools_agree_on_the_example(example, tmp_path):
    """expand_tool / tool_describe / tool_help of every tool and skill, by id and alias; unknown names."""
    url, build_dir = example
    ids = _spec_ids(build_dir)
    calls = []
    for tool_id in ids:
        calls += [call("expand_tool", tool_id), call("tool_help", path=tool_id, format="full", include_schemas=True)]
    calls += [
        call("tool_describe", ids[0].replace(".", "_")),
        call("tool_describe", ids[1].upper()),
        call("expand_tool", "file.raed"),
        call("expand_tool", "no.such.tool.anywhere"),
        call("expand_tool", ""),
        call("expand_tool", None),
        call("tool_help", path=ids[2]),
    ]
    assert compare(url, calls, tmp_path) > 2 * len(ids)


def test_prompts_and_always_loaded_tools_agree(example, tmp_path):
    """prompt() lists the sections, prompt(name) returns each one's text; always_loaded is the same lean specs."""
    url, _ = example
    sections = Catalog.open(url, cache_dir=tmp_path / "c").prompt()["sections"]
    calls = [
        call("prompt"),
        call("always_loaded"),
        call("prompt", "tools.shrot"),
        call("prompt", ""),
        call("prompt", 3),
    ]
    calls += [call("prompt", s["name"]) for s in sections]
    assert compare(url, calls, tmp_path) == 5 + len(sections)


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
@pytest.mark.parametrize("dialect", ["spec", "gateway", "namespaced"])
@pytest.mark.parametrize("pinned", [False, True])
def test_dialect_tool_definitions_are_the_cli_exports(example, provider, dialect, pinned):
    """Catalog.dialectTools(dialect, provider, pinned) is what `toolcat export --dialect [--pinned]` writes."""
    url, build_dir = example
    toolcat = Path(sys.executable).parent / "toolcat"
    flag = ["--pinned"] if pinned else []
    done = subprocess.run(
        [str(toolcat), "export", "--provider", provider, "--dialect", dialect, *flag, "--build", str(build_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    call = ["dialectTools", dialect, provider, True] if pinned else ["dialectTools", dialect, provider]
    got = run_js(url, [call])["answers"][0]
    assert _required_sorted(got) == _required_sorted(json.loads(done.stdout))
    assert ('"file_read"' in json.dumps(got)) is pinned, "the example's pinned tool is listed only when asked"


def _required_sorted(value: Any) -> Any:
    """``required`` as a set: the build's artifact keeps the schema's order, the CLI export sorts it."""
    if isinstance(value, dict):
        return {
            k: sorted(v) if k == "required" and isinstance(v, list) else _required_sorted(v) for k, v in value.items()
        }
    return [_required_sorted(v) for v in value] if isinstance(value, list) else value


# == a generated 1,000-tool catalogue ==========================================================
def _generated_queries(build_dir: Path, count: int) -> list[str]:
    """Queries made of words of the catalogue's own summaries, with a stop word and a typo now and then."""
    specs = sorted((build_dir / "tools").glob("*.json"))[::7]
    out = []
    for i, path in enumerate(specs[:count]):
        words = json.loads(path.read_text())["summary"].split()[:5]
        if i % 3 == 0:
            words.insert(1, "the")
        if i % 5 == 0 and words:
            words[-1] = words[-1][::-1]
        out.append(" ".join(words))
    return out


def test_search_answers_agree_on_1000_generated_tools(generated, tmp_path):
    """find_tool, search_nodes and category searches over 1,000 generated tools, relevance within 1e-6."""
    url, build_dir = generated
    ids = _spec_ids(build_dir)
    calls = []
    for q in _generated_queries(build_dir, 60):
        calls += [call("find_tool", q, 10), call("search_nodes", q, 5)]
        calls += [call("search_tool_by_category", q, ids[0].split(".")[0], 5)]
    calls += [call("find_tool", tool_id, 3) for tool_id in ids[::97]]
    calls += [call("expand_tool", tool_id) for tool_id in ids[::113]]
    calls += [call("list"), call("tool_help"), call("tool_list", namespace=ids[0].split(".")[0])]
    assert compare(url, calls, tmp_path) > 190


def test_a_cold_find_tool_fetches_no_more_than_python(generated, tmp_path):
    """Cold, per query: the same round trips, no more requests and no more bytes than the Python reader."""
    url, build_dir = generated
    for i, query in enumerate(_generated_queries(build_dir, 12)):
        catalog = Catalog.open(url, cache_dir=tmp_path / f"cache{i}")
        catalog.find_tool(query, 5)
        py = catalog.stats()
        js = run_js(url, [["findTool", query, 5]])["stats"]
        assert js["round_trips"] == py["round_trips"], (query, py, js)
        assert js["requests"] <= py["requests"], (query, py, js)
        assert js["bytes_decoded"] <= py["bytes_decoded"], (query, py, js)


# == hostile hosts ===============================================================================
class _Hostile(BaseHTTPRequestHandler):
    """Serves a build folder, unless a route for the path says otherwise."""

    server: Any

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        """Answer with the route for the path, or the file."""
        rel = self.path.lstrip("/").split("?", 1)[0]
        route = self.server.routes.get(rel)
        if route is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the reader hung up: it stopped
                route(self)
            return
        file = self.server.root / rel
        if not file.is_file():
            self.send_error(404)
            return
        data = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _raw(data: bytes, *, status: int = 200, headers: dict[str, str] | None = None, length: bool = True) -> Callable:
    def route(handler: BaseHTTPRequestHandler) -> None:
        head = [f"HTTP/1.0 {status} X", *([f"Content-Length: {len(data)}"] if length else [])]
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        handler.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)

    return route


def _drip(data: bytes) -> Callable:
    def route(handler: BaseHTTPRequestHandler) -> None:
        handler.wfile.write(f"HTTP/1.0 200 OK\r\nContent-Length: {len(data)}\r\n\r\n".encode())
        for i in range(min(len(data), 40)):
            handler.wfile.write(data[i : i + 1])
            handler.wfile.flush()
            time.sleep(0.1)

    return route


def _endless(handler: BaseHTTPRequestHandler) -> None:
    handler.wfile.write(b"HTTP/1.0 200 OK\r\n\r\n")
    for _ in range(2048):
        handler.wfile.write(b"a" * 65536)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    """A small catalogue behind a server whose routes misbehave per path (routes reset by each case)."""
    _require_node()
    root = tmp_path_factory.mktemp("js_hostile")
    tools = [
        {"id": f"net.thing.op{i}", "summary": f"Operate on things, variant {i}", "args_schema": {"type": "object"}}
        for i in range(3)
    ]
    src = {"_node.yaml": {"title": "hostile", "summary": "served over http"}, "net/tools.yaml": {"tools": tools}}
    build(write_tree(root / "src", src), root / "build")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.daemon_threads = True
    server.root, server.routes = root / "build", {}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server, root / "build"
    server.shutdown()
    server.server_close()


def _entry_with(build_dir: Path, **manifest_ref: Any) -> bytes:
    entry = json.loads((build_dir / "catalog.json").read_text())
    ref = {**entry["manifest"], **manifest_ref}
    entry["manifest"] = ref
    for item in entry["versions"]:
        item["manifest"] = ref
    return json.dumps(entry).encode()


def _cases(build_dir: Path, base: str) -> dict[str, tuple[dict[str, Callable], dict[str, Any]]]:
    entry = json.loads((build_dir / "catalog.json").read_text())
    manifest_path = entry["manifest"]["path"]
    manifest = (build_dir / manifest_path).read_bytes()
    tampered = manifest.replace(b"hostile", b"HOSTILE")
    other_origin = base.replace("127.0.0.1", "localhost")

    def hops(n: int) -> dict[str, Callable]:
        routes = {"catalog.json": _raw(b"", status=302, headers={"Location": f"{base}r1"}, length=False)}
        for i in range(1, n):
            routes[f"r{i}"] = _raw(b"", status=302, headers={"Location": f"{base}r{i + 1}"}, length=False)
        routes[f"r{n}"] = _raw((build_dir / "catalog.json").read_bytes())
        return routes

    return {
        "a promise above the file cap": ({"catalog.json": _raw(_entry_with(build_dir, bytes=1 << 30))}, {}),
        "a promise above max_file_bytes": ({}, {"max_file_bytes": 100}),
        "a body longer than its promise": ({manifest_path: _raw(manifest + b" " * 5000)}, {}),
        "an endless body": ({manifest_path: _endless}, {}),
        "a tampered manifest": ({manifest_path: _raw(tampered)}, {}),
        "a 206 partial body": ({manifest_path: _raw(manifest[:50], status=206)}, {}),
        "catalog.json above 1 MiB": ({"catalog.json": _raw(b" " * (1024 * 1024 + 10))}, {}),
        "a redirect to another origin": (
            {"catalog.json": _raw(b"", status=302, headers={"Location": f"{other_origin}catalog.json"}, length=False)},
            {},
        ),
        "two same-origin hops": (hops(2), {}),
        "four same-origin hops": (hops(4), {}),
        "a ref path with ..": ({"catalog.json": _raw(_entry_with(build_dir, path="../manifest.json"))}, {}),
        "a ref path that is a URL": (
            {"catalog.json": _raw(_entry_with(build_dir, path="http://evil.example/x.json"))},
            {},
        ),
        "an entry that is a list": ({"catalog.json": _raw(b"[]")}, {}),
        "an entry that is binary": ({"catalog.json": _raw(bytes(range(256)))}, {}),
        "another format_version": (
            {"catalog.json": _raw(json.dumps({**entry, "format_version": 2}).encode())},
            {},
        ),
        "a missing manifest": ({manifest_path: lambda h: h.send_error(404)}, {}),
        "a brotli manifest": ({manifest_path: _raw(manifest, headers={"Content-Encoding": "br"})}, {}),
        "a 500, then nothing": ({manifest_path: lambda h: h.send_error(503)}, {"retries": 1}),
        "a dripping host": ({manifest_path: _drip(manifest)}, {"timeout": 1, "retries": 0}),
        "a wrong pin": ({}, {"pin": "sha256:" + "0" * 64}),
        "the right pin": ({}, {"pin": "sha256:" + hashlib.sha256(manifest).hexdigest()}),
        "a malformed pin": ({}, {"pin": "sha1:abc"}),
        "an unknown version": ({}, {"version": "0123456789abcdef"}),
        "the current version": ({}, {"version": entry["registry_version"]}),
    }


def test_hostile_hosts_get_the_same_error_codes(hostile, tmp_path):
    """Lying promises, endless and tampered bodies, redirects, bad refs and pins: both readers open or refuse alike."""
    server, build_dir = hostile
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    names = {"max_file_bytes": "maxFileBytes"}
    outcomes = {}
    for label, (routes, options) in _cases(build_dir, base).items():
        server.routes = routes
        try:
            Catalog.open(base, cache_dir=tmp_path / label.replace(" ", "_"), **options)
            py = "opened"
        except ReaderError as err:
            py = err.code
        got = run_js(base, [], **{names.get(k, k): v for k, v in options.items()})
        js = got["open"]["thrown"] if "open" in got else "opened"
        outcomes[label] = (py, js)
    server.routes = {}
    assert {k: v for k, v in outcomes.items() if v[0] != v[1]} == {}
    assert outcomes["two same-origin hops"] == ("opened", "opened")
    assert outcomes["a tampered manifest"] == ("INTEGRITY", "INTEGRITY")


def test_a_tampered_spec_is_an_integrity_envelope_in_both(hostile, tmp_path):
    """After open, a spec that does not match its hash: expand_tool answers INTEGRITY, never the bytes."""
    server, build_dir = hostile
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    spec = next((build_dir / "tools").glob("net.thing.op1.*.json"))
    server.routes = {f"tools/{spec.name}": _raw(spec.read_bytes().replace(b"variant", b"VARIANT"))}
    try:
        py = Catalog.open(base, cache_dir=tmp_path / "c").expand_tool("net.thing.op1")
        js = run_js(base, [["expandTool", "net.thing.op1"]])["answers"][0]
    finally:
        server.routes = {}
    assert py["error"]["code"] == js["error"]["code"] == "INTEGRITY"
    assert_same(
        {k: v for k, v in py["error"].items() if k != "message"},
        {k: v for k, v in js["error"].items() if k != "message"},
    )
