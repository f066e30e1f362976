"""A vault in a language the embedder does not serve is told which model does (issue 17)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram import config
from engram.codec import encode
from engram.index import languages
from engram.service import Engram
from tests.conftest import EngramCli, write_tree

GERMAN = (
    "# {n}\n\nObsidian speichert Notizen als reine Markdown-Dateien in einem Ordner, dem "
    "Tresor. Du kannst ihn zwischen zwei Rechnern synchronisieren und Sicherungen anlegen.\n"
)
ENGLISH = (
    "# {n}\n\nObsidian stores notes as plain Markdown files in a folder, the vault. You can "
    "sync it between two computers and keep backups of it.\n"
)
FIX = "engram embed --model multilingual"


def vault_of(root: Path, german: int, english: int) -> Path:
    files = {f"de{i}.md": GERMAN.format(n=f"Notiz {i}") for i in range(german)}
    files |= {f"en{i}.md": ENGLISH.format(n=f"Note {i}") for i in range(english)}
    files["todo.md"] = "- [ ] milk\n- [ ] eggs\n"  # too little prose to tell
    return write_tree(root, files)


def facade(embed: str) -> Engram:
    return Engram(config.resolve({**os.environ, "ENGRAM_EMBED_MODEL": embed}))


def test_status_and_doctor_name_the_fix_for_a_german_vault(xdg: dict[str, str], tmp_path: Path):
    with facade("default") as engram:
        engram.collection_add(str(vault_of(tmp_path / "v", german=6, english=4)), "notes")
        engram.update()
        report = encode(engram.status())["languages"]
        assert report["languages"] == {"de": 6, "en": 4}
        assert report["undetermined"] == 1 and report["unserved"] == 6
        assert "German" in report["advice"] and FIX in report["advice"]
        check = next(c for c in engram.doctor() if c.name == "note languages")
        assert check.status == "warn" and FIX in (check.fix or "")
    with facade("multilingual") as engram:  # the fix: no advice once the model serves them
        assert encode(engram.status())["languages"]["advice"] is None
        check = next(c for c in engram.doctor() if c.name == "note languages")
        assert check.status == "ok"


def test_a_few_foreign_notes_are_not_a_pattern(xdg: dict[str, str], tmp_path: Path) -> None:
    with facade("default") as engram:
        engram.collection_add(str(vault_of(tmp_path / "v", german=2, english=30)), "notes")
        engram.update()
        report = encode(engram.status())["languages"]
        assert report["unserved"] == 2 and report["advice"] is None


def test_embed_records_languages_and_a_changed_note_is_looked_at_again(
    xdg: dict[str, str], tmp_path: Path, tiny
) -> None:
    """`update` stays fast (no identification); `embed` records them; a report made before
    estimates from a sample of the notes not looked at yet."""
    vault = vault_of(tmp_path / "v", german=3, english=1)
    with facade(str(tiny.embed)) as engram:
        engram.collection_add(str(vault), "notes")
        engram.update()
        before = encode(languages.report(engram.db.conn, "default"))
        assert before["pending"] == 5 and before["languages"] == {"de": 3, "en": 1}
        if not engram.db.vec_available:
            pytest.skip("sqlite-vec unavailable: embed cannot run")
        engram.embed()
        after = encode(engram.status())["languages"]
        assert after["pending"] == 0 and after["languages"] == {"de": 3, "en": 1}
        (vault / "en0.md").write_text(GERMAN.format(n="Jetzt deutsch"), encoding="utf-8")
        engram.update()
        assert encode(engram.status())["languages"]["pending"] == 1
        assert languages.backfill(engram.db) == 1
        assert encode(engram.status())["languages"]["languages"] == {"de": 4}


def test_collection_add_suggests_the_multilingual_model(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
):
    vault = vault_of(tmp_path / "v", german=5, english=0)
    env = {**xdg, "ENGRAM_EMBED_MODEL": "default", "NO_COLOR": "1"}
    out = run(env, "collection", "add", str(vault), "--name", "notes")
    assert "German" in out.stderr and FIX in out.stderr
    status = run(env, "status")
    assert FIX in status.stdout


@pytest.mark.parametrize("embed", ["multilingual", "off"])
def test_no_advice_when_served_or_semantic_search_is_off(
    xdg: dict[str, str], tmp_path: Path, embed: str
) -> None:
    with facade(embed) as engram:
        engram.collection_add(str(vault_of(tmp_path / "v", german=5, english=0)), "notes")
        engram.update()
        assert encode(engram.status())["languages"]["advice"] is None


def test_a_report_identifies_its_sample_once_while_the_index_is_unchanged(
    xdg: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Status is polled every few seconds: the sample of notes not looked at yet is identified
    again only after the index changed, and the report then follows the change."""
    vault = vault_of(tmp_path / "v", german=3, english=2)
    calls: list[str] = []
    detect = languages.language.detect
    monkeypatch.setattr(languages.language, "detect", lambda t: calls.append(t) or detect(t))
    with facade("default") as engram:
        engram.collection_add(str(vault), "notes")
        engram.update()
        first = encode(engram.status())["languages"]
        looked = len(calls)
        assert looked == 6 and first["languages"] == {"de": 3, "en": 2}
        assert encode(engram.status())["languages"] == first
        assert len(calls) == looked
        (vault / "en0.md").write_text(GERMAN.format(n="Jetzt deutsch"), encoding="utf-8")
        engram.update()
        assert encode(engram.status())["languages"]["languages"] == {"de": 4, "en": 1}
        assert len(calls) == 2 * looked


