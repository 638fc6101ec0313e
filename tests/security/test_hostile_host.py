"""A hostile host, CDN or man-in-the-middle: real 127.0.0.1 servers that lie, drip, redirect and poison the cache.

Every answer must be a ``ReaderError`` (or an error envelope): never a traceback, never a hang past the documented
bound, never memory growth past the caps, never a foreign catalogue.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support import REPO, write_tree

from toolcat.build import build
from toolcat.format.refs import MAX_ENTRY_BYTES, MAX_FILE_BYTES
from toolcat.reader import Catalog, ReaderError
from toolcat.reader.fetch.http import HttpSource
from toolcat.reader.fetch.transport import MAX_REDIRECTS, fetch_bound, same_origin

Route = Callable[["Handler", str], None]
MiB = 1024 * 1024


class Handler(BaseHTTPRequestHandler):
    """Serves the build folder of its server, unless a route for the path says otherwise."""

    server: HostileServer.HTTPD

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        """Record the request, then answer it with the route for its path or the file."""
        host = self.server.host
        rel = self.path.lstrip("/").split("?", 1)[0]
        with host.lock:
            host.requests.append((rel, {k.lower(): v for k, v in self.headers.items()}))
        route = host.routes.get(rel) or next(
            (r for key, r in host.routes.items() if key.endswith("*") and rel.startswith(key[:-1])), None
        )
        if route is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the reader hung up: it stopped
                route(self, rel)
            return
        file = host.root / rel
        if not file.is_file():
            self.send_error(404)
            return
        data = file.read_bytes()
        etag = '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
        inm = self.headers.get("If-None-Match")
        if rel == "catalog.json" and inm is not None and (inm == etag or host.any_etag_is_fresh):
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        if rel == "catalog.json":
            self.send_header("ETag", etag)
        self.end_headers()
        self.wfile.write(data)

    def send_raw(self, data: bytes, rel: str) -> None:
        """Write bytes as they are (status line and headers included) and count them."""
        self.wfile.write(data)
        with self.server.host.lock:
            self.server.host.sent[rel] += len(data)


class HostileServer:
    """A real ThreadingHTTPServer on 127.0.0.1 serving a build folder, with routes that misbehave per path."""

    class HTTPD(ThreadingHTTPServer):
        """The server, with a link back to its host object."""

        daemon_threads = True
        host: HostileServer

    def __init__(self, root: Path) -> None:
        self.root = root
        self.routes: dict[str, Route] = {}
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.sent: dict[str, int] = defaultdict(int)
        self.any_etag_is_fresh = False  # answer 304 to any If-None-Match, as a sloppy or hostile CDN may
        self.lock = threading.Lock()
        self.httpd = self.HTTPD(("127.0.0.1", 0), Handler)
        self.httpd.host = self
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def paths(self) -> list[str]:
        """The paths requested so far, in order."""
        with self.lock:
            return [rel for rel, _ in self.requests]

    def close(self) -> None:
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()


# -- routes -----------------------------------------------------------------------------------------
def body(data: bytes, *, headers: dict[str, str] | None = None, status: int = 200, length: bool = True) -> Route:
    """Answer ``data`` with the given status and headers (and a true Content-Length unless told otherwise)."""

    def route(handler: Handler, rel: str) -> None:
        head = [f"HTTP/1.0 {status} X"]
        if length:
            head.append(f"Content-Length: {len(data)}")
        head += [f"{k}: {v}" for k, v in (headers or {}).items()]
        handler.send_raw(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data, rel)

    return route


def endless(*, content_length: int | None = None, encoding: str | None = None, stop_after: int = 512 * MiB) -> Route:
    """An endless body (cut at ``stop_after`` bytes so that a reader without caps still ends)."""
    block = gzip.compress(b"\0" * (8 * MiB), mtime=0) if encoding == "gzip" else b"a" * (64 * 1024)

    def route(handler: Handler, rel: str) -> None:
        head = "HTTP/1.0 200 OK\r\n"
        if content_length is not None:
            head += f"Content-Length: {content_length}\r\n"
        if encoding:
            head += f"Content-Encoding: {encoding}\r\n"
        handler.send_raw((head + "\r\n").encode(), rel)
        sent = 0
        while sent < stop_after:
            handler.send_raw(block, rel)
            sent += len(block)

    return route


def drip(data: bytes, *, phase: str, interval: float = 0.2, stop_after: float = 8.0) -> Route:
    """Send the response a byte at a time, every ``interval`` s: headers too, or only the body; give up later."""

    def route(handler: Handler, rel: str) -> None:
        head = f"HTTP/1.0 200 OK\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        slow = head + data if phase == "headers" else data
        if phase == "body":
            handler.send_raw(head, rel)
        started = time.monotonic()
        for i in range(len(slow)):
            if time.monotonic() - started > stop_after:
                return
            handler.send_raw(slow[i : i + 1], rel)
            time.sleep(interval)

    return route


def redirect(location: str, code: int = 302) -> Route:
    """A redirect to ``location``."""
    return body(b"", headers={"Location": location}, status=code)


# -- fixtures -----------------------------------------------------------------------------------------
def _source(title: str) -> dict[str, Any]:
    tools = [
        {
            "id": f"net.thing.op{i}",
            "summary": f"Operate on things, variant {i}",
            "description": "x",
            "args_schema": {"type": "object"},
        }
        for i in range(3)
    ]
    return {
        "_node.yaml": {"title": title, "summary": "served over http"},
        "net/_node.yaml": {"title": "Net", "summary": "Network tools."},
        "net/tools.yaml": {"tools": tools},
    }


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two different small catalogues, built once for the module (tests serve them, never modify them)."""
    root = tmp_path_factory.mktemp("hostile")
    out = {}
    for name in ("a", "b"):
        out[name] = root / f"build-{name}"
        build(write_tree(root / f"src-{name}", _source(f"catalogue {name}")), out[name])
    return out


