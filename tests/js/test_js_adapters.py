"""The TypeScript adapters' Node tests (js/test/adapters.test.mjs) run against a fresh build of the example catalogue."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support import EXAMPLE_SRC, REPO

from toolcat.build import build

JS = REPO / "js"

pytestmark = pytest.mark.slow


def test_the_discovery_loop_runs_against_a_served_catalogue(tmp_path: Path) -> None:
    """OpenAI and AI SDK definitions are well formed; execute runs only expanded tools; unknown tools get envelopes."""
    node = shutil.which("node")
    if node is None or not (JS / "dist" / "adapters.js").is_file():
        pytest.skip("node or js/dist is absent: run `make js`")
    build(EXAMPLE_SRC, tmp_path / "build")
    env = {**os.environ, "TOOLCAT_BUILD": str(tmp_path / "build")}
    done = subprocess.run(
        [node, "--test", "test/adapters.test.mjs"],
        cwd=JS,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "# skipped 0" in done.stdout, "the tests skipped: the build was not found"
    assert "# fail 0" in done.stdout
