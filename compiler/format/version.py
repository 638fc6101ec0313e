"""The one version source: toolcat's release and the artifact format it writes and reads (docs/format.md).

The format version sits here, in the layer writer and reader share, so the build stamps and the reader checks the
same number; pyproject.toml reads the release from :data:`__version__` (``tool.setuptools.dynamic``).
"""

from __future__ import annotations

__all__ = ["FORMAT_VERSION", "__version__"]

__version__ = "0.1.0"

#: Version of the artifact format written to ``build/`` and the only one a reader reads (see docs/format.md).
FORMAT_VERSION = 1