@pytest.fixture
def host(builds: dict[str, Path]) -> Iterator[HostileServer]:
    """A server of catalogue a."""
    server = HostileServer(builds["a"])
    yield server
    server.close()


@pytest.fixture
def other(builds: dict[str, Path]) -> Iterator[HostileServer]:
    """A second server (another origin: another port) of catalogue b."""
    server = HostileServer(builds["b"])
    yield server
    server.close()


def _entry(build_dir: Path) -> dict[str, Any]:
    return json.loads((build_dir / "catalog.json").read_text())


def _with_manifest_ref(build_dir: Path, ref: dict[str, Any]) -> bytes:
    """catalog.json of ``build_dir`` whose manifest ref (also in versions) is ``ref``."""
    entry = _entry(build_dir)
    entry["manifest"] = ref
    for item in entry.get("versions", []):
        item["manifest"] = ref
    return json.dumps(entry).encode()


def _manifest_path(build_dir: Path) -> str:
    return str(_entry(build_dir)["manifest"]["path"])


def _open_outcome(url: str, cache: Path, **options: Any) -> str:
    """Return "opened", or the code of the ReaderError Catalog.open raised (anything else propagates and fails the test)."""
    try:
        Catalog.open(url, cache_dir=cache, **options)
    except ReaderError as err:
        return err.code
    return "opened"


def _open_error(url: str, cache: Path, **options: Any) -> ReaderError:
    with pytest.raises(ReaderError) as info:
        Catalog.open(url, cache_dir=cache, **options)
    return info.value


# == 1. caps independent of any promise =================================================================
def test_a_promise_above_the_file_cap_is_refused_before_any_download(host, builds, tmp_path):
    """A manifest ref promising 1 GiB is INTEGRITY naming the file, the promise and the cap; nothing is fetched."""
    ref = {"path": "manifests/huge.json", "sha256": "0" * 64, "bytes": 1 << 30}
    host.routes["catalog.json"] = body(_with_manifest_ref(builds["a"], ref))
    host.routes["manifests/huge.json"] = endless(stop_after=32 * MiB)
    err = _open_error(host.url, tmp_path / "cache", timeout=5, retries=0)
    assert err.code == "INTEGRITY"
    assert "manifests/huge.json" in err.message
    assert str(1 << 30) in err.message
    assert str(MAX_FILE_BYTES) in err.message
    assert err.details["cap_bytes"] == MAX_FILE_BYTES
    assert "manifests/huge.json" not in host.paths()
    assert host.sent["manifests/huge.json"] == 0


