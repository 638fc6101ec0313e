"""Reference implementations for the bundled example catalogue (``catalog_src/``).

Small, stdlib-only Python handlers, one module per namespace: :mod:`toolcat.examples.files`,
:mod:`toolcat.examples.onto`, :mod:`toolcat.examples.util` and :mod:`toolcat.examples.refactor`.
The example tools point at them with ``handler: "toolcat.examples.<module>:<function>"``
(``toolcat.examples.handlers`` re-exports them all under the old targets). They exist so a new
user can run a catalogue end to end without any backend.
"""