def test_identifying_languages_reports_each_committed_batch_and_can_stop_there(
    xdg: dict[str, str], tmp_path: Path, tiny
) -> None:
    """An index job may stop between batches for a write (the first run over 3,000 notes
    takes ~2 s): each batch is committed before the callback, so what it did is kept."""
    vault = vault_of(tmp_path / "v", german=150, english=100)  # 251 notes: 3 batches
    with facade(str(tiny.embed)) as engram:
        engram.collection_add(str(vault), "notes")
        engram.update()
        seen: list[tuple[str, int, int]] = []

        def stop_after_first(phase: str, done: int, total: int) -> None:
            seen.append((phase, done, total))
            raise InterruptedError

        with pytest.raises(InterruptedError):
            languages.backfill(engram.db, stop_after_first)
        assert seen == [("languages", languages.BATCH, 251)]
        pending = languages.report(engram.db.conn, "default").pending
        assert pending == 251 - languages.BATCH  # the first batch stayed
        calls: list[tuple[str, int, int]] = []
        assert languages.backfill(engram.db, lambda *c: calls.append(c)) == pending
        assert calls[-1] == ("languages", pending, pending) and len(calls) == 2


def config_of(xdg: dict[str, str]) -> dict[str, object]:
    return config.load_config_file(Path(xdg["XDG_CONFIG_HOME"]) / "engram" / "index.yml")


def test_init_gives_a_mostly_german_vault_the_multilingual_model(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
) -> None:
    """`init` chooses the model for the vault and says so; an English vault keeps the default,
    a mixed one keeps it too and is told the command that switches."""
    env = {**xdg, "NO_COLOR": "1"}
    out = run(env, "init", str(vault_of(tmp_path / "de", german=8, english=2)))
    assert "8 of 11 notes are in German: the embedding model is multilingual" in out.stdout
    assert config_of(xdg)["models"] == {"embed": "multilingual"}
    assert FIX not in out.stderr  # chosen, so nothing left to advise
    info = run.json(env, "status")["languages"]
    assert info["advice"] is None


def test_init_keeps_the_english_model_and_recommends_for_a_mixed_vault(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
) -> None:
    env = {**xdg, "NO_COLOR": "1"}
    out = run(env, "init", str(vault_of(tmp_path / "mixed", german=4, english=6)))
    assert "embedding model is multilingual" not in out.stdout
    assert "German" in out.stderr and FIX in out.stderr
    assert "models" not in config_of(xdg)
    english = run.json(env, "init", str(vault_of(tmp_path / "en", german=0, english=9)))
    assert english["embedModelChosen"] is None and "models" not in config_of(xdg)


def test_init_leaves_a_chosen_model_alone(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path
) -> None:
    env = {**xdg, "ENGRAM_EMBED_MODEL": "default", "NO_COLOR": "1"}
    out = run(env, "init", str(vault_of(tmp_path / "de", german=8, english=2)))
    assert "embedding model is multilingual" not in out.stdout and FIX in out.stderr
    assert "models" not in config_of(xdg)


