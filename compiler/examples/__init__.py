"""Reference implementations for the bundled example catalogue (``catalog_src/``).

``toolcat.examples.handlers`` holds small, stdlib-only Python handlers that the
example tools point at with ``handler: "toolcat.examples.handlers:<function>"``.
They exist so a new user can run a catalogue end to end without any backend.
"""
