"""The partitioned vectors' format version and its character codes, shared by the build and the reader (stdlib only).

The build (``toolcat.build.contributors.vectors``: ``residual_codes``, ``centroid_codes``) writes with these
alphabets and the reader (``toolcat.reader.search.semantic``: ``residual_rows``, ``centroid_codes``) reads with them,
so the two cannot drift apart; the TypeScript reader (``js/src/semantic.ts``) repeats them, checked by its tests.
"""

from __future__ import annotations

#: The vectors meta's ``format`` of a partitioned build (``toolcat-vectors-8``: clusters, centroids and a row table,
#: each row's int4 codes stored as differences from a prediction by a reference's codes, two a character: a row
#: file's and a node row's reference a centroid, a cluster shard's row's its centroid or another row of the shard
#: (``parents``); the centroids one character a code, dimension by dimension; each row file holding its tool's index
#: document too; the cluster shards a paged table, ``clusters``; the row table's files in buckets of consecutive
#: docs, a folder each, named in the meta, ``buckets``; ``toolcat-vectors-9``: the row files' ancestor node rows in
#: their group of the row table, ``nodes``, once for its docs, not in each row file). A reader refuses another with a
#: "rebuild" reason.
PARTITIONED_FORMAT = "toolcat-vectors-9"
#: The partitioned formats a reader reads: this one, and ``toolcat-vectors-8`` (each row file holds its node rows).
READ_PARTITIONED_FORMATS = ("toolcat-vectors-8", PARTITIONED_FORMAT)
#: A centroid's codes: character ``n`` of this alphabet (base64url's) is the int4 code ``n - RESIDUAL_ZERO``.
RESIDUAL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
RESIDUAL_ZERO = 32
#: A row's residual codes: two differences ``a`` and ``b`` (each in ``PAIR_LOW .. PAIR_LOW + PAIR_LEVELS - 1``) a
#: character, character ``(a - PAIR_LOW) * PAIR_LEVELS + b - PAIR_LOW`` of this alphabet (printable ASCII from ``#``,
#: without ``\\``: JSON writes them as they are).
PAIR_ALPHABET = "".join(chr(c) for c in range(0x23, 0x7F) if chr(c) != "\\")[:81]
PAIR_LEVELS, PAIR_LOW = 9, -4
