"""Time ``toolcat import openapi`` on the corpus specs (Box, Slack, Spotify) and check each builds.

For each spec: operations counted in the spec, tools written, the import's wall time (best
of ``--repeat`` runs, each a fresh process-internal import into a new folder), its grouped
warnings (each counted per place) and the time of ``toolcat build`` over the result. The
issue's target: Box (1.8 MB, 296 operations) imports in under 2 s.

    .venv/bin/python bench/bench_import.py [--repeat 3] [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from toolcat.build import build  # noqa: E402 - after the path set-up
from toolcat.importers.openapi.operations import METHODS, import_openapi  # noqa: E402

SPECS = [
    ("box-platform-api.openapi.json", "box"),
    ("slack-web-api.swagger2.json", "slack"),
    ("spotify-web-api.openapi.yaml", "spotify"),
]
BOX_TARGET_S = 2.0


def operations(path: Path) -> int:
    """Operations in a spec: one per method under each path."""
    doc = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
    return sum(1 for item in doc["paths"].values() for method in METHODS if method in item)


def main() -> int:
    """Print the table; exit 1 when a count differs or Box misses its target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    options = parser.parse_args()
    folder = options.corpus / "tools" / "openapi"
    if not folder.is_dir():
        print(f"skipped: no corpus at {folder}")
        return 0
    rows = []
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for name, ns in SPECS:
            spec = folder / name
            best = float("inf")
            for run in range(options.repeat):
                out = Path(tmp) / f"{ns}-{run}" / ns
                started = time.perf_counter()
                result = import_openapi(str(spec), namespace=ns, out=out)
                best = min(best, time.perf_counter() - started)
            started = time.perf_counter()
            build(out.parent, Path(tmp) / f"build-{ns}")
            built = time.perf_counter() - started
            ops = operations(spec)
            warnings = sum(
                int(w.split(" places: ")[0].rsplit("(", 1)[-1]) if " places: " in w else 1 for w in result.warnings
            )
            rows.append(
                (
                    name,
                    f"{spec.stat().st_size / 1e6:.1f} MB",
                    ops,
                    result.count,
                    f"{best:.2f}",
                    warnings,
                    f"{built:.1f}",
                )
            )
            failed |= ops != result.count or (ns == "box" and best >= BOX_TARGET_S)
    header = ("spec", "size", "operations", "tools", "import s", "warnings", "build s")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print(
            "  ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    print(f"\nimport s: best of {options.repeat}; target for Box: < {BOX_TARGET_S} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
