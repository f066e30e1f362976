"""`engram rebuild`: every derived table made again from the files, beside the old index.

The new index is built in `<index>.rebuild.sqlite` while the old one stays usable, then takes
its place in one rename: a crash before the rename leaves the old index as it was (the next
rebuild clears the leftover), a crash after it leaves the new one complete. What no file can
give back is carried over first (store/rebuild.py lists it): sync bookkeeping, access counts,
the hashes Engram wrote to fact notes, cached model outputs, and the vectors by passage text
hash, so re-chunking embeds nothing twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from engram.codec import Seconds, arg
from engram.config import Settings
from engram.errors import ConflictError, UnavailableError
from engram.index.indexer import UpdateReport
from engram.store import documents as docs
from engram.store import rebuild as store
from engram.store import vectors

if TYPE_CHECKING:
    from engram.service.core import Core
    from engram.service.engram import Engram

Progress = Callable[[str, int, int], None]  # (phase, done, total)
IN_USE_HINT = (
    "close it (an `engram mcp` or a command still running; stop `engram serve`), "
    "then run engram rebuild again"
)


@dataclass(frozen=True)
class RebuildReport:
    """What a rebuild made and kept."""

    documents: int  # indexed from the files
    warnings: int  # of them, indexed with warnings
    carried: dict[str, int]  # rows per kept table
    restored: bool  # no readable old index: nothing could be carried over
    chunks: int | None  # passages re-chunked; None when there were no vectors to keep
    to_embed: int  # passages with no vector yet (for `engram embed`)
    deletes_queued: int  # synced facts whose notes are gone: their deletion goes to Convex
    notes: tuple[str, ...]
    seconds: Seconds
    update: UpdateReport | None = arg(None, local=True)  # the indexing run, in this process

    def summary(self) -> str:
        """A few lines for humans."""
        lines = [
            f"rebuilt from the files: {self.documents} documents in {self.seconds:.1f}s"
            + (" (there was no index to keep anything from)" if self.restored else ""),
        ]
        kept = {k: v for k, v in self.carried.items() if v}
        if kept:
            lines.append(
                "kept: " + ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in kept.items())
            )
        if self.chunks is not None:
            lines.append(f"{self.chunks} passages re-chunked, vectors reused by text hash")
        if self.to_embed:
            lines.append(f"{self.to_embed} passages have no vector yet: run engram embed")
        if self.deletes_queued:
            lines.append(f"{self.deletes_queued} deleted facts queued for deletion in Convex")
        return "\n".join(lines + list(self.notes))


class RebuildService:
    """rebuild: of the index `core`, building the new file with a facade `engram_for` makes
    for other settings, then `forget` drops this process's caches of the old file."""

    def __init__(
        self,
        core: Core,
        engram_for: Callable[[Settings], Engram],
        forget: Callable[[], None],
    ) -> None:
        self._core = core
        self._engram_for = engram_for
        self._forget = forget

    def rebuild(self, progress: Progress | None = None) -> RebuildReport:
        """Make every derived table again from the files in a new index file and swap it in;
        ConflictError while another process has the index open."""
        started = time.perf_counter()
        path = self._core.settings.db_path
        build = replace(self._core.settings, index_name=f"{self._core.settings.index_name}.rebuild")
        self._core.close()  # this process's own connections must not hold the old file
        notes: list[str] = []
        old = self._old_index(notes) if path.exists() else None
        try:
            report = self._build(build, old, progress, notes)
            if old is None:
                store.replace_missing(build.db_path, path)
            else:
                try:
                    old.replace_with(build.db_path)
                except store.InUseError:
                    store.remove(build.db_path)
                    raise ConflictError(
                        "another process used the index during the rebuild; it is unchanged",
                        IN_USE_HINT,
                    ) from None
        finally:
            if old is not None:
                old.close()
        self._forget()  # in-process caches keyed by generations the new file restarts
        return replace(report, notes=tuple(notes), seconds=time.perf_counter() - started)

    def _old_index(self, notes: list[str]) -> store.OldIndex | None:
        try:
            return store.OldIndex(self._core.settings.db_path)
        except store.InUseError:
            raise ConflictError("another process has the index open", IN_USE_HINT) from None
        except store.Unreadable as exc:
            notes.append(
                f"the old index could not be read ({exc}): sync bookkeeping, access counts "
                "and vectors start afresh (engram sync resyncs facts)"
            )
            return None

    def _build(
        self,
        build: Settings,
        old: store.OldIndex | None,
        progress: Progress | None,
        notes: list[str],
    ) -> RebuildReport:
        """The new index, complete and sealed, at `build.db_path`."""
        store.remove(build.db_path)  # what a crashed rebuild left
        builder = self._engram_for(build)
        try:
            carried = store.Carried({}, frozenset())
            if old is not None:
                try:
                    carried = store.carry_over(builder.db.conn, old.path)
                except store.Unreadable as exc:
                    notes.append(f"the old index could not be read ({exc}): nothing kept")
            update = builder.update(
                progress=(lambda done, total: progress("indexing", done, total))
                if progress
                else None
            )
            with builder.db.write() as conn:
                queued = store.queue_deletes(conn, set(carried.fact_ids) - store.fact_ids(conn))
            chunks = _rechunk(builder, progress, notes) if carried.rows.get("vectors") else None
            report = RebuildReport(
                update.added,
                len(update.warnings),
                carried.rows,
                not carried.rows,
                chunks,
                vectors.queue_size(builder.db.conn),
                queued,
                (),
                0.0,
                update,
            )
        except BaseException:
            builder.close()
            store.remove(build.db_path)
            raise
        builder.close()
        store.seal(build.db_path)
        return report


def _rechunk(builder: Engram, progress: Progress | None, notes: list[str]) -> int | None:
    """Chunk every document again with the model the kept vectors came from; passages
    whose text hash has a vector keep it. None when that model is not at hand."""
    from engram.index import embed as embedding

    try:
        embedder = builder.embedder()
    except UnavailableError as exc:
        notes.append(f"passages not re-chunked ({exc.message}): engram embed will")
        return None
    if embedder.model_id != docs.get_meta(builder.db.conn, "embed_model"):
        notes.append(
            "passages not re-chunked: the vectors are of another model than the one "
            "configured (engram embed re-embeds with it)"
        )
        return None
    return embedding.chunk(builder.db, embedder, progress=progress, pool=builder.parse_pool).chunks
