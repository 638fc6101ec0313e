"""format.refs.page_ref: one ref of an index page, equal to page_refs' entry (the reader's lookup per file)."""

from __future__ import annotations

import pytest

from toolcat.format.refs import page_ref, page_refs

PAGE = {"folder": "index/docs", "prefix": "d", "first": 40, "files": [["a" * 64, 10], ["b" * 64, 20], ["c" * 64, 30]]}


@pytest.mark.parametrize("number", [0, 1, 2, -1, -3])
def test_page_ref_is_page_refs_entry(number: int) -> None:
    """Every position, negative ones included, gives page_refs' ref."""
    assert page_ref(PAGE, number) == page_refs(PAGE)[number]


@pytest.mark.parametrize("number", [3, -4])
def test_page_ref_out_of_range_raises_index_error_as_page_refs(number: int) -> None:
    """A file the page does not list is an IndexError, as indexing page_refs' list was (the reader's envelopes map it)."""
    with pytest.raises(IndexError):
        page_refs(PAGE)[number]
    with pytest.raises(IndexError):
        page_ref(PAGE, number)