def test_max_file_bytes_is_a_parameter(host, builds, tmp_path):
    """A smaller max_file_bytes refuses a file whose honest ref promises more, before any request for it."""
    entry = _entry(builds["a"])
    source = HttpSource(host.url, tmp_path / "cache", timeout=5, retries=0, max_file_bytes=100)
    with pytest.raises(ReaderError) as info:
        source.fetch(entry["manifest"])
    assert info.value.code == "INTEGRITY"
    assert "max_file_bytes" in " ".join(info.value.hints)
    assert host.paths() == []


@pytest.mark.parametrize(
    ("label", "route"),
    [
        ("identity, no length", endless()),
        ("identity, honest huge length", endless(content_length=10 << 30)),
        ("gzip bomb stream", endless(encoding="gzip")),
        ("chunked-like close-delimited gzip", endless(encoding="gzip", content_length=None)),
    ],
)
@pytest.mark.timeout(60)
def test_a_body_longer_than_its_promise_stops_at_the_promise(host, builds, tmp_path, label, route):
    """A ref promising 5,000 bytes served as an endless (or gzip-bomb) stream: INTEGRITY after little reading."""
    ref = {"path": "manifests/m.json", "sha256": "0" * 64, "bytes": 5000}
    host.routes["catalog.json"] = body(_with_manifest_ref(builds["a"], ref))
    host.routes["manifests/m.json"] = route
    started = time.monotonic()
    err = _open_error(host.url, tmp_path / "cache", timeout=5, retries=0)
    assert err.code == "INTEGRITY", label
    assert "larger than expected" in err.message
    assert time.monotonic() - started < 5
    time.sleep(0.2)  # let the server notice the hang-up
    assert host.sent["manifests/m.json"] < 16 * MiB  # the socket buffers, not the 512 MiB on offer


def test_an_entry_above_its_cap_is_refused(host, builds, tmp_path):
    """catalog.json is small: one padded past MAX_ENTRY_BYTES (1 MiB) is INTEGRITY naming the cap."""
    entry = _entry(builds["a"])
    entry["padding"] = "x" * (MAX_ENTRY_BYTES + 10)
    host.routes["catalog.json"] = body(json.dumps(entry).encode())
    err = _open_error(host.url, tmp_path / "cache", timeout=5, retries=0)
    assert err.code == "INTEGRITY"
    assert str(MAX_ENTRY_BYTES) in err.message
    assert 1 * MiB >= MAX_ENTRY_BYTES


