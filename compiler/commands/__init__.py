"""CLI commands beyond build/validate, one module per area, found by :func:`toolcat.cli.main`.

Each module defines ``COMMANDS: list[click.Command]`` and keeps heavy imports inside the
command functions, so ``toolcat --help`` stays fast.
"""
