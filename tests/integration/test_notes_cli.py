"""`engram note ...` from the command line on a copy of the link-forms vault."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.conftest import EngramCli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "vaults"


def hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file()
    }


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / "linkforms", tmp_path / "linkforms"))


@pytest.fixture
def env(run: EngramCli, xdg: dict[str, str], vault: Path) -> dict[str, str]:
    env = {**xdg, "NO_COLOR": "1"}
    run(env, "collection", "add", str(vault), "--name", "coffee")
    return env


def test_move_previews_then_moves(run: EngramCli, env: dict[str, str], vault: Path) -> None:
    before = hashes(vault)
    preview = run(env, "note", "move", "Espresso Basics", "Guides/Brewing", "--dry-run")
    assert "+Slower than [[Guides/Brewing]]. Compare with [[Archive/Brewing]]." in preview.stdout
    assert (
        "dry run, nothing written: Topics/Espresso Basics.md -> Guides/Brewing.md; "
        "33 links rewritten in 7 notes" in preview.stdout
    )
    assert hashes(vault) == before
    done = run.json(env, "note", "move", "Espresso Basics", "Guides/Brewing")
    assert done["path"] == "Guides/Brewing.md" and done["linksRewritten"] == 33
    assert (vault / "Guides/Brewing.md").exists()
    backlinks = run.json(env, "graph", "backlinks", "Guides/Brewing.md")
    assert len(backlinks) == 33


def test_edit_with_a_stale_hash_fails_and_keeps_the_note(
    run: EngramCli, env: dict[str, str], vault: Path
) -> None:
    before = (vault / "Home.md").read_bytes()
    proc = run(env, "note", "edit", "Home", "--append", "x", "--expected-hash", "abcdef", ok=False)
    assert proc.returncode == 1
    assert "changed since it was read" in proc.stderr
    assert (vault / "Home.md").read_bytes() == before
    current = hashlib.sha256(before).hexdigest()
    out = run.json(
        env, "note", "edit", "Home", "--set", "rating=4", "--set", "tags=[coffee, home]",
        "--expected-hash", current[:8],
    )  # fmt: skip
    assert (
        out["changed"]
        and out["hash"] == hashlib.sha256((vault / "Home.md").read_bytes()).hexdigest()
    )
    home = (vault / "Home.md").read_text()
    assert home.startswith(
        '---\nrelated: "[[Espresso Basics]]"\nsee-also:\n'
        '  - "[[Topics/Espresso Basics#Extraction]]"\nrating: 4\ntags:\n- coffee\n- home\n---\n'
    )


def test_create_from_stdin_link_and_delete(
    run: EngramCli, env: dict[str, str], vault: Path
) -> None:
    made = run(env, "note", "create", "Recipes/Flat White", "--body", "-", stdin="Two shots.\n")
    assert made.stdout.startswith("created Recipes/Flat White.md")
    linked = run.json(
        env, "note", "link", "Recipes/Flat White", "Espresso Basics", "--section", "See also"
    )
    assert linked["changed"]
    assert (vault / "Recipes/Flat White.md").read_text() == (
        "Two shots.\n\n## See also\n- [[Espresso Basics]]\n"
    )
    gone = run(env, "note", "delete", "Recipes/Flat White.md")
    assert "moved to .trash/Recipes/Flat White.md" in gone.stdout
    assert (vault / ".trash/Recipes/Flat White.md").exists()
    missing = run(env, "note", "edit", "Recipes/Flat White", "--append", "x", ok=False)
    assert missing.returncode == 1 and "no note" in missing.stderr


def test_long_names_are_edited_and_too_long_ones_refused_without_a_traceback(
    run: EngramCli, env: dict[str, str], vault: Path
) -> None:
    name = "長" * 80  # 243 bytes with .md: the temporary file's name used to pass 255
    (vault / f"{name}.md").write_text("hi\n", encoding="utf-8")
    run(env, "note", "edit", f"{name}.md", "--append", "more")
    assert (vault / f"{name}.md").read_text(encoding="utf-8") == "hi\nmore\n"
    refused = run(env, "note", "create", "長" * 86, "--body", "x", ok=False)
    assert refused.returncode == 1 and "255 bytes" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_writes_over_the_size_limit_exit_1_naming_the_setting(
    run: EngramCli, env: dict[str, str], vault: Path
) -> None:
    small = {**env, "ENGRAM_MAX_FILE_BYTES": "100"}
    piped = run(small, "note", "create", "Big", "--body", "-", stdin="x" * 500, ok=False)
    assert piped.returncode == 1 and "max_file_bytes" in piped.stderr
    given = run(small, "note", "create", "Big", "--body", "x" * 500, ok=False)
    assert given.returncode == 1 and "max_file_bytes" in given.stderr
    assert not (vault / "Big.md").exists()
