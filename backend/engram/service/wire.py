"""The JSON wire format of the facade's results, both directions.

`to_json` gives the shape the HTTP API, the MCP tools and `--json` print; the `*_from_json`
functions turn the daemon's replies back into the same frozen values, so a face prints the same
thing whether the local or the daemon-backed Engram answered. Decoding then encoding gives
back the same JSON (tests/unit/test_wire.py): what the encoder leaves out or rounds is
derived, never lost in between.

Result types are imported inside the functions, and `to_json` finds an encoder by the value's
type name (ENCODERS): the daemon-backed CLI path stays light.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engram import codec

if TYPE_CHECKING:
    from engram.index.embed import EmbedReport
    from engram.index.indexer import UpdateReport
    from engram.index.languages import LanguageReport
    from engram.models.protocols import GGUFInfo
    from engram.service.collections import CollectionInfo, ListedFile, Listing
    from engram.service.daemon import ServedStatus
    from engram.service.model_health import ModelState
    from engram.service.semantic import EmbeddingState, ModelsList
    from engram.service.sync import SyncCheck, SyncConflict, SyncSetup, SyncStatus
    from engram.service.upkeep import BenchReport, CleanupReport, Status


def to_json(value: Any) -> Any:
    """A facade value (or a list, tuple or dict of them) as JSON data."""
    encode = ENCODERS.get(f"{type(value).__module__}.{type(value).__qualname__}")
    if encode is not None:
        return encode(value)
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [to_json(x) for x in value]
    if isinstance(value, dict):
        return {k: to_json(x) for k, x in value.items()}
    if dataclasses.is_dataclass(value):
        return codec.encode(value)
    return value


def model_state_to_json(m: ModelState) -> dict[str, Any]:
    """One role's model (status, `GET /v1/status`'s `models`)."""
    return {"id": m.id, "state": m.state, "spec": m.spec}


def model_status_from_json(d: dict[str, Any]) -> dict[str, ModelState]:
    """Each role's model from its JSON."""
    from engram.service.model_health import ModelState

    return {role: ModelState(m["id"], m["state"], m.get("spec")) for role, m in d.items()}


def embedding_state_to_json(e: EmbeddingState) -> dict[str, Any]:
    """Which model the stored vectors belong to, and how much is embedded."""
    return {
        "model": e.model,
        "dim": e.dim,
        "configured": e.configured,
        "chunks": e.chunks,
        "embedded": e.embedded,
        "documentsChunked": e.documents_chunked,
        "queued": e.queued,
        "documentsNotEmbedded": e.documents_not_embedded,
    }


def embedding_state_from_json(d: dict[str, Any]) -> EmbeddingState:
    """An EmbeddingState from its JSON."""
    from engram.service.semantic import EmbeddingState

    return EmbeddingState(
        d.get("model"),
        d.get("dim"),
        d.get("configured"),
        int(d["chunks"]),
        int(d["embedded"]),
        int(d["documentsChunked"]),
        int(d["queued"]),
        int(d["documentsNotEmbedded"]),
    )


def language_report_to_json(r: LanguageReport) -> dict[str, Any]:
    """Notes per language and the advice, if any."""
    return {
        "languages": dict(r.languages),
        "undetermined": r.undetermined,
        "pending": r.pending,
        "unserved": r.unserved,
        "unservedShare": r.unserved_share,
        "advice": r.advice,
    }


def language_report_from_json(d: dict[str, Any]) -> LanguageReport:
    """A LanguageReport from its JSON."""
    from engram.index.languages import LanguageReport

    return LanguageReport(
        {k: int(n) for k, n in d["languages"].items()},
        int(d["undetermined"]),
        int(d["pending"]),
        int(d["unserved"]),
        float(d["unservedShare"]),
        d.get("advice"),
    )


