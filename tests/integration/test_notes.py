"""Note writes through the facade on real vaults: moves that keep every link working, and the
safety rules (preconditions, dry runs, the trash, concurrent writers)."""

from __future__ import annotations

import hashlib
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from engram.errors import ConflictError, InvalidInputError, NotFoundError
from engram.service import Engram

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vaults"


def load(engram: Engram, tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    engram.collection_add(str(root), "v")
    engram.update()
    return root


def files(root: Path) -> dict[str, bytes]:
    """Every file of the vault, hidden ones included."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def hashes(root: Path) -> dict[str, str]:
    return {k: hashlib.sha256(v).hexdigest() for k, v in files(root).items()}


def link_state(engram: Engram, rename: tuple[str, str] | None = None) -> list[tuple[Any, ...]]:
    """Every stored link: its note, line, form and where it resolves (paths renamed)."""
    old, new = rename or ("", "")
    rows = engram.db.conn.execute(
        "SELECT d.path, l.line, l.kind, l.embed, l.heading, l.block, l.display,"
        " l.resolved_path, l.heading_ok, l.block_ok FROM links l"
        " JOIN documents d ON d.id = l.doc_id"
    )
    out = [
        (new if r[0] == old else r[0], *r[1:7], new if r[7] == old else r[7], *r[8:]) for r in rows
    ]
    return sorted(out, key=repr)


def renamed(rows: list[tuple[Any, ...]], old: str, new: str) -> list[tuple[Any, ...]]:
    return sorted((tuple(new if x == old else x for x in row) for row in rows), key=repr)


def changed_lines(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, list[str]]:
    out = {}
    for path, data in after.items():
        if path in before and before[path] != data:
            old = before[path].decode().split("\n")
            new = data.decode().split("\n")
            assert len(old) == len(new), path
            out[path] = [f"{a} => {b}" for a, b in zip(old, new, strict=True) if a != b]
    return out


def test_moving_a_note_in_the_example_vault_changes_only_its_links(
    engram: Engram, tmp_path: Path
) -> None:
    root = load(engram, tmp_path, "example")
    before, links = files(root), link_state(engram)
    old, new = "Projects/Pricing Model.md", "Archive/Pricing 2024.md"
    result = engram.note_move("Projects/Pricing Model", "Archive/Pricing 2024")
    after = files(root)
    assert result.changed and result.path == new and result.old_path == old
    assert result.links_rewritten == 4
    assert set(after) == set(before) - {old} | {new}
    assert after[new] == before[old]
    assert changed_lines(before, after) == {
        "Home.md": [
            "- Current work: [[Projects/Pricing Model|pricing]], [[Projects/Mobile App]], "
            "[[Roasting Partners]] => - Current work: [[Archive/Pricing 2024|pricing]], "
            "[[Projects/Mobile App]], [[Roasting Partners]]"
        ],
        "Meetings/2024-05-06 Weekly Sync.md": [
            "We agreed to launch the tiered plans ([[Projects/Pricing Model#^tiers]]). => "
            "We agreed to launch the tiered plans ([[Archive/Pricing 2024#^tiers]])."
        ],
        "People/Ana Ruiz.md": [
            "Owns growth and the [[Projects/Pricing Model]]. Prefers decisions written down as "
            "notes. => Owns growth and the [[Archive/Pricing 2024]]. Prefers decisions written "
            "down as notes."
        ],
        "Projects/Mobile App.md": [
            "- Should the pricing page embed the plan table? ![[Projects/Pricing Model#Decision]]"
            " => - Should the pricing page embed the plan table? "
            "![[Archive/Pricing 2024#Decision]]"
        ],
    }
    assert link_state(engram, (old, new)) == renamed(links, old, new)  # same files, same anchors
    backlinks = engram.backlinks(new, "v").links
    assert sorted({b.path for b in backlinks}) == [
        "Home.md",
        "Meetings/2024-05-06 Weekly Sync.md",
        "People/Ana Ruiz.md",
        "Projects/Mobile App.md",
    ]


def test_a_relative_markdown_link_follows_its_note(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "example")
    engram.note_move("Reference/Cupping Protocol.md", "Coffee/Cupping Guide")
    text = (root / "Roasting Partners.md").read_text()
    assert "[cupping protocol](Coffee/Cupping%20Guide.md)" in text


@pytest.mark.parametrize(
    ("new", "rewritten", "home_line"),
    [
        ("Topics/Shot Guide.md", 32, "Plain: [[Shot Guide]], lower case: [[Shot Guide]], "),
        ("Guides/Brewing.md", 33, "Plain: [[Guides/Brewing]], lower case: [[Guides/Brewing]], "),
        ("Guides/Espresso Basics.md", 13, "Plain: [[Espresso Basics]], lower case: "),
    ],
)
def test_every_link_form_keeps_working_after_a_move(
    engram: Engram, tmp_path: Path, new: str, rewritten: int, home_line: str
) -> None:
    root = load(engram, tmp_path, "linkforms")
    old = "Topics/Espresso Basics.md"
    before, links = files(root), link_state(engram)
    unresolved = sorted((u.source, u.target, u.line) for u in engram.unresolved("v", True))
    touched = {r[0] for r in links if r[7] == old} | {old}
    preview = engram.note_move(old, new, dry_run=True)
    result = engram.note_move(old, new)
    after = files(root)
    assert result.links_rewritten == rewritten
    assert [(f.path, f.after_hash, f.diff) for f in result.files] == [
        (f.path, f.after_hash, f.diff) for f in preview.files
    ]  # the preview was the move
    assert link_state(engram, (old, new)) == renamed(links, old, new)
    assert sorted((u.source, u.target, u.line) for u in engram.unresolved("v", True)) == unresolved
    assert any(line.startswith(home_line) for line in after["Home.md"].decode().split("\n"))
    for path, data in after.items():  # nothing else changed, byte for byte
        if path not in touched | {new, "Guides/Pour Over.md"}:
            assert before[path] == data, path
    home = changed_lines(before, after).get("Home.md", [])
    assert not [line for line in home if "Never touched" in line or "in a fence" in line]
    assert after[".trash/Topics/Espresso Basics.md"] == before[".trash/Topics/Espresso Basics.md"]


def test_the_new_name_does_not_capture_another_notes_link(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "linkforms")
    engram.note_move("Topics/Espresso Basics.md", "Guides/Brewing.md")
    text = (root / "Guides/Pour Over.md").read_text()
    assert (
        text == "# Pour Over\n\nSlower than [[Guides/Brewing]]. Compare with [[Archive/Brewing]].\n"
    )


def test_moving_an_attachment_rewrites_its_embeds(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "linkforms")
    result = engram.note_move("attachments/crema.png", "media/")
    assert result.path == "media/crema.png"
    text = (root / "Gallery.md").read_text()
    assert text == (
        "# Gallery\n\n![[crema.png]] and ![[media/crema.png|200]] and ![crema](media/crema.png).\n"
    )


def test_a_stale_precondition_refuses_every_write(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "linkforms")
    seen = engram.note_edit("Topics/Grinder.md", append="x", dry_run=True).files[0].before_hash
    before = hashes(root)
    stale = "0" * 64
    attempts = [
        lambda: engram.note_edit("Topics/Grinder.md", append="y", expected_hash=stale),
        lambda: engram.note_move("Topics/Grinder.md", "G/Grinder.md", expected_hash=stale),
        lambda: engram.note_delete("Topics/Grinder.md", expected_hash=stale[:8]),
        lambda: engram.note_link("Topics/Grinder.md", "Home", expected_hash=stale),
    ]
    for attempt in attempts:
        with pytest.raises(ConflictError, match="changed since it was read"):
            attempt()
    assert hashes(root) == before
    # a docid (6 hex digits) of the current version is a valid precondition
    current = hashlib.sha256((root / "Topics/Grinder.md").read_bytes()).hexdigest()
    assert seen == current
    engram.note_edit("Topics/Grinder.md", append="z", expected_hash=current[:6])
    assert (root / "Topics/Grinder.md").read_text().endswith("z\n")
    with pytest.raises(InvalidInputError):
        engram.note_edit("Topics/Grinder.md", append="z", expected_hash="abc")


def test_a_note_changed_after_reading_is_not_overwritten(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "example")
    seen = engram.note_edit("Home.md", append="agent line", dry_run=True)
    (root / "Home.md").write_text((root / "Home.md").read_text() + "person's line\n")
    with pytest.raises(ConflictError):
        engram.note_edit("Home.md", append="agent line", expected_hash=seen.files[0].before_hash)
    assert (root / "Home.md").read_text().endswith("person's line\n")


@pytest.mark.parametrize(
    "operation",
    [
        lambda e: e.note_create(
            "New/Idea.md", body="hi", frontmatter={"tags": ["x"]}, dry_run=True
        ),
        lambda e: e.note_edit("Home", append="x", properties={"status": "done"}, dry_run=True),
        lambda e: e.note_edit("Home", heading="Home", section="replaced", dry_run=True),
        lambda e: e.note_move("Topics/Espresso Basics.md", "Guides/Brewing", dry_run=True),
        lambda e: e.note_delete("Topics/Espresso Basics.md", dry_run=True),
        lambda e: e.note_link("Espresso", "Topics/Grinder.md", dry_run=True),
    ],
)
def test_a_dry_run_changes_nothing_on_disk(engram: Engram, tmp_path: Path, operation: Any) -> None:
    root = load(engram, tmp_path, "linkforms")
    before = hashes(root)
    result = operation(engram)
    assert result.dry_run and result.changed and result.diff.startswith("--- ")
    assert hashes(root) == before


def index_rows(engram: Engram) -> dict[str, list[Any]]:
    """What the index holds about notes, links and files, and when it was last updated."""
    conn = engram.db.conn
    tables = ("documents", "links", "vault_files", "meta")
    return {t: sorted(map(tuple, conn.execute(f"SELECT * FROM {t}")), key=repr) for t in tables}


def test_a_dry_run_move_leaves_the_index_alone_and_still_sees_unindexed_edits(
    engram: Engram, tmp_path: Path
) -> None:
    root = load(engram, tmp_path, "linkforms")
    # Edits the index has not seen: a changed note, a new note and a deleted one, all
    # involving links to the note about to move.
    with (root / "Home.md").open("a") as f:
        f.write("\nAlso read [[Espresso Basics]] first.\n")
    (root / "Journal" / "Fresh.md").write_text("# Fresh\n\nSee [[Topics/Espresso Basics]].\n")
    (root / "Archive" / "Brewing.md").unlink()  # it linked to the note; [[Brewing]] dangles
    before_disk, before_index = hashes(root), index_rows(engram)
    changes = engram.db.conn.total_changes

    preview = engram.note_move("Topics/Espresso Basics.md", "Guides/Brewing", dry_run=True)

    assert hashes(root) == before_disk
    assert engram.db.conn.total_changes == changes  # not one row written...
    assert index_rows(engram) == before_index  # ...and nothing else changed in the index
    touched = {f.path for f in preview.files}
    assert {"Home.md", "Journal/Fresh.md"} <= touched  # edits made since the last update
    assert "Archive/Brewing.md" not in touched  # gone from disk: nothing to rewrite
    done = engram.note_move("Topics/Espresso Basics.md", "Guides/Brewing")
    assert [(f.action, f.path, f.after_hash, f.diff) for f in done.files] == [
        (f.action, f.path, f.after_hash, f.diff) for f in preview.files
    ]
    assert done.links_rewritten == preview.links_rewritten


def test_delete_moves_the_note_to_the_trash_and_it_can_be_restored(
    engram: Engram, tmp_path: Path
) -> None:
    root = load(engram, tmp_path, "linkforms")
    original = (root / "Topics/Espresso Basics.md").read_bytes()
    result = engram.note_delete("Espresso Basics")
    trash = ".trash/Topics/Espresso Basics 2.md"  # the first trash name was taken
    assert result.path == trash and result.old_path == "Topics/Espresso Basics.md"
    assert (root / trash).read_bytes() == original
    assert not (root / "Topics/Espresso Basics.md").exists()
    assert "Home.md" in result.broken_links and "Topics/Grinder.md" in result.broken_links
    assert engram.search("ristretto lungo") == []  # gone from the index at once
    (root / trash).rename(root / "Topics/Espresso Basics.md")  # restore by hand
    engram.update()
    assert [r.path for r in engram.search("ristretto lungo")] == ["Topics/Espresso Basics.md"]


def race(clients: list[tuple[Engram, str]], call: Any) -> dict[str, str]:
    """Run `call(client, name)` for each client at the same moment; "ok" or "conflict"."""
    results: dict[str, str] = {}
    barrier = threading.Barrier(len(clients))

    def run(client: Engram, name: str) -> None:
        barrier.wait()
        try:
            call(client, name)
            results[name] = "ok"
        except ConflictError:
            results[name] = "conflict"

    threads = [threading.Thread(target=run, args=pair) for pair in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return results


def test_concurrent_edits_from_two_clients_never_lose_one_silently(
    engram: Engram, tmp_path: Path
) -> None:
    root = load(engram, tmp_path, "example")
    other = Engram(engram.settings)
    try:
        for round_ in range(15):
            seen = hashlib.sha256((root / "Home.md").read_bytes()).hexdigest()
            results = race(
                [(engram, "a"), (other, "b")],
                lambda client, name, r=round_, h=seen: client.note_edit(
                    "Home.md", append=f"{name}-{r}", expected_hash=h
                ),
            )
            assert sorted(results.values()) == ["conflict", "ok"]
            text = (root / "Home.md").read_text()
            winner = next(n for n, r in results.items() if r == "ok")
            loser = next(n for n, r in results.items() if r == "conflict")
            assert f"{winner}-{round_}" in text and f"{loser}-{round_}" not in text
    finally:
        other.close()


def test_concurrent_edits_without_a_hash_keep_every_accepted_edit(
    engram: Engram, tmp_path: Path
) -> None:
    """With no expected hash, the version each client read is still the precondition."""
    root = load(engram, tmp_path, "example")
    other = Engram(engram.settings)
    try:
        for round_ in range(10):
            results = race(
                [(engram, "a"), (other, "b")],
                lambda client, name, r=round_: client.note_edit("Home.md", append=f"{name}+{r}"),
            )
            text = (root / "Home.md").read_text()
            assert "ok" in results.values()
            for name, outcome in results.items():
                assert (f"{name}+{round_}" in text) == (outcome == "ok")
    finally:
        other.close()


def test_create_edit_and_link_are_indexed_at_once(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "example")
    made = engram.note_create(
        title="Cold Brew: Recipe", folder="Recipes", body="Steep overnight.",
        frontmatter={"tags": ["recipe"], "serves": 4},
    )  # fmt: skip
    assert made.path == "Recipes/Cold Brew Recipe.md"
    assert (root / made.path).read_text() == (
        "---\ntags:\n- recipe\nserves: 4\n---\nSteep overnight.\n"
    )
    assert [r.path for r in engram.search("steep overnight")] == [made.path]
    with pytest.raises(ConflictError):
        engram.note_create(made.path)
    linked = engram.note_link("Home", "Cold Brew Recipe")
    assert (root / "Home.md").read_text().endswith("\n## Related\n- [[Cold Brew Recipe]]\n")
    again = engram.note_link("Home", made.path)
    assert not again.changed and again.files == ()
    assert [b.path for b in engram.backlinks(made.path, "v").links] == ["Home.md"]
    assert linked.hash == hashlib.sha256((root / "Home.md").read_bytes()).hexdigest()


def test_properties_change_without_touching_other_keys(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "example")
    path = "Projects/Pricing Model.md"
    engram.note_edit(
        path, properties={"status": "done", "reviewed": True}, remove_properties=["date"]
    )
    text = (root / path).read_text()
    assert text.startswith(
        '---\nstatus: done\ntype: decision\nowner: "[[People/Ana Ruiz]]"\n'
        "tags: [project, area/business]\nreviewed: true\n---\n# Pricing Model\n"
    )


def test_find_replace_and_sections(engram: Engram, tmp_path: Path) -> None:
    root = load(engram, tmp_path, "example")
    path = "Projects/Pricing Model.md"
    result = engram.note_edit(path, find=r"(\d+) EUR", replace=r"€\1", regex=True)
    assert result.replacements == 3
    engram.note_edit(path, heading="Options", section="Only one option now.")
    engram.note_edit(path, heading="Decision", append="Reviewed in May.")
    text = (root / path).read_text()
    assert "| Starter | 1 | €14 |" in text
    assert "## Options\nOnly one option now.\n\n## Decision\n" in text
    assert text.rstrip().endswith("```\nReviewed in May.")
    assert engram.search("reviewed in may")[0].path == path


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda e: e.note_edit("../outside.md", append="x"), InvalidInputError),
        (lambda e: e.note_create("../outside.md"), InvalidInputError),
        (lambda e: e.note_move("Home.md", "../../escape.md"), InvalidInputError),
        (lambda e: e.note_edit(".obsidian/app.json", append="x"), InvalidInputError),
        (lambda e: e.note_edit("attachments/logo.png", append="x"), InvalidInputError),
        (lambda e: e.note_edit("No Such Note", append="x"), NotFoundError),
        (lambda e: e.note_edit("Home", heading="Nope", section="x"), NotFoundError),
        (lambda e: e.note_edit("Home"), InvalidInputError),
        (lambda e: e.note_move("Home.md", "People/Ana Ruiz.md"), ConflictError),
        (lambda e: e.note_edit("Pric", append="x"), NotFoundError),  # no partial matches
    ],
)
def test_bad_requests_are_refused_and_change_nothing(
    engram: Engram, tmp_path: Path, call: Any, error: type[Exception]
) -> None:
    root = load(engram, tmp_path, "example")
    before = hashes(root)
    with pytest.raises(error):
        call(engram)
    assert hashes(root) == before
    assert not (tmp_path / "outside.md").exists() and not (tmp_path / "escape.md").exists()