_MEMORY_PROBE = r"""
import json, resource, sys
def vm_kib(field="VmSize:"):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1])
    return 0
from toolcat.reader import Catalog, ReaderError
base = vm_kib() * 1024
resource.setrlimit(resource.RLIMIT_AS, (base + 400 * 2**20, base + 400 * 2**20))
out = {}
for name, url in (("huge", sys.argv[1]), ("under_cap", sys.argv[2])):
    try:
        Catalog.open(url, cache_dir=sys.argv[3] + name, timeout=20, retries=0)
        out[name] = "opened"
    except ReaderError as err:
        out[name] = err.code
    except MemoryError:
        out[name] = "MemoryError"
# VmHWM, not ru_maxrss: ru_maxrss survives execve, so it would count the (large) forking pytest process
out["maxrss_mib"] = vm_kib("VmHWM:") / 1024
out["base_mib"] = base / 2**20
print(json.dumps(out))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc to measure virtual memory")
@pytest.mark.timeout(120)
def test_memory_stays_bounded_under_a_memory_limit(builds, tmp_path):
    """Under RLIMIT_AS (base + 400 MiB), a 1 GiB promise and a 60 MiB one served endlessly: errors, no MemoryError."""
    servers = [HostileServer(builds["a"]), HostileServer(builds["a"])]
    try:
        huge, under = servers
        for server, promise in ((huge, 1 << 30), (under, 60 * MiB)):
            ref = {"path": "manifests/m.json", "sha256": "0" * 64, "bytes": promise}
            server.routes["catalog.json"] = body(_with_manifest_ref(builds["a"], ref))
            server.routes["manifests/m.json"] = endless(stop_after=96 * MiB)
        done = subprocess.run(
            [sys.executable, "-c", _MEMORY_PROBE, huge.url, under.url, str(tmp_path / "c-")],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=100,
            check=False,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    finally:
        for server in servers:
            server.close()
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["huge"] == "INTEGRITY", out
    assert out["under_cap"] == "INTEGRITY", out
    # RLIMIT_AS (base + 400 MiB of address space) is the real bound: reaching it would have been a MemoryError
    # above. The peak is a few copies of the 60 MiB body, plus what malloc keeps between the retries.
    assert out["maxrss_mib"] < 450, out


# == 2. a total deadline per request ========================================================================
@pytest.mark.parametrize("phase", ["headers", "body"])
@pytest.mark.timeout(60)
def test_a_dripping_host_is_cut_off_at_the_documented_bound(host, builds, phase, tmp_path):
    """One byte every 0.2 s (never idle long enough for a socket timeout): UNAVAILABLE within (retries+1)*timeout+backoff."""
    host.routes["catalog.json"] = drip((builds["a"] / "catalog.json").read_bytes(), phase=phase)
    started = time.monotonic()
    err = _open_error(host.url, tmp_path / "cache", timeout=1, retries=1)
    elapsed = time.monotonic() - started
    assert fetch_bound(1, 1) == pytest.approx(2.1)
    assert elapsed < fetch_bound(1, 1) + 1.5, elapsed  # a bound, with slack for a busy machine
    assert err.code == "UNAVAILABLE"
    assert "timed out" in err.message, err.message
    assert host.paths() == ["catalog.json", "catalog.json"]


def test_a_slow_but_honest_host_still_works(host, builds, tmp_path):
    """A catalog.json dripped over about half a second opens fine with timeout=3: the deadline is not a speed test."""
    data = (builds["a"] / "catalog.json").read_bytes()
    host.routes["catalog.json"] = drip(data, phase="body", interval=0.5 / len(data))
    catalog = Catalog.open(host.url, cache_dir=tmp_path / "cache", timeout=3, retries=0)
    assert catalog.list()["ok"]


def test_the_fetch_bound_includes_capped_backoff():
    """fetch_bound is (retries+1)*timeout plus a backoff of 0.1 s, 0.2 s… each capped at 1 s."""
    assert fetch_bound(2, 2) == pytest.approx(6.3)
    assert fetch_bound(1, 0) == pytest.approx(1.0)
    assert fetch_bound(1, 10) == pytest.approx(11 + 0.1 + 0.2 + 0.4 + 0.8 + 6 * 1.0)


# == 3. the on-disk cache ====================================================================================
def _cache_files(cache: Path) -> list[Path]:
    return [p for p in cache.rglob("*") if p.is_file()]


def test_another_urls_cache_entry_plus_a_304_never_loads_a_foreign_catalogue(host, other, tmp_path):
    """B's cached entry copied over A's, and A answering 304 to any ETag: the reader still loads A, fetched afresh."""
    cache_a, cache_b = tmp_path / "cache-a", tmp_path / "cache-b"
    version_a = Catalog.open(host.url, cache_dir=cache_a).registry_version
    version_b = Catalog.open(other.url, cache_dir=cache_b).registry_version
    assert version_a != version_b
    (entry_a,) = (cache_a / "entries").iterdir()
    (entry_b,) = (cache_b / "entries").iterdir()
    entry_a.write_bytes(entry_b.read_bytes())  # the poison: B's entry under A's name, and B's files beside it
    for file in _cache_files(cache_b / "objects"):
        (cache_a / file.relative_to(cache_b)).parent.mkdir(parents=True, exist_ok=True)
        (cache_a / file.relative_to(cache_b)).write_bytes(file.read_bytes())
    host.any_etag_is_fresh = True
    host.requests.clear()
    again = Catalog.open(host.url, cache_dir=cache_a)
    assert again.registry_version == version_a
    assert "if-none-match" not in host.requests[0][1]  # the poisoned entry was discarded, not revalidated


def test_a_forged_entry_record_is_not_trusted(host, builds, tmp_path):
    """An entries file rewritten to hold another body (the pre-fix {etag, body} shape) is discarded, not used on 304."""
    cache = tmp_path / "cache"
    version = Catalog.open(host.url, cache_dir=cache).registry_version
    forged = _entry(builds["a"])
    forged["registry_version"] = "forged"
    for file in (cache / "entries").iterdir():
        file.write_text(json.dumps({"etag": '"anything"', "body": json.dumps(forged)}))
    host.any_etag_is_fresh = True
    assert Catalog.open(host.url, cache_dir=cache).registry_version == version


def test_a_corrupt_cached_entry_body_is_refetched_without_if_none_match(host, tmp_path):
    """Every cached file flipped on disk: the entry is fetched unconditionally and everything verifies again."""
    cache = tmp_path / "cache"
    Catalog.open(host.url, cache_dir=cache).list()
    for file in _cache_files(cache / "objects"):
        file.write_bytes(file.read_bytes()[::-1])
    host.requests.clear()
    again = Catalog.open(host.url, cache_dir=cache)
    assert again.list()["ok"]
    assert "if-none-match" not in host.requests[0][1]
    host.requests.clear()
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]  # and the repaired cache is used again
    assert host.paths() == ["catalog.json"]
    assert "if-none-match" in host.requests[0][1]


def test_cache_files_are_private_and_left_without_temp_files(host, tmp_path):
    """Cache folders are 0o700, files 0o600, and no temporary file is left behind."""
    cache = tmp_path / "cache"
    Catalog.open(host.url, cache_dir=cache).expand_tool("net.thing.op1")
    paths = [cache, *cache.rglob("*")]
    assert len(paths) > 5
    for path in paths:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), (path, oct(mode))
    assert not [p for p in paths if p.name.startswith(".tmp")]


def test_a_cache_folder_others_can_write_is_not_used(host, tmp_path):
    """A cache folder writable by group/others (or owned by another user) is not trusted: no reads, no writes."""
    cache = tmp_path / "shared"
    cache.mkdir()
    cache.chmod(0o777)
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]
    assert not list(cache.iterdir())
    if os.geteuid() == 0:  # only root can hand a folder to another user
        owned = tmp_path / "owned"
        owned.mkdir(mode=0o700)
        os.chown(owned, 54321, 54321)
        assert Catalog.open(host.url, cache_dir=owned).list()["ok"]
        assert not list(owned.iterdir())
        mine = tmp_path / "mine"  # a private folder of ours, reached through a link another user planted
        mine.mkdir(mode=0o700)
        planted = tmp_path / "planted"
        planted.symlink_to(mine, target_is_directory=True)
        os.lchown(planted, 54321, 54321)
        assert Catalog.open(host.url, cache_dir=planted).list()["ok"]
        assert not list(mine.iterdir())


def _object(cache: Path, digest: str) -> Path:
    return cache / "objects" / digest[:2] / digest


def test_a_symlink_planted_for_an_object_is_not_followed(host, builds, tmp_path):
    """A cached object that is a symlink (even to the right bytes) is not read: it is removed and fetched again."""
    cache = tmp_path / "cache"
    Catalog.open(host.url, cache_dir=cache).list()
    ref = _entry(builds["a"])["manifest"]
    outside = tmp_path / "outside.json"
    outside.write_bytes((builds["a"] / ref["path"]).read_bytes())
    target = _object(cache, ref["sha256"])
    target.unlink()
    target.symlink_to(outside)
    host.requests.clear()
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]
    assert ref["path"] in host.paths()
    assert not target.is_symlink()
    assert outside.read_bytes() == (builds["a"] / ref["path"]).read_bytes()


def test_a_symlinked_cache_folder_never_receives_writes(host, tmp_path):
    """objects/ or entries/ replaced by symlinks to folders outside: nothing is written through them."""
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    outside = tmp_path / "outside"
    outside.mkdir()
    (cache / "objects").symlink_to(outside, target_is_directory=True)
    (cache / "entries").symlink_to(outside, target_is_directory=True)
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]
    assert not list(outside.iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.timeout(30)
def test_a_fifo_planted_in_the_cache_does_not_hang_the_reader(host, builds, tmp_path):
    """A FIFO where a cached object should be (opening it would block forever) is skipped and the file fetched."""
    cache = tmp_path / "cache"
    Catalog.open(host.url, cache_dir=cache).list()
    ref = _entry(builds["a"])["manifest"]
    target = _object(cache, ref["sha256"])
    target.unlink()
    os.mkfifo(target)
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(Catalog.open(host.url, cache_dir=cache)), daemon=True)
    worker.start()
    worker.join(10)
    assert result, "Catalog.open blocked on a FIFO in the cache"
    assert result[0].list()["ok"]


# == 4. the rest of the class ===================================================================================
def test_same_origin_is_scheme_host_and_port():
    """Redirects are followed only within one origin: another host, port or scheme (https→http) is refused."""
    assert same_origin("https://cdn.example.com/a/", "https://CDN.example.com:443/b/c.json")
    assert same_origin("http://h/a/", "http://h:80/x")
    assert not same_origin("https://h/a/", "http://h/a/catalog.json")
    assert not same_origin("http://h/a/", "http://h:8080/a/")
    assert not same_origin("http://h/a/", "http://evil.example/a/")
    assert not same_origin("http://h/a/", "ftp://h/a/")
    assert not same_origin("http://h/a/", "file:///etc/passwd")
    assert not same_origin("http://h/a/", "http://h:99999/")


@pytest.mark.parametrize("where", ["other origin", "file", "ftp", "data"])
def test_redirects_leaving_the_origin_are_refused(host, other, tmp_path, where):
    """catalog.json redirected to another origin or scheme: UNAVAILABLE naming the redirect; nothing is fetched there."""
    location = {
        "other origin": other.url + "catalog.json",
        "file": "file:///etc/passwd",
        "ftp": "ftp://127.0.0.1:1/catalog.json",
        "data": "data:application/json,{}",
    }[where]
    host.routes["catalog.json"] = redirect(location)
    err = _open_error(host.url, tmp_path / "cache", timeout=5, retries=2)
    assert err.code == "UNAVAILABLE"
    assert "redirect" in err.message
    assert other.paths() == []
    assert host.paths() == ["catalog.json"]  # refused, not retried


def test_same_origin_redirects_are_followed_up_to_the_hop_limit(host, builds, tmp_path):
    """A same-origin redirect works; a loop stops after MAX_REDIRECTS hops with UNAVAILABLE."""
    host.routes["old/*"] = lambda handler, rel: redirect("/" + rel.removeprefix("old/"), 301)(handler, rel)
    assert Catalog.open(host.url + "old/", cache_dir=tmp_path / "c1").registry_version
    for i in range(10):
        host.routes[f"loop{i}/catalog.json"] = redirect(f"/loop{i + 1}/catalog.json")
    host.requests.clear()
    err = _open_error(host.url + "loop0/", tmp_path / "c2", timeout=5)
    assert err.code == "UNAVAILABLE"
    assert "redirect" in err.message
    assert len(host.paths()) == MAX_REDIRECTS + 1


@pytest.mark.parametrize(
    ("label", "make", "code"),
    [
        (
            "length far above the cap",
            lambda d: body(d, headers={"Content-Length": str(10 << 40)}, length=False),
            "INTEGRITY",
        ),
        (
            "length shorter than the body",
            lambda d: body(d + b"tail" * 100, headers={"Content-Length": str(len(d) - 5)}, length=False),
            "INTEGRITY",
        ),
        (
            "length longer than the body",
            lambda d: body(d, headers={"Content-Length": str(len(d) + 100)}, length=False),
            "UNAVAILABLE",
        ),
        ("length not a number", lambda d: body(d, headers={"Content-Length": "12abc"}, length=False), None),
        ("two lengths", lambda d: body(d, headers={"Content-Length": f"{len(d)}, {len(d)}"}, length=False), None),
        (
            "gzip, gzip",
            lambda d: body(gzip.compress(gzip.compress(d)), headers={"Content-Encoding": "gzip, gzip"}),
            "UNAVAILABLE",
        ),
        ("deflate", lambda d: body(d, headers={"Content-Encoding": "deflate"}), "UNAVAILABLE"),
        ("br", lambda d: body(d, headers={"Content-Encoding": "br"}), "UNAVAILABLE"),
        (
            "gzip with trailing garbage",
            lambda d: body(gzip.compress(d) + b"garbage", headers={"Content-Encoding": "gzip"}),
            "UNAVAILABLE",
        ),
        (
            "gzip in two members",
            lambda d: body(gzip.compress(d[:10]) + gzip.compress(d[10:]), headers={"Content-Encoding": "gzip"}),
            None,
        ),
        ("gzip cut short", lambda d: body(gzip.compress(d)[:-20], headers={"Content-Encoding": "gzip"}), "UNAVAILABLE"),
        ("200 headers", lambda d: body(d, headers={f"X-H{i}": "v" for i in range(200)}), "UNAVAILABLE"),
        ("a 100 KB header", lambda d: body(d, headers={"X-Big": "v" * 100_000}), "UNAVAILABLE"),
        ("HTTP/0.9 garbage", lambda d: lambda h, rel: h.send_raw(b"\x00\xff garbage\r\n\r\n" + d, rel), "UNAVAILABLE"),
        ("206 partial", lambda d: body(d[:50], status=206), "INTEGRITY"),
        ("status 999", lambda d: body(d, status=999), None),
    ],
)
def test_lying_headers_and_encodings_on_the_manifest(host, builds, tmp_path, label, make, code):
    """Content-Length lies, stacked or unknown encodings, huge headers, garbage: an error or the true file, never more."""
    path = _manifest_path(builds["a"])
    host.routes[path] = make((builds["a"] / path).read_bytes())
    if code is None:  # harmless: the bytes are verified against the manifest's hash
        outcome = _open_outcome(host.url, tmp_path / "cache", timeout=3, retries=0)
        assert outcome in ("opened", "UNAVAILABLE", "INTEGRITY"), label
        return
    err = _open_error(host.url, tmp_path / "cache", timeout=3, retries=0)
    assert err.code == code, (label, err.message)
    assert not (tmp_path / "cache" / "objects").exists() or all(
        f.name != _entry(builds["a"])["manifest"]["sha256"] for f in _cache_files(tmp_path / "cache" / "objects")
    )


@pytest.mark.parametrize(
    "path",
    [
        "../manifest.json",
        "manifests/../../x.json",
        "/etc/passwd",
        "//evil.example/x.json",
        "http://evil.example/x.json",
        "https:/evil.example/x",
        ".",
        "a//b.json",
        "a/./b.json",
        "a/b/",
        "x\x00y.json",
        "x\ny.json",
        "a\\b.json",
        "\ud800.json",
        "",
        "a" * 5000,
    ],
)
def test_ref_paths_resolve_under_the_base_url_only(host, builds, tmp_path, path):
    """A manifest ref with .., an absolute path or URL, an empty/dot segment, a control char: INTEGRITY, no request."""
    ref = {"path": path, "sha256": "0" * 64, "bytes": 10}
    host.routes["catalog.json"] = body(_with_manifest_ref(builds["a"], ref))
    err = _open_error(host.url, tmp_path / "cache", timeout=3, retries=0)
    assert err.code == "INTEGRITY"
    assert host.paths() == ["catalog.json"]


@pytest.mark.parametrize(
    ("label", "data"),
    [
        ("binary", bytes(range(256)) * 4),
        ("empty", b""),
        ("a list", b"[]"),
        ("not utf-8", b'{"artifact": "\xff\xfe"}'),
        ("nested 100k deep", b"[" * 100_000 + b"]" * 100_000),
        ("huge number", b'{"artifact": 1' + b"0" * 100_000 + b"}"),
    ],
)
def test_an_entry_that_is_not_a_catalogue_is_unavailable(host, tmp_path, label, data):
    """catalog.json as binary, empty, a list, bad UTF-8, deep nesting or a huge integer: a ReaderError, no traceback."""
    host.routes["catalog.json"] = body(data)
    err = _open_error(host.url, tmp_path / "cache", timeout=3, retries=0)
    assert err.code in ("UNAVAILABLE", "INTEGRITY"), label


def test_an_etag_with_line_breaks_is_never_sent_back(host, builds, tmp_path):
    """A folded ETag from the host, or one with CR LF planted in the cache, is never echoed as a request header."""
    data = (builds["a"] / "catalog.json").read_bytes()
    host.routes["catalog.json"] = body(data, headers={"ETag": '"a"\r\n X-Injected: 1'})
    cache = tmp_path / "cache"
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]
    del host.routes["catalog.json"]
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]
    for file in (cache / "entries").iterdir():  # plant an injection in a record that is otherwise valid
        record = json.loads(file.read_text())
        record["etag"] = '"x"\r\nX-Injected: 1'
        file.write_text(json.dumps(record))
    assert Catalog.open(host.url, cache_dir=cache).list()["ok"]
    for _, headers in host.requests:
        assert "x-injected" not in headers
        assert "\n" not in headers.get("if-none-match", "")


def test_a_304_with_a_body_uses_the_cached_copy_and_a_200_to_a_revalidation_is_used(host, builds, other, tmp_path):
    """A 304 carrying a stray body reuses the verified cached copy; a host ignoring If-None-Match is simply read."""
    cache = tmp_path / "cache"
    version = Catalog.open(host.url, cache_dir=cache).registry_version
    host.routes["catalog.json"] = body(b'{"not": "used"}', status=304)
    assert Catalog.open(host.url, cache_dir=cache).registry_version == version
    host.routes["catalog.json"] = body((builds["a"] / "catalog.json").read_bytes())  # 200, no ETag
    assert Catalog.open(host.url, cache_dir=cache).registry_version == version


def test_a_304_to_an_unconditional_request_is_unavailable(host, tmp_path):
    """A 304 answered to a request that sent no If-None-Match: UNAVAILABLE saying so, not a JSON error."""
    host.routes["catalog.json"] = body(b"", status=304)
    err = _open_error(host.url, tmp_path / "cache", timeout=3, retries=0)
    assert err.code == "UNAVAILABLE"
    assert "304" in err.message


def test_the_host_sees_no_connection_after_a_refusal(host, tmp_path):
    """A closed port answers UNAVAILABLE within the bound (connection refused is retried, then reported)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    err = _open_error(f"http://127.0.0.1:{port}/", tmp_path / "cache", timeout=1, retries=1)
    assert err.code == "UNAVAILABLE"
    assert time.monotonic() - started < fetch_bound(1, 1) + 1.5


