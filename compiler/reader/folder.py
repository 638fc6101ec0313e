"""A finished build read through the Catalog (export, stats, prompt, tests)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from ..format.aliases import check_provider
from ..format.envelope import ReaderError
from ..format.errors import ToolcatError
from ..format.types import JSON
from .catalog import Catalog


class BuildReadError(ValueError, ToolcatError):
    """A build folder the reader refuses (missing, malformed, or a file that fails its hash or size check)."""


class BuildFolder:
    """A built catalogue on disk, read through the reader (:class:`toolcat.reader.Catalog`).

    Every file is fetched as a host's reader fetches it: the ref's path must stay inside the folder,
    the read is bounded by the size the ref promises, and size and sha256 are checked.
    """

    def __init__(self, root: Path | str, cache_dir: str | Path | None = None) -> None:
        # a published build (an http(s) base URL) is read the same way, through the reader's HTTP source
        remote = isinstance(root, str) and root.startswith(("http://", "https://"))
        self.root = Path(root)
        if not remote and not (self.root / "catalog.json").is_file():
            raise FileNotFoundError(
                f"{self.root / 'catalog.json'} not found: run `toolcat build` first or pass --build DIR"
            )
        try:
            self._catalog = Catalog.open(root if remote else self.root, cache_dir=cache_dir)
        except ReaderError as err:
            raise BuildReadError(f"{root}: {err.message}") from None
        self.manifest: dict[str, JSON] = self._catalog.manifest

    def fetch_bytes(self, ref: Mapping[str, JSON]) -> bytes:
        """The bytes of a ref, after checking their size and sha256."""
        try:
            return self._catalog.fetch_bytes(dict(ref))
        except ReaderError as err:
            reason = (
                "sha256 does not match the ref that points to it; rebuild the catalogue"
                if "expected_sha256" in err.details
                else err.message
            )
            raise BuildReadError(f"{ref.get('path')}: {reason}") from None

    def fetch_json(self, ref: Mapping[str, JSON]) -> JSON:
        """The parsed JSON of a ref, after checking its hash (a fresh object: callers may change it)."""
        return json.loads(self.fetch_bytes(ref))

    def specs(self) -> dict[str, dict[str, JSON]]:
        """Every tool spec, by id (read through the lookup buckets)."""
        refs: dict[str, Mapping[str, JSON]] = {}
        for bucket_ref in self.manifest["lookup"]["refs"]:
            for entry in self.fetch_json(bucket_ref)["entries"].values():
                refs.setdefault(entry["tool_id"], entry["spec"])
        return {tool_id: self.fetch_json(ref) for tool_id, ref in sorted(refs.items())}

    def always_loaded_specs(self) -> list[dict[str, JSON]]:
        """The specs of the tools marked ``always_load``, through the manifest's own refs (no other spec is read)."""
        entries = self.manifest.get("always_load") or []
        return [self.fetch_json(entry["ref"]) for entry in entries if isinstance(entry, dict)]

    def aliases(self, provider: str) -> dict[str, JSON]:
        """The alias map of ``provider``: ``{to_alias, to_id, rule}``."""
        check_provider(provider)
        return dict(self.fetch_json(self.manifest["aliases"][provider]))
