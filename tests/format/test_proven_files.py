"""Proven files (``toolcat-vectors-10``'s row files): a Merkle path to a page's root instead of a page of sha256."""

from __future__ import annotations

import hashlib

import pytest

from toolcat.format.canonical import dumps
from toolcat.format.vector_format import EMPTY_LEAF, leaf_digest, node_digest, page_proofs, proven_body, with_proof


def _bodies(n: int) -> list[bytes]:
    return [dumps({"artifact": "vectors_shard", "first": i, "codes": f"row {i}"}) for i in range(n)]


@pytest.mark.parametrize(("files", "per_page"), [(8, 8), (5, 8), (1, 8), (1, 1), (3, 4), (11, 16)])
def test_every_file_of_a_page_leads_to_its_root_and_only_from_its_place(files: int, per_page: int) -> None:
    bodies = _bodies(files)
    root, proofs = page_proofs(bodies, per_page)
    for place, body in enumerate(bodies):
        data = with_proof(body, proofs[place])
        assert data.endswith(b'"}')
        assert data.startswith(body[:-1])
        assert proven_body(data, root, place, per_page) == body
        for other in range(per_page):
            if other != place:
                with pytest.raises(ValueError, match="root"):
                    proven_body(data, root, other, per_page)


def test_the_root_is_rfc9162_style_over_a_padded_page() -> None:
    """Leaves sha256(0x00 || file), nodes sha256(0x01 || left || right), empty places 32 zero bytes."""
    bodies = _bodies(3)
    leaves = [hashlib.sha256(b"\x00" + body).digest() for body in bodies]
    assert leaves == [leaf_digest(body) for body in bodies]
    left = hashlib.sha256(b"\x01" + leaves[0] + leaves[1]).digest()
    right = hashlib.sha256(b"\x01" + leaves[2] + EMPTY_LEAF).digest()
    assert page_proofs(bodies, 4)[0] == node_digest(left, right).hex()
    assert page_proofs(bodies, 4)[1][2] == (EMPTY_LEAF + left).hex()


@pytest.mark.parametrize(
    "damage",
    [
        "a changed byte",
        "a proof of another file",
        "a proof cut",
        "a proof not hex",
        "no proof",
        "a proof not last",
        "a quote in the proof",
    ],
)
def test_a_file_whose_path_does_not_lead_to_the_root_is_refused(damage: str) -> None:
    bodies = _bodies(8)
    root, proofs = page_proofs(bodies, 8)
    data = {
        "a changed byte": with_proof(bodies[2].replace(b"row 2", b"row X"), proofs[2]),
        "a proof of another file": with_proof(bodies[2], proofs[3]),
        "a proof cut": with_proof(bodies[2], proofs[2][:-64]),
        "a proof not hex": with_proof(bodies[2], proofs[2].upper()),
        "no proof": bodies[2],
        "a proof not last": with_proof(bodies[2], proofs[2])[:-1] + b',"x":1}',
        "a quote in the proof": with_proof(bodies[2], proofs[2][:-1] + '"'),
    }[damage]
    with pytest.raises(ValueError, match=r"proof|root"):
        proven_body(data, root, 2, 8)
