"""Secrets masked out of captured transcripts (memory/masking.py)."""

from __future__ import annotations

import pytest

from engram.memory.masking import mask

KEY = "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0"


@pytest.mark.parametrize(
    ("text", "masked", "gone"),
    [
        (f"export ANTHROPIC_API_KEY=sk-ant-api03-{KEY}", "[masked:anthropic]", KEY),
        (f"OPENAI_API_KEY=sk-proj-{KEY}", "[masked:openai]", KEY),
        (f"stripe sk_live_{KEY[:24]}", "[masked:stripe]", KEY[:24]),
        (f"token ghp_{KEY[:36]}", "[masked:github]", KEY[:36]),
        (f"glpat-{KEY[:20]}", "[masked:gitlab]", KEY[:20]),
        ("aws AKIAIOSFODNN7EXAMPLE here", "[masked:aws]", "AKIAIOSFODNN7EXAMPLE"),
        (f"AIza{KEY[:35]}", "[masked:google]", KEY[:35]),
        ("xoxb-123456789012-abcdefghij", "[masked:slack]", "123456789012"),
        (f"hf_{KEY[:34]}", "[masked:huggingface]", KEY[:34]),
        (
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
            "[masked:jwt]",
            "dozjgNryP4J3jVmNHl0w5N",
        ),
        (
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
            "-----END OPENSSH PRIVATE KEY-----",
            "[masked:private-key]",
            "b3BlbnNzaC1rZXk",
        ),
        ('curl -H "Authorization: Bearer abcdef0123456789xyz"', "Bearer [masked]", "abcdef0123"),
        ("postgres://ana:hunter2hunter2@db:5432/app", "ana:[masked]@db", "hunter2"),
        ('db_password = "correct-horse-battery"', 'db_password = "[masked]', "correct-horse"),
        ("SECRET_TOKEN: 9f8e7d6c5b4a3f2e1d0c", "SECRET_TOKEN: [masked]", "9f8e7d6c5b4a"),
    ],
)
def test_secrets_are_masked(text: str, masked: str, gone: str) -> None:
    out, count = mask(text)
    assert masked in out and gone not in out and count >= 1


@pytest.mark.parametrize(
    "text",
    [
        "We decided to rotate the API keys every quarter.",
        "the token is short",
        "password: tiny",
        "Ask Ana for the secret sauce recipe",
        "see https://example.com/docs:8080/page",
        "sk-short",
    ],
)
def test_ordinary_text_is_kept(text: str) -> None:
    assert mask(text) == (text, 0)
