"""The docs site's search is the TypeScript reader: the committed bundle is exactly what js/ builds today."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from support import REPO

JS = REPO / "js"
COMMITTED = REPO / "templates" / "site" / "assets" / "toolcat-search.js"


def test_the_committed_site_bundle_equals_a_fresh_build(tmp_path: Path) -> None:
    """templates/site/assets/toolcat-search.js cannot drift from js/src: rebuilding it gives the same bytes."""
    node = shutil.which("node")
    if node is None or not (JS / "node_modules" / "esbuild").is_dir():
        pytest.skip("node or js/node_modules is absent: `make js` installs them (npm ci in js/)")
    fresh = tmp_path / "toolcat-search.js"
    subprocess.run([node, "scripts/bundle.mjs", "--site-out", str(fresh)], cwd=JS, check=True, timeout=120)
    assert fresh.read_bytes() == COMMITTED.read_bytes(), "run `npm run site` in js/ and commit the bundle"


def test_the_site_bundle_is_built_from_the_package() -> None:
    """The page's script carries the package's Catalog and the Python reader's search thresholds."""
    text = COMMITTED.read_text(encoding="utf-8")
    assert "built from js/src/site.ts" in text
    assert "Catalog = class" in text  # "var Catalog = class", or assigned in a lazily initialised module
    assert "toolcatSearch" in text