@pytest.mark.timeout(30)
def test_a_silent_tls_peer_is_cut_off_at_the_deadline(tmp_path):
    """An https URL whose peer accepts and never speaks (the TLS handshake stalls): UNAVAILABLE within the bound."""
    listener = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    threading.Thread(target=lambda: held.append(listener.accept()[0]), daemon=True).start()
    try:
        started = time.monotonic()
        err = _open_error(f"https://127.0.0.1:{listener.getsockname()[1]}/", tmp_path / "cache", timeout=1, retries=0)
        assert time.monotonic() - started < fetch_bound(1, 0) + 1.5
        assert err.code == "UNAVAILABLE"
    finally:
        for sock in [*held, listener]:
            sock.close()


@pytest.mark.timeout(60)
def test_a_redirect_with_an_endless_body_is_not_read(host, tmp_path):
    """A same-origin 302 followed by an endless body: the redirect is followed without reading that body."""

    def route(handler: Handler, rel: str) -> None:
        handler.send_raw(b"HTTP/1.0 302 Found\r\nLocation: /catalog.json\r\n\r\n", rel)
        endless_body = b"a" * (64 * 1024)
        for _ in range(1024):  # 64 MiB on offer
            handler.send_raw(endless_body, rel)

    host.routes["old/catalog.json"] = route  # an exact route wins over the prefix one
    host.routes["old/*"] = lambda handler, rel: redirect("/" + rel.removeprefix("old/"))(handler, rel)
    started = time.monotonic()
    assert Catalog.open(host.url + "old/", cache_dir=tmp_path / "cache", timeout=5).list()["ok"]
    assert time.monotonic() - started < 5
    time.sleep(0.2)
    assert host.sent["old/catalog.json"] < 16 * MiB