def test_embed_recommends_the_multilingual_model_for_a_german_vault(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path, tiny
) -> None:
    """`embed --model` switches (a MiniLM-named model is judged English-only by its name) and
    embeds; afterwards the German notes are named with the one command that fixes it."""
    english_only = tmp_path / "tiny-minilm.gguf"
    english_only.write_bytes(tiny.embed.read_bytes())
    env = {**xdg, "NO_COLOR": "1"}
    run(env, "collection", "add", str(vault_of(tmp_path / "v", 6, 1)), "-n", "notes", "--no-index")
    run(env, "update")
    out = run(env, "embed", "--model", str(english_only), ok=False)
    if out.returncode and "sqlite-vec" in out.stderr:
        pytest.skip("sqlite-vec unavailable: embed cannot run")
    assert out.returncode == 0, out.stderr
    assert config_of(xdg)["models"] == {"embed": str(english_only)}
    assert "passages embedded" in out.stdout
    assert "6 of 7 notes (86%) are in German" in out.stderr and FIX in out.stderr
    refused = run({**env, "ENGRAM_EMBED_MODEL": "default"}, "embed", "--model", "x", ok=False)
    assert refused.returncode != 0 and "ENGRAM_EMBED_MODEL is set" in refused.stderr


@pytest.fixture(scope="module")
def e5_file() -> Path:
    """The built-in multilingual model from the user's cache (not downloaded here)."""
    from engram.models import sources

    try:
        return sources.resolve(
            "multilingual", config.xdg_dir(os.environ, "XDG_CACHE_HOME", ".cache")
        )
    except sources.ModelError:
        pytest.skip("the multilingual model is not prepared: engram models pull multilingual")


@pytest.mark.slow
def test_embed_model_multilingual_switches_and_embeds_again(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path, tiny, e5_file: Path
) -> None:
    """The recommended command on the real model: the vault is embedded again with it, and the
    advice is gone."""
    from engram.models import sources

    models = Path(xdg["XDG_CACHE_HOME"]) / "engram" / "models"
    models.mkdir(parents=True)
    (models / sources.MULTILINGUAL.file).symlink_to(e5_file)
    env = {**xdg, "NO_COLOR": "1"}
    run(env, "init", str(vault_of(tmp_path / "v", german=4, english=6)))
    assert "models" not in config_of(xdg)
    out = run(env, "embed", "--model", "multilingual", ok=False)
    if out.returncode and "sqlite-vec" in out.stderr:
        pytest.skip("sqlite-vec unavailable: embed cannot run")
    assert out.returncode == 0, out.stderr
    assert config_of(xdg)["models"] == {"embed": "multilingual"}
    assert "multilingual-e5-small" in out.stdout and FIX not in out.stderr
    assert run.json(env, "status")["languages"]["advice"] is None


def test_query_explains_why_an_english_model_s_vectors_count_for_nothing_on_german_notes(
    run: EngramCli, xdg: dict[str, str], tmp_path: Path, tiny
) -> None:
    """Hybrid search on German notes with an English-only model: the vector list's trust is
    halved (the query is German, though in the model's script), the keyword list's full, and
    --explain says so; a Russian query's vector list counts for nothing."""
    english_only = tmp_path / "tiny-minilm.gguf"
    english_only.write_bytes(tiny.embed.read_bytes())
    env = {**xdg, "ENGRAM_EMBED_MODEL": str(english_only), "NO_COLOR": "1"}
    run(env, "collection", "add", str(vault_of(tmp_path / "v", 6, 4)), "-n", "notes")
    out = run(env, "embed", ok=False)
    if out.returncode and "sqlite-vec" in out.stderr:
        pytest.skip("sqlite-vec unavailable: embed cannot run")
    german = "Kannst du Notizen zwischen zwei Rechnern synchronisieren?"
    stages = run.json(env, "query", german, "--explain")["stages"]
    assert stages["trust vec:original"] == (
        "0.50 (the query is surely not in en, all the embedding model reads, though in its "
        "script (Latin))"
    )
    assert stages["trust bm25:original"].startswith("1.00 (the notes hold 100% of")
    russian = "Как синхронизировать заметки между двумя компьютерами?"  # no word in the notes
    stages = run.json(env, "query", russian, "--explain")["stages"]
    assert stages["trust vec:original"].startswith("1.00 (the query is surely not in en")
    assert stages["trust vec:original"].endswith("; no list can be trusted, so all count alike)")
    assert stages["trust bm25:original"].startswith("1.00 (the notes hold 0% of")
    english = "How do I sync the vault between two computers?"
    stages = run.json(env, "query", english, "--explain")["stages"]
    assert stages["trust vec:original"] == (
        "1.00 (the query is likely in en, which the embedding model reads)"
    )
    human = run(env, "query", english, "--explain")
    assert "stage trust vec:original: 1.00 (the query is likely in en" in human.stderr