def status_to_json(s: Status) -> dict[str, Any]:
    """`engram status --json` (documented in docs/cli.md)."""
    i = s.index
    return {
        "version": s.version,
        "index": {
            "name": i.name,
            "path": i.path,
            "bytes": i.bytes,
            "lastUpdate": i.last_update,
            "migrations": i.migrations,
        },
        "config": s.config,
        "collections": [
            {"name": c.name, "path": c.path, "pattern": c.pattern, "documents": c.documents}
            for c in s.collections
        ],
        "documents": s.documents,
        "links": s.links,
        "tags": s.tags,
        "contents": s.contents,
        "warnings": s.warnings,
        "vectorSearch": {"available": s.vector_available, "error": s.vector_error},
        "embeddings": embedding_state_to_json(s.embeddings),
        "models": {role: model_state_to_json(m) for role, m in s.models.items()},
        "queryStages": dict(s.query_stages),
        "languages": language_report_to_json(s.languages),
        "overlaps": list(s.overlaps),
    }


def status_from_json(d: dict[str, Any]) -> Status:
    """A Status from its JSON."""
    from engram.service.upkeep import CollectionCount, IndexFile, Status

    i = d["index"]
    return Status(
        version=d["version"],
        index=IndexFile(
            i["name"], i["path"], int(i["bytes"]), i.get("lastUpdate"), int(i["migrations"])
        ),
        config=d["config"],
        collections=tuple(
            CollectionCount(c["name"], c["path"], c["pattern"], int(c["documents"]))
            for c in d["collections"]
        ),
        documents=int(d["documents"]),
        links=int(d["links"]),
        tags=int(d["tags"]),
        contents=int(d["contents"]),
        warnings=int(d["warnings"]),
        vector_available=bool(d["vectorSearch"]["available"]),
        vector_error=d["vectorSearch"].get("error"),
        embeddings=embedding_state_from_json(d["embeddings"]),
        models=model_status_from_json(d["models"]),
        query_stages=dict(d["queryStages"]),
        languages=language_report_from_json(d["languages"]),
        overlaps=tuple(d.get("overlaps") or ()),
    )


def collection_info_to_json(c: CollectionInfo) -> dict[str, Any]:
    """A collection (collection list/show, ls); `contexts` only when shown."""
    out: dict[str, Any] = {
        "name": c.name,
        "path": c.path,
        "pattern": c.pattern,
        "ignore": list(c.ignore),
        "documents": c.documents,
        "lastIndexed": c.last_indexed,
    }
    if c.contexts is not None:
        out["contexts"] = [{"prefix": p, "text": t} for p, t in c.contexts]
    return out


def collection_info_from_json(d: dict[str, Any]) -> CollectionInfo:
    """A CollectionInfo from its JSON."""
    from engram.service.collections import CollectionInfo

    contexts = d.get("contexts")
    return CollectionInfo(
        d["name"],
        d["path"],
        d["pattern"],
        tuple(d.get("ignore") or ()),
        int(d["documents"]),
        d.get("lastIndexed"),
        None if contexts is None else tuple((x["prefix"], x["text"]) for x in contexts),
    )


def _conflict_to_json(c: SyncConflict) -> dict[str, Any]:
    return {
        "factId": c.fact_id,
        "path": c.path,
        "copy": c.copy,
        "fields": list(c.fields),
        "at": c.at,
    }


def sync_status_to_json(s: SyncStatus) -> dict[str, Any]:
    """`engram sync status --json`, and `GET /v1/status`'s `sync` (docs/convex.md)."""
    if not s.configured:
        return {
            "configured": False,
            "state": s.state,
            "pending": s.pending,
            "lastSync": s.last_sync,
            "reason": s.reason,
        }
    return {
        "configured": True,
        "state": s.state,
        "vault": s.vault,
        "url": s.url,
        "device": s.device,
        "interval": s.interval,
        "pending": s.pending,
        "parked": [{"factId": p.fact_id, "kind": p.kind, "error": p.error} for p in s.parked],
        "conflicts": [
            {
                "factId": c.fact_id,
                "path": c.path,
                "copy": c.copy,
                "fields": list(c.fields),
                "at": c.at,
            }
            for c in s.conflicts
        ],
        "lastSync": s.last_sync,
        "lastError": s.last_error,
        "cursor": s.cursor,
        "stopped": s.stopped,
        "rejected": [
            {"externalId": r.external_id, "reason": r.reason, "at": r.at} for r in s.rejected
        ],
    }


