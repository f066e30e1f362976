"""Keyword search in the scripts and spellings a vault is written in, each with a query in the
same language: words inside unspaced Chinese, Japanese and Thai text, Korean particles, Arabic
vowel marks and article, Russian inflection and ё, accented and special Latin letters."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.service import Engram
from engram.store import migrations

NOTES = {
    "zh-project": "我们在北京的咖啡馆讨论了机器学习项目。",
    "zh-weather": "上海的天气今天很好，适合散步。",
    "ja-work": "東京で新しいプロジェクトを始めました。",
    "ja-cat": "黒猫はソファーの上で寝ています。",
    "ko-meeting": "서울에서 회의를 했습니다.",
    "ko-food": "부산에서 맛있는 김치찌개를 먹었어요.",
    "th-food": "ฉันชอบกินข้าวผัดที่ร้านอาหารใกล้บ้าน",
    "th-trip": "เราไปเที่ยวเชียงใหม่เมื่อปีที่แล้ว",
    "ar-library": "ذهبت إلى المكتبة لقراءة كِتَابٍ عن التاريخ",
    "ar-weather": "الطقس في القاهرة حار جدا اليوم",
    "ru-meeting": "Мы встретились в Москве на конференции по физике.",
    "ru-tree": "На праздник мы поставили ёлку и украсили её игрушками.",
    "fr-cafe": "Le café était fermé, donc la réunion a eu lieu à l'hôtel.",
    "vi-trip": "Chúng tôi đã đến Đà Nẵng và Hà Nội vào mùa hè.",
    "de-bakery": "Die Bäckerei in der Hauptstraße öffnet früh.",
    "pl-trip": "Pojechaliśmy do Łodzi pociągiem.",
}

CASES = [
    ("机器学习", "zh-project"),  # a word inside an unspaced sentence
    ("天气", "zh-weather"),
    ("プロジェクト", "ja-work"),
    ("寝て", "ja-cat"),
    ("서울", "ko-meeting"),  # the noun without its particle 에서
    ("김치찌개", "ko-food"),
    ("ข้าวผัด", "th-food"),  # Thai is written without spaces between words
    ("เชียงใหม่", "th-trip"),
    ("ร้านอาหาร", "th-food"),
    ("كتاب", "ar-library"),  # written with vowel marks in the note
    ("قاهرة", "ar-weather"),  # the note writes it with the article al-
    ("مكتبة", "ar-library"),
    ("Москва", "ru-meeting"),  # the note has the locative Москве
    ("конференция", "ru-meeting"),
    ("физика", "ru-meeting"),
    ("елка", "ru-tree"),  # ё written as е
    ("cafe", "fr-cafe"),
    ("hôtel", "fr-cafe"),
    ("Da Nang", "vi-trip"),
    ("Backerei", "de-bakery"),
    ("Hauptstrasse", "de-bakery"),  # ß written as ss
    ("Lodzi", "pl-trip"),  # ł is not an accent away from l
]


@pytest.fixture(scope="module")
def scripts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = tmp_path_factory.mktemp("scripts")
    for name, text in NOTES.items():
        (vault / f"{name}.md").write_text(f"{text}\n", encoding="utf-8")
    return vault


@pytest.fixture
def searched(engram: Engram, scripts: Path) -> Engram:
    engram.collection_add(str(scripts), "notes")
    engram.update()
    return engram


@pytest.mark.parametrize(("query", "note"), CASES, ids=[n for _, n in CASES])
def test_a_query_in_the_notes_language_finds_its_note_first(
    searched: Engram, query: str, note: str
) -> None:
    got = [Path(r.path).stem for r in searched.search(query, n=3)]
    assert got[:1] == [note]


def test_an_index_made_before_folding_is_refolded_by_its_migration(searched: Engram) -> None:
    """Notes indexed before m013 had no Thai bigrams nor folded forms: the migration adds them
    without re-reading the vault."""
    with searched.db.write() as conn:
        conn.execute("UPDATE documents_fts SET cjk = ''")
        conn.execute("DELETE FROM _migrations WHERE name = 'm013_folded_forms'")
        assert searched.search("Москва", n=3) == []
        assert migrations.apply(conn) == ["m013_folded_forms"]
    assert [Path(r.path).stem for r in searched.search("Москва", n=3)] == ["ru-meeting"]
    assert [Path(r.path).stem for r in searched.search("ข้าวผัด", n=3)] == ["th-food"]
