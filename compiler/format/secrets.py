"""Secrets are referenced by name: what a reference looks like, and what a literal secret looks like.

A catalogue is published (a CDN, the docs site's "Full spec JSON"), so a handler names the
environment variable that holds a secret (``${GITHUB_TOKEN}`` in an ``env`` value, ``auth.env``
for http handlers) and the host reads it when the tool runs. The build refuses literal values
that look like secrets (:func:`looks_like_secret`): a known token prefix, or a key whose name
says it holds one.
"""

from __future__ import annotations

import re

#: ``${NAME}``: a value read from the host's environment when the tool runs.
ENV_REFERENCE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
#: Prefixes of well-known credentials (GitHub, GitLab, Slack, OpenAI/Anthropic/Stripe, AWS, Google, JWTs, PEM keys).
_TOKEN_SHAPES = re.compile(
    r"(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|glpat-[A-Za-z0-9_-]{16,}|xox[abprs]-[A-Za-z0-9-]{8,}"
    r"|\bsk-[A-Za-z0-9_-]{16,}|\b[sr]k_(live|test)_[A-Za-z0-9]{8,}|\bA[KS]IA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|\b(Bearer|Basic|token)\s+\S{8,})"
)
#: Names of keys (env variables, headers) that hold secrets.
_SECRET_NAMES = re.compile(
    r"(TOKEN|SECRET|PASSW|PASSPHRASE|API_?KEY|APIKEY|AUTH|CREDENTIAL|PRIVATE|COOKIE|SESSION)", re.IGNORECASE
)
#: A value this short under a secret-sounding name is a placeholder or a flag, not a credential.
MIN_SECRET_CHARS = 8


def is_reference(value: object) -> bool:
    """True when ``value`` is a ``${NAME}`` reference."""
    return isinstance(value, str) and ENV_REFERENCE.match(value) is not None


def looks_like_secret(key: str, value: object) -> bool:
    """True when ``value`` (under ``key``) looks like a literal credential rather than a reference or a setting."""
    if not isinstance(value, str) or is_reference(value):
        return False
    if _TOKEN_SHAPES.search(value):
        return True
    return bool(_SECRET_NAMES.search(key)) and len(value) >= MIN_SECRET_CHARS and " " not in value.strip()