def sync_status_from_json(d: dict[str, Any]) -> SyncStatus:
    """A SyncStatus from its JSON."""
    from engram.service.sync import ParkedOp, RejectedChange, SyncConflict, SyncStatus

    if not d["configured"]:
        return SyncStatus(False, d["state"], int(d["pending"]), d.get("lastSync"), d.get("reason"))
    return SyncStatus(
        configured=True,
        state=d["state"],
        pending=int(d["pending"]),
        last_sync=d.get("lastSync"),
        vault=d.get("vault"),
        url=d.get("url"),
        device=d.get("device"),
        interval=d.get("interval"),
        parked=tuple(
            ParkedOp(p["factId"], p["kind"], p.get("error")) for p in d.get("parked") or ()
        ),
        conflicts=tuple(
            SyncConflict(c["factId"], c["path"], c["copy"], tuple(c["fields"]), c["at"])
            for c in d.get("conflicts") or ()
        ),
        last_error=d.get("lastError"),
        cursor=d.get("cursor"),
        stopped=d.get("stopped"),
        rejected=tuple(
            RejectedChange(r["externalId"], r["reason"], r["at"]) for r in d.get("rejected") or ()
        ),
    )


def cleanup_report_to_json(r: CleanupReport) -> dict[str, int]:
    """`engram cleanup --json`."""
    return {
        "documentsRemoved": r.documents_removed,
        "contentsRemoved": r.contents_removed,
        "vectorsRemoved": r.vectors_removed,
        "bytesBefore": r.bytes_before,
        "bytesAfter": r.bytes_after,
    }


def cleanup_report_from_json(d: dict[str, Any]) -> CleanupReport:
    """A CleanupReport from its JSON."""
    from engram.service.upkeep import CleanupReport

    return CleanupReport(
        int(d["documentsRemoved"]),
        int(d["contentsRemoved"]),
        int(d["vectorsRemoved"]),
        int(d["bytesBefore"]),
        int(d["bytesAfter"]),
    )


def sync_check_to_json(c: SyncCheck) -> dict[str, Any]:
    """`engram sync check --json` (docs/convex.md)."""
    return {
        "inStep": c.in_step,
        "same": c.same,
        "differ": list(c.differ),
        "onlyHere": list(c.only_here),
        "onlyInConvex": list(c.only_in_convex),
        "deletedInConvexLiveHere": list(c.deleted_in_convex_live_here),
        "pending": c.pending,
        "tombstones": c.tombstones,
    }


def sync_check_from_json(d: dict[str, Any]) -> SyncCheck:
    """A SyncCheck from its JSON (`inStep` is derived)."""
    from engram.service.sync import SyncCheck

    return SyncCheck(
        int(d["same"]),
        tuple(d["differ"]),
        tuple(d["onlyHere"]),
        tuple(d["onlyInConvex"]),
        tuple(d["deletedInConvexLiveHere"]),
        int(d["pending"]),
        int(d["tombstones"]),
    )


def models_list_to_json(m: ModelsList) -> dict[str, Any]:
    """`engram models list --json` (docs/cli.md): `error` only where a model does not resolve."""
    roles: dict[str, Any] = {}
    for r in m.roles:
        roles[r.role] = {"spec": r.spec, "path": r.path, "available": r.path is not None}
        if r.error is not None:
            roles[r.role]["error"] = r.error
    return {
        "roles": roles,
        "builtIn": [
            {
                "spec": b.spec,
                "name": b.name,
                "languages": b.languages,
                "prepared": b.prepared,
                "downloadMB": b.download_mb,
            }
            for b in m.built_in
        ],
        "cached": [{"path": c.path, "bytes": c.bytes} for c in m.cached],
        "cacheDir": m.cache_dir,
    }


