"""Memory context says each fact once: a daily note's lines about facts the context holds
anyway are left out, and the budget they took goes to what it does not say yet."""

from __future__ import annotations

from engram.memory import context as ctx

DAILY = """**3 facts**: 2 decision, 1 lesson

## Decision (2)
- 09:00 [[Engram/decisions/stripe-1a2b3c4d|We chose Stripe]] — importance 0.90 (structural), by a
- 10:00 [[Engram/decisions/oat-5e6f7a8b|Oat milk only]] — importance 0.50 (potential), by a

## Lesson (1)
- 11:00 [[Engram/lessons/cache-9c0d1e2f|Warm the cache]] — importance 0.90 (structural), by a"""


def fact(ref: str, text: str, source: str = "structural") -> ctx.ContextItem:
    return ctx.ContextItem(source, f"- [decision|c=1.00|i=0.90] {text} ({ref})", 0.9, ref)


def test_a_daily_note_leaves_out_the_facts_the_context_already_says() -> None:
    stripe = fact("Engram/decisions/stripe-1a2b3c4d.md", "We chose Stripe")
    cache = fact("Engram/lessons/cache-9c0d1e2f.md", "Warm the cache")
    daily = ctx.ContextItem("daily", DAILY, 1.0, "Engram/daily/2026-03-05.md")
    chosen = ctx.fit([stripe, cache, daily], "default", 4000)
    said = next(it for it in chosen if it.source == "daily").text
    assert "Oat milk only" in said and "## Decision (2)" in said
    assert "We chose Stripe" not in said and "Warm the cache" not in said
    assert "## Lesson" not in said  # nothing left under it
    assert ctx.join(chosen).count("We chose Stripe") == 1


def test_the_budget_a_repeat_took_goes_to_what_is_not_said_yet() -> None:
    stripe = fact("Engram/decisions/stripe-1a2b3c4d.md", "We chose Stripe")
    daily = ctx.ContextItem("daily", DAILY, 1.0, "Engram/daily/2026-03-05.md")
    hit = ctx.ContextItem("search", "Pricing (Projects/Pricing.md): tiers " * 3, 0.5, "p.md")
    budget = stripe.tokens + daily.tokens + 10  # too little left for the hit, before
    chosen = ctx.fit([stripe, daily, hit], "default", budget)
    assert [it.source for it in chosen] == ["structural", "daily", "search"]
    assert chosen[-1] == hit and sum(it.tokens for it in chosen) <= budget


def test_other_items_and_a_daily_note_with_nothing_repeated_are_untouched() -> None:
    daily = ctx.ContextItem("daily", DAILY, 1.0, "Engram/daily/2026-03-05.md")
    note = ctx.ContextItem("search", "- [[Engram/decisions/stripe-1a2b3c4d|x]]", 0.5, "n.md")
    assert ctx.fit([daily, note], "default", 4000) == [daily, note]
