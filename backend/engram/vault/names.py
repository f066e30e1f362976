"""Names for notes Engram creates or moves: what Obsidian accepts and links can carry.

Obsidian refuses `* " \\ / < > : | ?` in file names, and `# ^ [ ] |` break `[[links]]`, so a
new name with any of them is refused (a title is cleaned instead). Paths stay out of dot
folders and tool folders (`.obsidian/`, `.trash/`, `.git/`, `node_modules/`).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable

from engram.errors import InvalidInputError

from .scan import hidden_or_ignored_dir

BAD_CHARS = set('*"\\<>:|?#^[]')
MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 1024  # well under PATH_MAX once joined to the vault's own path
TRASH = ".trash"
DEFAULT_SECTION = "Related"  # the heading `note link` adds a link under
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SPACES = re.compile(r"\s+")
_NOTE_EXT = ".md"


def check_path(rel: str, keep_name: str | None = None) -> str:
    """A vault-relative path for a new or moved file, normalized, or InvalidInputError.

    `keep_name`: the file's current name, accepted as it is even if Obsidian would refuse it
    today (moving such a file to another folder must stay possible).
    """
    text = unicodedata.normalize("NFC", rel.replace("\\", "/").strip())
    if text.startswith("/") or re.match(r"^[A-Za-z]:", text):
        raise InvalidInputError(f"{rel!r}: give a path relative to the vault, not an absolute one")
    text = text.rstrip("/")
    if not text:
        raise InvalidInputError("a note path is required")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise InvalidInputError(f"path longer than {MAX_PATH_BYTES} bytes")
    parts = text.split("/")
    for i, part in enumerate(parts):
        if i == len(parts) - 1 and part == keep_name:
            continue
        if part in ("", ".", ".."):
            raise InvalidInputError(f"{rel!r}: empty, '.' or '..' path parts are not allowed")
        if part != part.strip():
            raise InvalidInputError(f"{rel!r}: a name may not start or end with spaces")
        bad = sorted(BAD_CHARS & set(part)) or (["control"] if _CONTROL.search(part) else [])
        if bad:
            shown = " ".join(bad)
            raise InvalidInputError(
                f"{rel!r}: names may not contain {shown} (Obsidian or links cannot use them)"
            )
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise InvalidInputError(f"{rel!r}: a name is longer than {MAX_NAME_BYTES} bytes")
    if any(hidden_or_ignored_dir(p) for p in parts[:-1]) or parts[-1].startswith("."):
        raise InvalidInputError(
            f"{rel!r}: hidden files and tool folders (.obsidian, .trash) are off limits"
        )
    return "/".join(parts)


def note_file(rel: str) -> str:
    """A note path with the `.md` extension (added when missing)."""
    return rel if rel.lower().endswith(_NOTE_EXT) else rel + _NOTE_EXT


def from_title(title: str) -> str:
    """A file name (with `.md`) for a title: forbidden characters become spaces."""
    cleaned = "".join(" " if ch in BAD_CHARS or ch == "/" else ch for ch in title)
    cleaned = _SPACES.sub(" ", _CONTROL.sub(" ", cleaned)).strip().strip(".").strip()
    if not cleaned:
        raise InvalidInputError(f"the title {title!r} leaves no usable file name")
    while len((cleaned + _NOTE_EXT).encode("utf-8")) > MAX_NAME_BYTES:
        cleaned = cleaned[:-1].rstrip()
    return cleaned + _NOTE_EXT


def trash_path(rel: str, exists: Callable[[str], bool]) -> str:
    """Where a deleted file goes: `.trash/<its path>`, numbered (`Name 2.md`) when taken."""
    base = f"{TRASH}/{rel}"
    folder, name = posixpath.split(base)
    stem, ext = posixpath.splitext(name)
    candidate, n = base, 2
    while exists(candidate):
        candidate = posixpath.join(folder, fit_name(stem, f" {n}{ext}"))
        n += 1
    return candidate


def fit_name(stem: str, tail: str, limit: int = MAX_NAME_BYTES) -> str:
    """`stem + tail`, the stem shortened (whole characters) so the name fits in `limit`
    bytes: a conflict copy or a numbered twin of a long name must still be a valid name."""
    room = limit - len(tail.encode("utf-8"))
    raw = stem.encode("utf-8", "surrogatepass")
    if len(raw) > room:
        stem = raw[: max(room, 0)].decode("utf-8", "ignore").rstrip()
    return stem + tail