def models_list_from_json(d: dict[str, Any]) -> ModelsList:
    """A ModelsList from its JSON (`available` is derived from `path`)."""
    from engram.service.semantic import BuiltInModel, CachedModel, ModelsList, RoleModel

    return ModelsList(
        tuple(
            RoleModel(k, r.get("spec"), r.get("path"), r.get("error"))
            for k, r in d["roles"].items()
        ),
        tuple(
            BuiltInModel(
                b["spec"], b["name"], b["languages"], bool(b["prepared"]), int(b["downloadMB"])
            )
            for b in d["builtIn"]
        ),
        tuple(CachedModel(c["path"], int(c["bytes"])) for c in d["cached"]),
        d["cacheDir"],
    )


def gguf_info_to_json(g: GGUFInfo) -> dict[str, Any]:
    """`engram models info --json` and `models pull --json`: the GGUF's fields as named in
    the dataclass, its path as text, and `modelId`."""
    import dataclasses

    out = dataclasses.asdict(g)
    out["path"] = str(g.path)
    out["classifier_labels"] = list(g.classifier_labels)
    out["modelId"] = g.model_id
    return out


def gguf_info_from_json(d: dict[str, Any]) -> GGUFInfo:
    """A GGUFInfo from its JSON (`modelId` is derived)."""
    import dataclasses
    from pathlib import Path

    from engram.models.protocols import GGUFInfo, Prompts

    names = {f.name for f in dataclasses.fields(GGUFInfo)}
    fields = {k: v for k, v in d.items() if k in names}
    fields["path"] = Path(d["path"])
    fields["classifier_labels"] = tuple(d.get("classifier_labels") or ())
    fields["prompts"] = Prompts(**(d.get("prompts") or {}))
    return GGUFInfo(**fields)


def listing_to_json(listing: Listing) -> list[dict[str, Any]]:
    """`engram ls --json`: one list, of collections or of indexed files."""
    return [collection_info_to_json(c) for c in listing.collections] + [
        {
            "docid": f.docid,
            "collection": f.collection,
            "path": f.path,
            "title": f.title,
            "size": f.size,
            "date": f.date,
            "indexedAt": f.indexed_at,
        }
        for f in listing.files
    ]


def _listed_file(d: dict[str, Any]) -> ListedFile:
    from engram.service.collections import ListedFile

    return ListedFile(
        d["docid"],
        d["collection"],
        d["path"],
        d["title"],
        int(d["size"]),
        d.get("date"),
        d["indexedAt"],
    )


def listing_from_json(items: list[dict[str, Any]]) -> Listing:
    """A Listing from its JSON (a collection has a `name`, a file a `docid`)."""
    from engram.service.collections import Listing

    return Listing(
        tuple(collection_info_from_json(d) for d in items if "name" in d),
        tuple(_listed_file(d) for d in items if "name" not in d),
    )


def sync_setup_to_json(s: SyncSetup) -> dict[str, Any]:
    """`engram sync init --json` (docs/convex.md)."""
    return {
        "vault": s.vault,
        "url": s.url,
        "device": s.device,
        "interval": s.interval,
        "credentials": s.credentials,
        "checked": s.checked,
        "functions": s.functions,
    }


def sync_setup_from_json(d: dict[str, Any]) -> SyncSetup:
    """A SyncSetup from its JSON."""
    from engram.service.sync import SyncSetup

    return SyncSetup(
        d["vault"],
        d["url"],
        d["device"],
        int(d["interval"]),
        d["credentials"],
        bool(d["checked"]),
        d.get("functions"),
    )


def bench_report_to_json(b: BenchReport) -> dict[str, Any]:
    """`engram bench --json` (docs/cli.md)."""
    return {
        "mode": b.mode,
        "ndcg@10": b.ndcg_at_10,
        "recall@10": b.recall_at_10,
        "recall@100": b.recall_at_100,
        "mrr@10": b.mrr_at_10,
        "queries": b.queries,
        "p50_ms": b.p50_ms,
        "p95_ms": b.p95_ms,
    }


def bench_report_from_json(d: dict[str, Any]) -> BenchReport:
    """A BenchReport from its JSON."""
    from engram.service.upkeep import BenchReport

    return BenchReport(
        d["mode"],
        float(d["ndcg@10"]),
        float(d["recall@10"]),
        float(d["recall@100"]),
        float(d["mrr@10"]),
        int(d["queries"]),
        float(d["p50_ms"]),
        float(d["p95_ms"]),
    )


