"""Build monolingual retrieval sets (BEIR layout) from the Obsidian Help vault's translations.

The Obsidian Help repository (github.com/obsidianmd/obsidian-help) holds the same 173 pages in
each language folder (de, ru, zh, ja, ko, ar, ...). For each language L asked for:

- `corpus.jsonl`: L's pages, `_id` from the page's Publish `permalink` (`/` -> `-`; `home` for
  the start page's `/`; a page without one: its path), `title` = the file name, `text` = the
  markdown body without its frontmatter and *without the paragraph used as the page's query*,
  links and all;
- `queries.jsonl`: each page's first prose paragraph (no heading, list, callout, table, code,
  embed), wiki-links and markdown links reduced to their text, markup dropped, cut at 60 words
  (120 characters in scripts written without spaces) - a question in L whose answer is the rest
  of the page, not a verbatim substring of it;
- `qrels/test.tsv`: each query relevant to its own page.

A page whose remaining text has fewer than 100 letters, or whose query is not identified as L
(an untranslated page), gives no query; its note stays in the corpus. The sets are written to
a work folder outside the repository (never commit benchmark data), with a PROVENANCE.md
naming the commit and counts:

    python scripts/build_monolingual.py --out /tmp/mono --langs de,ru,zh,ja
    python scripts/bench_beir.py --data /tmp/mono/de --embed --modes search,vsearch,query \\
        --work /tmp/mono-work/de-default
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "backend"))

REPO = Path("/work/.mirror/obsidianmd+obsidian-help/repo")
MAX_WORDS = 60
MAX_CHARS_UNSPACED = 120
MIN_QUERY_LETTERS = 30
MIN_DOC_LETTERS = 100

_FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n?", re.DOTALL)
_PERMALINK = re.compile(r"^permalink:\s*['\"]?([^'\"\n]+?)['\"]?\s*$", re.MULTILINE)
_WIKILINK = re.compile(r"!?\[\[([^\]|]*?)(?:\|([^\]]*))?\]\]")
_MDLINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_MARKUP = re.compile(r"\*\*|__|==|~~|`|<[^>\n]*>|%%.*?%%")
_NOT_PROSE = ("#", ">", "-", "*", "+", "|", "!", "```", "~~~", "<", "%%", "$$", "---")
_LIST_NUMBER = re.compile(r"^\d+[.)]\s")


@dataclass(frozen=True)
class Page:
    """One page of a language folder: its id, title, body and the paragraph made its query."""

    doc_id: str
    title: str
    text: str  # body without frontmatter and without `query`'s paragraph
    query: str | None


def git(repo: Path, *args: str) -> bytes:
    """Run git in the mirror and return its stdout."""
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def pages_of(repo: Path, commit: str, lang: str) -> list[str]:
    """The markdown files of one language folder at `commit`."""
    names = git(repo, "ls-tree", "-r", "-z", "--name-only", commit, f"{lang}/").split(b"\0")
    return sorted(n.decode() for n in names if n.endswith(b".md"))


def link_text(m: re.Match[str]) -> str:
    """`[[Page#Heading|alias]]` -> alias; `[[Page#Heading]]` -> Page Heading."""
    if m.group(2):
        return m.group(2)
    return " ".join(p for p in m.group(1).split("#") if p).strip()


def plain(paragraph: str) -> str:
    """A paragraph as a query: links reduced to their text, markup dropped, one line."""
    text = _WIKILINK.sub(link_text, paragraph)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _MARKUP.sub("", text)
    return " ".join(text.split())


def unspaced(text: str) -> bool:
    """Whether most letters are Han, kana or Thai (scripts written without spaces)."""
    letters = [ch for ch in text if ch.isalpha()]
    wide = sum(
        1
        for ch in letters
        if unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "THAI"))
    )
    return bool(letters) and wide * 2 > len(letters)


def cut(text: str) -> str:
    """At most MAX_WORDS words (MAX_CHARS_UNSPACED characters where words are unspaced)."""
    if unspaced(text):
        return text[:MAX_CHARS_UNSPACED]
    return " ".join(text.split()[:MAX_WORDS])


def blocks(body: str) -> list[str]:
    """The body split at blank lines, a fenced code block kept whole."""
    out: list[str] = []
    current: list[str] = []
    fence = False
    for line in body.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not line.strip() and not fence:
            if current:
                out.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def prose(block: str) -> bool:
    """A paragraph of running text: not a heading, list, callout, table, code or embed."""
    head = block.lstrip()
    if head.startswith(_NOT_PROSE) or _LIST_NUMBER.match(head):
        return False
    return sum(ch.isalpha() for ch in plain(block)) >= MIN_QUERY_LETTERS


def page(repo: Path, commit: str, path: str, lang: str) -> Page:
    """Read one page and split off its query paragraph."""
    raw = git(repo, "show", f"{commit}:{path}").decode("utf-8", errors="replace")
    raw = raw.replace("\r\n", "\n")
    fm = _FRONTMATTER.match(raw)
    body = raw[fm.end() :] if fm else raw
    link = _PERMALINK.search(fm.group(1)) if fm else None
    rel = path.removeprefix(f"{lang}/").removesuffix(".md")
    doc_id = (link.group(1).strip().strip("/") if link else rel).replace("/", "-") or "home"
    parts = blocks(body)
    first = next((i for i, b in enumerate(parts) if prose(b)), None)
    if first is None:
        return Page(doc_id, Path(rel).name, body.strip(), None)
    rest = "\n\n".join(b for i, b in enumerate(parts) if i != first).strip()
    return Page(doc_id, Path(rel).name, rest, cut(plain(parts[first])))


def build(repo: Path, commit: str, lang: str, out: Path) -> dict[str, int]:
    """Write one language's set; return its counts."""
    from engram.models import language

    pages = [page(repo, commit, p, lang) for p in pages_of(repo, commit, lang)]
    code = lang.split("-")[0]
    counts = {"pages": len(pages), "queries": 0, "no_paragraph": 0, "short": 0, "other": 0}
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels").mkdir(exist_ok=True)
    seen: set[str] = set()
    with (
        (out / "corpus.jsonl").open("w", encoding="utf-8") as corpus,
        (out / "queries.jsonl").open("w", encoding="utf-8") as queries,
        (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as qrels,
    ):
        qrels.write("query-id\tcorpus-id\tscore\n")
        for p in pages:
            if p.doc_id in seen:
                sys.exit(f"{lang}: two pages share the id {p.doc_id}")
            seen.add(p.doc_id)
            corpus.write(json.dumps({"_id": p.doc_id, "title": p.title, "text": p.text}) + "\n")
            if p.query is None:
                counts["no_paragraph"] += 1
            elif sum(ch.isalpha() for ch in p.text) < MIN_DOC_LETTERS:
                counts["short"] += 1
            elif language.detect(p.query + " " + p.text) != code:
                counts["other"] += 1
            else:
                qid = f"{lang}{counts['queries']:03d}"
                queries.write(json.dumps({"_id": qid, "text": p.query}, ensure_ascii=False) + "\n")
                qrels.write(f"{qid}\t{p.doc_id}\t1\n")
                counts["queries"] += 1
    return counts


def main() -> None:
    """Build each language asked for and describe them in PROVENANCE.md."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repo", type=Path, default=REPO, help="Git directory of obsidian-help.")
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--langs", default="de,ru,zh,ja", help="Language folders, comma-separated.")
    ap.add_argument("--out", type=Path, default=Path("/tmp/mono"))
    args = ap.parse_args()
    commit = git(args.repo, "rev-parse", args.commit).decode().strip()
    lines = [
        "# Monolingual sets from the Obsidian Help translations",
        "",
        f"Built by engram's scripts/build_monolingual.py from obsidianmd/obsidian-help at "
        f"{commit}. Query = a page's first prose paragraph (removed from that page's text); "
        "qrels = the page.",
        "",
        "| set | pages | queries | no prose paragraph | too short without it | other language |",
        "|---|---|---|---|---|---|",
    ]
    for lang in args.langs.split(","):
        c = build(args.repo, commit, lang, args.out / lang)
        print(f"{lang}: {c}")
        lines.append(
            f"| {lang} | {c['pages']} | {c['queries']} | {c['no_paragraph']} | {c['short']} "
            f"| {c['other']} |"
        )
    (args.out / "PROVENANCE.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
