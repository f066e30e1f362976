"""Facts as notes, through the facade: store, adopt, edit both ways, supersede, archive."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from engram import config
from engram.codec import encode
from engram.errors import InvalidInputError, NotFoundError
from engram.memory import format as fmt
from engram.memory.notes import NoteConflict
from engram.service import Engram

PLUGIN_KEYS = {
    "id",
    "path",
    "title",
    "text",
    "factType",
    "importanceScore",
    "confidence",
    "lifecycleState",
    "tags",
    "entities",
    "supersededBy",
    "contradictsWith",
    "timestamp",
    "updatedAt",
    "syncState",
}


def read(vault: Path, rel: str) -> str:
    return (vault / rel).read_text(encoding="utf-8")


def test_init_registers_the_default_vault_and_writes_the_template(
    engram: Engram, vault: Path
) -> None:
    (vault / ".obsidian" / "templates.json").write_text('{"folder": "Meta/Templates"}')
    info = engram.init_vault(str(vault), facts_root="Memory")
    assert (info.name, info.facts_root, info.config_dir, info.is_default) == (
        "Brewline",
        "Memory",
        ".obsidian",
        True,
    )
    assert info.template == "Meta/Templates/new-fact.md" and info.template_status == "written"
    assert info.templates_source == ".obsidian/templates.json"
    assert "{{title}}" in read(vault, "Meta/Templates/new-fact.md")
    raw = yaml.safe_load(engram.settings.config_file.read_text())
    assert raw["vaults"] == {"Brewline": {"facts_root": "Memory", "config_dir": ".obsidian"}}
    assert raw["default_vault"] == "Brewline"
    assert raw["collections"]["Brewline"]["path"] == str(vault)
    (vault / "Meta/Templates/new-fact.md").write_text("mine\n")
    again = engram.init_vault(str(vault))  # same folder: same collection, template kept
    assert again.template_status == "kept" and again.facts_root == "Memory"
    assert read(vault, "Meta/Templates/new-fact.md") == "mine\n"
    fresh = Engram(config.resolve(os.environ))
    assert fresh.settings.default_vault == "Brewline"
    fresh.close()


def test_a_fact_is_a_readable_note(mem: Engram, vault: Path) -> None:
    fact = mem.fact_add(
        "We decided to pause the Starter plan after talking with Ana Ruiz.",
        tags=["pricing, #plans"],
        created_by="agent-7",
    )
    assert set(encode(fact)) >= PLUGIN_KEYS
    assert fact.fact_type == "decision" and fact.importance == 0.8 and fact.tier == "structural"
    assert fact.path.startswith("Engram/decisions/we-decided-to-pause-the-starter-plan-")
    assert fact.path.endswith(f"-{fact.id[:8]}.md")
    assert fact.text == "We decided to pause the Starter plan after talking with [[Ana Ruiz]]."
    assert fact.entities == ("Ana Ruiz",) and fact.tags == ("pricing", "plans")
    note = read(vault, fact.path)
    assert note.startswith(f"---\nid: {fact.id}\ntitle: We decided to pause")
    assert "timestamp: 2026-03-05T09:30:00Z\n" in note and '- "[[Ana Ruiz]]"\n' in note
    ledger = read(vault, "Engram/ledger/observations/2026/03/05.md")
    assert "- [decision|c=1.00|i=0.80] We decided to pause" in ledger
    assert ledger.rstrip().endswith(f"^fact-{fact.id[:8]}")
    daily = read(vault, "Engram/daily/2026-03-05.md")
    assert f"[[{fact.path[:-3]}|We decided to pause" in daily and "by agent-7" in daily
    assert mem.fact_get(fact.id[:6]) == mem.fact_get(fact.path) == mem.fact_get(fact.id)
    with pytest.raises(NotFoundError):
        mem.fact_get("ffffffff")
    with pytest.raises(InvalidInputError, match="unknown fact type"):
        mem.fact_add("x", fact_type="gossip")
    with pytest.raises(InvalidInputError, match="empty"):
        mem.fact_add("   ")
    odd = mem.fact_add("a NUL\x00 would make the note binary", title="t\x00itle\nsplit")
    assert odd.text == "a NUL would make the note binary" and odd.title == "title split"


def test_vault_settings_follow_the_collection_and_are_checked(
    mem: Engram, vault: Path, tmp_path: Path
) -> None:
    mem.collection_rename("Brewline", "brew")
    assert mem.settings.default_vault == "brew" and mem.settings.vault("brew") is not None
    assert mem.fact_add("Renamed vaults keep working.").path.startswith("Engram/")
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(config.ConfigError, match="facts_root"):
        mem.init_vault(str(other), facts_root="../outside")
    with pytest.raises(config.ConfigError, match="config_dir"):
        mem.init_vault(str(other), config_dir="obsidian")
    mem.collection_remove("brew")
    assert mem.settings.default_vault is None
    with pytest.raises(NotFoundError, match="engram init"):
        mem.fact_list()


def test_adopting_a_hand_made_note_keeps_its_text_byte_for_byte(mem: Engram, vault: Path) -> None:
    head = "---\nrating: 5   # stars\ncustom: [a,  b]\n---\n"
    body = "\n  I *learned* that cold brew needs 18 hours.  \r\n\n- keep   this\n\n\n"
    (vault / "Engram/lessons").mkdir(parents=True)
    (vault / "Engram/lessons/Cold brew.md").write_bytes((head + body).encode())
    report = mem.update()
    assert report.warnings == [] or all("Cold brew" not in w.path for w in report.warnings)
    text = read(vault, "Engram/lessons/Cold brew.md")
    assert text.startswith("---\nrating: 5   # stars\ncustom: [a,  b]\n")  # theirs, untouched
    assert (vault / "Engram/lessons/Cold brew.md").read_bytes().endswith(body.encode())
    fact = mem.fact_get("Engram/lessons/Cold brew.md")
    assert fact.fact_type == "lesson" and fact.title == "Cold brew"
    assert fact.created_by == "human" and fact.last_edited_by == "human"
    data = yaml.safe_load(text.split("---\n")[1])
    assert data["rating"] == 5 and data["custom"] == ["a", "b"] and data["id"] == fact.id
    mem.update()  # adopted once: nothing more is written
    assert read(vault, "Engram/lessons/Cold brew.md") == text


def test_notes_made_from_the_template_are_adopted_anywhere(mem: Engram, vault: Path) -> None:
    template = read(vault, "Templates/new-fact.md")
    filled = template.replace("{{title}}", "Roaster lead time").replace(
        "{{date:YYYY-MM-DD[T]HH:mm:ssZ}}", "2026-03-04T10:00:00+01:00"
    )
    (vault / "Inbox").mkdir()
    text = filled + "Casa Tostado promised delivery by Friday.\n"
    (vault / "Inbox/Roaster lead time.md").write_text(text)
    (vault / "Inbox/empty.md").write_text(template.replace("{{title}}", "x"))  # nothing written
    mem.update()
    fact = mem.fact_get("Inbox/Roaster lead time.md")
    assert fact.fact_type == "commitment" and fact.importance == 0.8
    assert fact.timestamp.isoformat() == "2026-03-04T09:00:00+00:00"
    assert fact.text == "Casa Tostado promised delivery by Friday."
    assert "id:" not in read(vault, "Templates/new-fact.md")  # the template is never a fact
    assert "id:" not in read(vault, "Inbox/empty.md")


def test_a_human_edit_is_the_truth(mem: Engram, vault: Path) -> None:
    fact = mem.fact_add("The grinder needs recalibration every 40 kg.")
    path = vault / fact.path
    path.write_text(
        path.read_text()
        .replace("importanceScore: 0.4", "importanceScore: 0.9")
        .replace("every 40 kg", "every 30 kg"),
        encoding="utf-8",
    )
    mem.update()
    again = mem.fact_get(fact.id)
    assert again.text == "The grinder needs recalibration every 30 kg."
    assert again.importance == 0.9 and again.last_edited_by == "human"
    assert mem.fact_list(tier_name="structural")[0].id == fact.id
    updated = mem.fact_update(fact.id, title="Grinder calibration")
    assert updated.last_edited_by == "system" and updated.text.endswith("every 30 kg.")


def test_supersede_and_contradict_are_written_on_both_notes(mem: Engram, vault: Path) -> None:
    old = mem.fact_add("We chose Stripe for payments.")
    other = mem.fact_add("Payments must settle within two days.", fact_type="steering_rule")
    result = mem.fact_supersede(old.id, "We chose Adyen for payments.")
    assert result.old.superseded_by == result.new.id and result.old.lifecycle == "merged"
    assert result.new.supersedes == old.id and result.new.fact_type == "decision"
    assert f"supersededBy: {result.new.id}" in read(vault, old.path)
    assert f"supersedes: {old.id}" in read(vault, result.new.path)
    third = mem.fact_add("Adyen settles in three days.", contradicts=[other.id])
    assert third.contradicts_with == (other.id,)
    assert mem.fact_get(other.id).contradicts_with == (third.id,)
    linked = mem.fact_supersede(other.id, by=third.id)
    assert linked.old.superseded_by == third.id and linked.new.supersedes == other.id
    assert [h.fact.id for h in mem.recall("payments").results if h.fact] == [result.new.id]
    with pytest.raises(InvalidInputError):
        mem.fact_supersede(third.id, "x", by=old.id)


def test_supersede_inherits_tags_entities_scope_and_type(mem: Engram) -> None:
    old = mem.fact_add(
        "Kenji Sato roasts the house blend on Tuesdays.",
        fact_type="commitment",
        tags=["ops", "roasting"],
        entities=["Casa Tostado"],
        scope="team",
    )
    assert old.entities == ("Casa Tostado", "Kenji Sato")  # given + mentioned
    new = mem.fact_supersede(old.id, "The house blend is roasted on Wednesdays now.").new
    assert (new.fact_type, new.tags, new.scope) == ("commitment", ("ops", "roasting"), "team")
    assert set(new.entities) == {"Casa Tostado", "Kenji Sato"}
    again = mem.fact_supersede(
        new.id, "Ana roasts on Thursdays.", tags=["weekly"], scope="ops", fact_type="decision"
    ).new
    assert (again.tags, again.scope, again.fact_type) == (("weekly",), "ops", "decision")
    assert set(again.entities) >= {"Casa Tostado", "Kenji Sato"}  # not given: inherited
    other = mem.fact_add("Roasting moves to the new site in May.")
    with pytest.raises(InvalidInputError, match="not --by"):
        mem.fact_supersede(again.id, by=other.id, tags=["x"])


def test_update_archive_and_prune_never_delete(mem: Engram, vault: Path) -> None:
    fact = mem.fact_add("Kenji likes light roasts.", tags=["people"])
    assert fact.fact_type == "preference" and fact.path.startswith("Engram/preferences/")
    path = vault / fact.path
    mine = path.read_text().replace("lastEditedBy: system", "lastEditedBy: system\nmine: yes")
    path.write_text(mine)
    mem.update()
    moved = mem.fact_update(fact.id, fact_type="relationship", importance=0.6, tags=["team"])
    assert moved.path == fact.path.replace("preferences", "people")
    assert not path.exists() and "mine: yes\n" in read(vault, moved.path)
    assert moved.tags == ("team",) and moved.importance == 0.6
    archived = mem.fact_archive(fact.id)
    assert archived.lifecycle == "archived" and archived.path == moved.path
    assert mem.recall("light roasts").results == ()
    hits = mem.recall("light roasts", states=("archived",)).results
    assert [h.fact.id for h in hits if h.fact] == [fact.id]
    pruned = mem.fact_archive(fact.id, prune=True)
    assert pruned.lifecycle == "pruned" and pruned.path.startswith("Engram/archive/people/")
    assert (vault / pruned.path).exists() and not (vault / moved.path).exists()


def test_a_conflicting_concurrent_edit_makes_a_conflict_copy(
    mem: Engram, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact = mem.fact_add("Cupping happens every Tuesday.")
    path = vault / fact.path
    real = fmt.changes_for

    def concurrent(*args: object) -> object:  # Obsidian saves while Engram computes
        path.write_text(path.read_text().replace("every Tuesday", "every Wednesday"))
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(fmt, "changes_for", concurrent)
    with pytest.raises(NoteConflict) as err:
        mem.fact_update(fact.id, importance=0.95)
    monkeypatch.undo()
    assert "every Wednesday" in path.read_text()  # the person's edit survives
    copy = vault / err.value.copy
    assert copy.name.startswith(path.stem + " (conflict 2026-03-05 ")
    assert "importanceScore: 0.95" in copy.read_text() and "every Tuesday" in copy.read_text()
    mem.update()
    assert mem.fact_get(fact.id).text == "Cupping happens every Wednesday."
    assert len(mem.fact_list()) == 1  # the copy is not a second fact


def test_fact_from_a_note_or_a_selection(mem: Engram, vault: Path) -> None:
    before = (vault / "Roasting Partners.md").read_bytes()
    picked = mem.fact_from_note("Roasting Partners.md", "Casa Tostado roasts medium.")
    assert picked.source == "[[Roasting Partners]]" and picked.text.startswith("[[Casa") is False
    assert (vault / "Roasting Partners.md").read_bytes() == before
    whole = mem.fact_from_note(str(vault / "Roasting Partners.md"), fact_type="fact")
    after = (vault / "Roasting Partners.md").read_bytes()
    assert after.endswith(before.split(b"---\n", 2)[2])  # body byte for byte
    assert after.startswith(before.split(b"---\n", 2)[1].join([b"---\n", b""]))
    assert whole.fact_type == "fact" and whole.path == "Roasting Partners.md"
    assert mem.fact_from_note("Roasting Partners.md").id == whole.id
    with pytest.raises(InvalidInputError):
        mem.fact_from_note("../outside.md")


def test_duplicate_ids_are_reported_not_merged(mem: Engram, vault: Path) -> None:
    fact = mem.fact_add("Espresso blend ships from Osaka.")
    (vault / "Engram/observations/copy.md").write_text(read(vault, fact.path))
    report = mem.update()
    assert any("copy.md" in w.path and "already" in w.message for w in report.warnings)
    assert mem.fact_get(fact.id).path == fact.path


def test_recall_counts_access_without_touching_the_note(
    mem: Engram, vault: Path, clock: Any
) -> None:
    fact = mem.fact_add("Nordic Bean Co. roasts light.")
    before = (vault / fact.path).stat().st_mtime_ns, read(vault, fact.path)
    mem.recall("Nordic")
    mem.recall("light roasts")
    assert mem.fact_get(fact.id).access_count == 2
    assert ((vault / fact.path).stat().st_mtime_ns, read(vault, fact.path)) == before
    clock.advance(days=31)
    assert [(c.id, c.new) for c in mem.fact_sweep()] == [(fact.id, "dormant")]
    assert "lifecycleState: dormant" in read(vault, fact.path)
    assert "updatedAt: 2026-03-05T09:30:00Z" in read(vault, fact.path)  # not a content change
    assert mem.fact_sweep() == []
    mem.recall("Nordic")  # recalled again: back to active on the next sweep
    assert [c.new for c in mem.fact_sweep(dry_run=True)] == ["active"]
    assert "lifecycleState: dormant" in read(vault, fact.path)
    assert [c.new for c in mem.fact_sweep()] == ["active"]
    assert json.loads(json.dumps(encode(mem.fact_get(fact.id))))["lifecycleState"] == "active"


@pytest.mark.parametrize(("value", "expected"), [(None, 0.30), (0.5, 0.5), ("0", 0.0), (1, 1.0)])
def test_min_similarity_setting(
    xdg: dict[str, str], tmp_path: Path, value: object, expected: float
) -> None:
    path = tmp_path / "engram.yml"
    path.write_text(
        "memory:\n  half_life_days: 10\n"
        + (f"  min_similarity: {value}\n" if value is not None else "")
    )
    settings = config.resolve(os.environ, config_file=path)
    assert settings.memory.min_similarity == expected and settings.memory.half_life_days == 10


@pytest.mark.parametrize(("value", "message"), [("1.5", "from 0 to 1"), ("high", "a number")])
def test_min_similarity_setting_is_checked(
    xdg: dict[str, str], tmp_path: Path, value: str, message: str
) -> None:
    path = tmp_path / "engram.yml"
    path.write_text(f"memory:\n  min_similarity: {value}\n")
    with pytest.raises(config.ConfigError, match=f"memory.min_similarity must be .*{message}"):
        config.resolve(os.environ, config_file=path)
