"""SRC/toolcat.yaml read once, under the source limits."""

from __future__ import annotations

from pathlib import Path


def configured_embedder(src: Path, override: str | None = None) -> str | None:
    """The embedder spec: ``override`` (``--embedder``; ``none`` turns it off), else ``search.embedder`` in ``SRC/toolcat.yaml``."""
    if override is not None:
        return None if override.strip().lower() in ("", "none", "off") else override.strip()
    config = src / "toolcat.yaml"
    if not config.is_file():
        return None
    import yaml  # noqa: PLC0415 - build only

    data = yaml.safe_load(config.read_text(encoding="utf-8")) or {}
    search = data.get("search") if isinstance(data, dict) else None
    spec = search.get("embedder") if isinstance(search, dict) else None
    if not spec or str(spec).strip().lower() in ("none", "off"):
        return None
    return str(spec).strip()
