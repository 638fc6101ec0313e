"""``toolcat site``: the browsable HTML docs site of a finished build (``build/site``), read through the reader."""
