"""Language and script identification (models/language.py) and the vault's language report."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.index import languages
from engram.models import language, sources

PROSE = {
    "en": "Obsidian stores notes as plain Markdown files in a folder called a vault on your disk.",
    "de": "Obsidian speichert Notizen als reine Markdown-Dateien in einem Ordner auf dem Rechner.",
    "fr": "Obsidian enregistre les notes sous forme de fichiers Markdown dans un dossier.",
    "zh": "Obsidian 将笔记以纯 Markdown 文件的形式保存在称为仓库的文件夹中，完全离线可用。",
    "ja": "Obsidianはノートをプレーンなマークダウンファイルとして保管庫に保存します。",
    "ko": "Obsidian은 노트를 보관함이라는 폴더에 일반 마크다운 파일로 저장합니다.",
    "ru": "Obsidian хранит заметки в виде обычных файлов Markdown в папке, называемой хранилищем.",
    "ar": "يحفظ أوبسيديان الملاحظات كملفات ماركداون عادية في مجلد يسمى المخزن على جهازك.",
}


@pytest.mark.parametrize("code", sorted(PROSE))
def test_a_paragraph_of_prose_is_told(code: str) -> None:
    assert language.detect(f"# Note\n\n{PROSE[code]}\n\n{PROSE[code]}") == code


@pytest.mark.parametrize(
    "text",
    ["", "- [ ] milk\n- [ ] eggs", "| 1 | 2 |\n|---|---|\n| 3 | 4 |", "```\nx = 1\n```" * 20],
)
def test_too_little_prose_is_undetermined(text: str) -> None:
    assert language.detect(text) == language.UNDETERMINED


def test_code_and_links_do_not_make_a_german_note_english() -> None:
    note = (
        PROSE["de"]
        + "\n\n```python\nfor item in items:\n    print(item.name, item.value)\n```\n"
        + "Siehe [[Projects/English Meeting Notes|die Notizen]] und https://example.com/the/page"
    )
    assert language.detect(note) == "de"


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("how do I sync", "Latin"),
        ("Ｆｕｌｌ－ｗｉｄｔｈ", "Latin"),
        ("Café crème", "Latin"),
        ("如何同步", "Han"),
        ("保管庫を同期する", "Han"),  # kana and Han are one family: Japanese mixes them
        ("Obsidian 同步", "Han"),  # a product name in Latin letters does not make it Latin
        ("볼트 동기화", "Hangul"),
        ("синхронизация", "Cyrillic"),
        ("مزامنة", "Arabic"),
        ("12345 !!", None),
    ],
)
def test_principal_script(text: str, script: str | None) -> None:
    assert language.principal_script(text) == script


def test_same_script() -> None:
    assert language.same_script("如何同步笔记", "在两台电脑之间同步 Obsidian 仓库")
    assert not language.same_script("如何同步笔记", "sync notes between computers")
    assert not language.same_script("sync notes", "同步笔记")
    assert language.same_script("sync notes", "2024")  # no letters: nothing to judge


def test_query_language_is_named_only_when_sure() -> None:
    assert language.query_language("保管庫を二台のパソコンで同期する方法") == "Japanese"
    assert language.query_language("Wie synchronisiere ich meinen Tresor zwischen Rechnern?") == (
        "German"
    )
    assert language.query_language("42") is None


def test_which_languages_an_embedder_serves() -> None:
    assert languages.served("default") == frozenset({"en"})
    assert languages.served("multilingual") == language.EVERY
    assert languages.served("hf:org/repo/bge-m3-Q8_0.gguf") == language.EVERY
    assert languages.served("/models/bge-small-en-v1.5.gguf") == frozenset({"en"})
    assert languages.served("/models/mystery.gguf") is None
    assert languages.served(None) is None
    assert sources.MULTILINGUAL.serves == language.EVERY


def test_the_cached_model_answers_as_the_packaged_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    packaged = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    made = language._load_identifier()  # unpacks into the cache
    (copy,) = (tmp_path / "engram" / "langid").glob("*.npz")
    read = language._load_identifier()  # reads the unpacked copy
    for text in PROSE.values():
        assert made.classify(text) == read.classify(text) == packaged.classify(text)
    copy.write_bytes(b"not a model")  # a damaged copy: the packaged model, and made again
    assert language._load_identifier().classify(PROSE["de"]) == packaged.classify(PROSE["de"])
    assert not copy.exists()
