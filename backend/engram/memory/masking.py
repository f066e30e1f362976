"""Secrets masked out of captured text before it reaches the vault.

A transcript holds what the agent saw: a pasted `.env`, a curl with its token, a key in a
tool's output. The raw ledger lives in the vault, which syncs and is read by other tools, so
captured text passes through `mask` first. Patterns are the well-known shapes of keys and
tokens (provider prefixes, JWTs, private key blocks, `Authorization: Bearer`, credentials in
URLs, `password=...` style assignments); a masked value becomes `[masked:KIND]`. Pure
functions, bounded: the regexes are linear and the text is capped by the caller.
"""

from __future__ import annotations

import re

_KEYS: tuple[tuple[str, str], ...] = (
    (
        "private-key",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)",
    ),
    ("anthropic", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("stripe", r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("gitlab", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("aws", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("google", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("slack", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("huggingface", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm", r"\bnpm_[A-Za-z0-9]{36}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
)
_FOUND = re.compile("|".join(f"(?P<{kind.replace('-', '_')}>{rx})" for kind, rx in _KEYS))
# a value after a secret-sounding name: keep the name, mask the value
_ASSIGNED = re.compile(
    r"(?i)(\b[\w.-]*(?:api[_-]?key|secret|token|password|passwd|pwd|credentials?|"
    r"access[_-]?key|private[_-]?key|auth)[\w.-]*[\"']?\s*[:=]\s*[\"']?)"
    r"([^\s\"'`,;]{8,})"
)
_BEARER = re.compile(r"(?i)(\b(?:bearer|token|basic)\s+)([A-Za-z0-9._~+/=-]{16,})")
_URL_CREDENTIALS = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)([^\s/@]+)(@)")


def mask(text: str) -> tuple[str, int]:
    """`text` with every secret-looking value replaced, and how many were."""
    count = 0

    def named(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        kind = (m.lastgroup or "secret").replace("_", "-")
        return f"[masked:{kind}]"

    def value(m: re.Match[str]) -> str:
        nonlocal count
        if m.group(2).startswith("[masked:"):
            return m.group(0)
        count += 1
        return f"{m.group(1)}[masked]" + (m.group(3) if m.lastindex == 3 else "")

    text = _FOUND.sub(named, text)
    text = _URL_CREDENTIALS.sub(value, text)
    text = _BEARER.sub(value, text)
    text = _ASSIGNED.sub(value, text)
    return text, count
