"""Note write speed on a synthetic vault: edit, link, and a move that rewrites many links.

A vault of N notes in 50 folders, each note linking to 5 random notes in mixed forms (bare
names, paths, headings, aliases, embeds, markdown links), plus one hub note that a share of
the notes link to. Prints wall and CPU time of: a dry-run and a real edit (append), a link,
and a dry-run and a real move of the hub (every link to it rewritten, all files at once,
index and graph updated), and of a move of an unlinked note (the floor: the up-to-date
check of the whole collection before planning).

    python scripts/bench_notes.py [--notes 5000] [--hub-share 0.2] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FORMS = [
    "[[{name}]]",
    "[[{path}]]",
    "[[{name}#Section 2|see]]",
    "![[{name}#Section 1]]",
    "[{name}]({enc}.md)",
    "[[{name}|alias]]",
]


def timed(label: str, func: Callable[[], Any]) -> Any:
    """Run func once; print its wall and CPU time."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = func()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{label:<52} wall {wall * 1000:9.1f} ms   cpu {cpu * 1000:9.1f} ms")
    return result


def write_vault(root: Path, notes: int, hub_share: float, seed: int = 11) -> int:
    """The synthetic vault; returns how many links point at the hub."""
    rng = random.Random(seed)
    paths = [f"Topic {i % 50:02d}/Note {i:05d}" for i in range(notes)]
    hub = "Hubs/The Hub"
    to_hub = 0
    for i, path in enumerate(paths):
        lines = [f"# Note {i}", "", "## Section 1", "", "Body text about memory and graphs."]
        for target in rng.sample(paths, 5):
            name = target.rsplit("/", 1)[1]
            form = rng.choice(FORMS)
            lines.append(form.format(name=name, path=target, enc=target.replace(" ", "%20")))
        if rng.random() < hub_share:
            form = rng.choice(FORMS)
            lines.append(form.format(name="The Hub", path=hub, enc=hub.replace(" ", "%20")))
            to_hub += 1
        lines += ["", "## Section 2", "", "More text."]
        file = root / f"{path}.md"
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "Hubs").mkdir(exist_ok=True)
    (root / "Hubs/The Hub.md").write_text("# The Hub\n\n## Section 1\n\n## Section 2\n")
    return to_hub


def main() -> None:
    """Build the vault, index it, time the note operations."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--notes", type=int, default=5000)
    ap.add_argument("--hub-share", type=float, default=0.2)
    ap.add_argument("--keep", type=Path, help="Build the vault and index here (kept).")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="engram-bench-notes-"))
    for var, sub in (("XDG_DATA_HOME", "data"), ("XDG_CONFIG_HOME", "config")):
        os.environ[var] = str(work / sub)
    from engram import config
    from engram.service import Engram

    vault = work / "vault"
    to_hub = write_vault(vault, args.notes, args.hub_share)
    print(f"{args.notes} notes, {args.notes * 5 + to_hub} links, {to_hub} to the hub")
    engram = Engram(config.resolve(os.environ))
    engram.collection_add(str(vault), "bench")
    timed("index (cold)", engram.update)
    note = "Topic 03/Note 00003.md"
    timed("edit append, dry run", lambda: engram.note_edit(note, append="x", dry_run=True))
    timed("edit append", lambda: engram.note_edit(note, append="x"))
    timed("link", lambda: engram.note_link(note, "Topic 04/Note 00004.md"))
    timed("move an unlinked note", lambda: engram.note_move(note, "Moved/Unlinked.md"))
    dry = timed(
        "move the hub, dry run", lambda: engram.note_move("The Hub", "Else/Core", dry_run=True)
    )
    done = timed(
        "move the hub (rewrite, commit, re-index)", lambda: engram.note_move("The Hub", "Else/Core")
    )
    print(f"links rewritten: {done.links_rewritten} in {len(done.files) - 1} notes"
          f" (dry run planned {dry.links_rewritten})")  # fmt: skip
    backlinks = engram.backlinks("Else/Core.md", "bench").links
    print(f"backlinks of the moved hub after the move: {len(backlinks)}")
    engram.close()


if __name__ == "__main__":
    main()