def served_status_to_json(s: ServedStatus) -> dict[str, Any]:
    """The MCP `status` tool's document: `servedBy`, then the daemon's `GET /v1/status` as it
    was sent, or this process's status."""
    if s.daemon_status is not None:
        by = {"daemon": True, "pid": s.daemon_pid, "port": s.daemon_port}
        return {"servedBy": by, **s.daemon_status}
    assert s.status is not None
    return {"servedBy": {"daemon": False}, **status_to_json(s.status)}


def served_status_from_json(d: dict[str, Any]) -> ServedStatus:
    """A ServedStatus from its JSON."""
    from engram.service.daemon import ServedStatus

    by, rest = d["servedBy"], {k: v for k, v in d.items() if k != "servedBy"}
    if by["daemon"]:
        return ServedStatus(by.get("pid"), by.get("port"), daemon_status=rest)
    return ServedStatus(status=status_from_json(rest))


def update_report_to_json(r: UpdateReport) -> dict[str, Any]:
    """`engram update --json` (docs/cli.md)."""
    return {
        "added": r.added,
        "updated": r.updated,
        "renamed": r.renamed,
        "removed": r.removed,
        "unchanged": r.unchanged,
        "skipped": r.skipped,
        "seconds": round(r.seconds, 3),
        "warnings": [{"collection": c, "path": p, "message": m} for c, p, m in r.warnings],
    }


def update_report_from_json(d: dict[str, Any]) -> UpdateReport:
    """An UpdateReport from its JSON (without the ids and paths only the indexer reads)."""
    from engram.index.indexer import UpdateReport

    return UpdateReport(
        int(d["added"]),
        int(d["updated"]),
        int(d["renamed"]),
        int(d["removed"]),
        int(d["unchanged"]),
        int(d["skipped"]),
        float(d["seconds"]),
        [(w["collection"], w["path"], w["message"]) for w in d["warnings"]],
    )


def embed_report_to_json(r: EmbedReport) -> dict[str, Any]:
    """`engram embed --json` (docs/cli.md)."""
    return {
        "model": r.model_id,
        "dim": r.dim,
        "reset": r.reset,
        "documentsChunked": r.documents_chunked,
        "chunks": r.chunks,
        "embedded": r.embedded,
        "seconds": round(r.seconds, 3),
    }


def embed_report_from_json(d: dict[str, Any]) -> EmbedReport:
    """An EmbedReport from its JSON."""
    from engram.index.embed import EmbedReport

    return EmbedReport(
        d["model"],
        int(d["dim"]),
        bool(d["reset"]),
        int(d["documentsChunked"]),
        int(d["chunks"]),
        int(d["embedded"]),
        float(d["seconds"]),
    )


# the facade's result types encoded here, by module and name (importing them would not be light)
ENCODERS: dict[str, Callable[[Any], Any]] = {
    "engram.service.model_health.ModelState": model_state_to_json,
    "engram.service.semantic.EmbeddingState": embedding_state_to_json,
    "engram.index.languages.LanguageReport": language_report_to_json,
    "engram.service.upkeep.Status": status_to_json,
    "engram.service.collections.CollectionInfo": collection_info_to_json,
    "engram.service.sync.SyncStatus": sync_status_to_json,
    "engram.service.sync.SyncCheck": sync_check_to_json,
    "engram.service.upkeep.CleanupReport": cleanup_report_to_json,
    "engram.service.semantic.ModelsList": models_list_to_json,
    "engram.models.protocols.GGUFInfo": gguf_info_to_json,
    "engram.service.collections.Listing": listing_to_json,
    "engram.service.sync.SyncSetup": sync_setup_to_json,
    "engram.service.upkeep.BenchReport": bench_report_to_json,
    "engram.service.daemon.ServedStatus": served_status_to_json,
    "engram.index.indexer.UpdateReport": update_report_to_json,
    "engram.index.embed.EmbedReport": embed_report_to_json,
}
