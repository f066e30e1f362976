"""service/wire.py: a search value encoded, sent as JSON and decoded is the value it was."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram import codec
from engram.index.embed import EmbedReport
from engram.index.indexer import UpdateReport
from engram.index.languages import LanguageReport
from engram.memory.model import Fact
from engram.models.protocols import GGUFInfo, Prompts
from engram.service import wire
from engram.service.collections import CollectionInfo, ListedFile, Listing
from engram.service.daemon import ServedStatus
from engram.service.model_health import ModelState
from engram.service.operations import OPERATIONS, result_type
from engram.service.semantic import BuiltInModel, CachedModel, EmbeddingState, ModelsList, RoleModel
from engram.service.sync import (
    ParkedOp,
    RejectedChange,
    SyncCheck,
    SyncConflict,
    SyncSetup,
    SyncStatus,
)
from engram.service.upkeep import BenchReport, CleanupReport, CollectionCount, IndexFile, Status

text = st.text(max_size=40)
maybe = st.none() | text
score = st.floats(0, 1).map(lambda x: round(x, 4))


def over_the_wire(value: object) -> object:
    return json.loads(json.dumps(wire.to_json(value)))


def values_of(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a declared type: what a facade could return, within what JSON carries."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(values_of(a) for a in args))
    if origin in (tuple, list):
        if origin is tuple and args and args[-1] is not Ellipsis:
            return st.tuples(*(values_of(a) for a in args))
        items = st.lists(values_of(args[0]), max_size=2)
        return items.map(tuple) if origin is tuple else items
    if origin is dict:
        return st.dictionaries(st.text(max_size=5), values_of(args[1]), max_size=2)
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        given = {f.name: values_of(hints[f.name]) for f in dataclasses.fields(hint) if f.init}
        return st.builds(hint, **given)
    return {
        str: st.text(
            st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20
        ),
        int: st.integers(0, 10**6),
        float: st.floats(0, 1),
        bool: st.booleans(),
        dt.datetime: st.datetimes(timezones=st.just(dt.UTC)),
        dt.date: st.dates(),
        type(None): st.none(),
        Any: st.none() | st.floats(0, 1) | st.text(max_size=5),
    }[hint]


DECLARED = sorted({result_type(op) for op in OPERATIONS if op.result}, key=str)


@pytest.mark.parametrize("hint", DECLARED, ids=str)
def test_every_declared_result_survives_the_wire(hint: Any) -> None:
    """Encoded, sent as JSON, decoded and encoded again, a result is the same JSON: the
    daemon-backed facade answers what the local one would."""

    @given(values_of(hint))
    def check(value: Any) -> None:
        data = json.loads(json.dumps(codec.encode(value)))
        assert codec.encode(codec.decode(hint, data)) == data

    check()


states = st.sampled_from(["loaded", "available", "missing"])
model_state = st.builds(ModelState, text, states, maybe)


@given(st.dictionaries(st.sampled_from(["embed", "rerank", "generate"]), model_state))
def test_model_status_survives_the_wire(value: dict[str, ModelState]) -> None:
    data = over_the_wire(value)
    assert wire.model_status_from_json(data) == value  # type: ignore[arg-type]
    assert wire.to_json(wire.model_status_from_json(data)) == data  # type: ignore[arg-type]


counts = st.integers(0, 10**6)
embedding_state = st.builds(
    EmbeddingState, maybe, maybe, maybe, counts, counts, counts, counts, counts
)
language_report = st.builds(
    LanguageReport,
    st.dictionaries(st.text(min_size=2, max_size=3), counts, max_size=3),
    counts,
    counts,
    counts,
    score,
    maybe,
)
status = st.builds(
    Status,
    text,
    st.builds(IndexFile, text, text, counts, maybe, counts),
    text,
    st.lists(st.builds(CollectionCount, text, text, text, counts), max_size=2).map(tuple),
    counts,
    counts,
    counts,
    counts,
    counts,
    st.booleans(),
    maybe,
    embedding_state,
    st.dictionaries(st.sampled_from(["embed", "rerank", "generate"]), model_state),
    st.dictionaries(text, text, max_size=3),
    language_report,
)


@given(status)
def test_a_status_survives_the_wire(value: Status) -> None:
    data = over_the_wire(value)
    assert wire.status_from_json(data) == value  # type: ignore[arg-type]
    assert wire.to_json(wire.status_from_json(data)) == data  # type: ignore[arg-type]
    assert wire.embedding_state_from_json(data["embeddings"]) == value.embeddings  # type: ignore[index]
    assert wire.language_report_from_json(data["languages"]) == value.languages  # type: ignore[index]


contexts = st.lists(st.tuples(text, text), max_size=2).map(tuple)
collection = st.builds(
    CollectionInfo,
    text,
    text,
    text,
    st.lists(text, max_size=2).map(tuple),
    counts,
    maybe,
    st.none() | contexts,
)


@given(st.lists(collection, max_size=3))
def test_collections_survive_the_wire(values: list[CollectionInfo]) -> None:
    data: list[dict[str, object]] = over_the_wire(values)  # type: ignore[assignment]
    decoded = [wire.collection_info_from_json(d) for d in data]
    assert decoded == values
    assert wire.to_json(decoded) == data


WHEN = dt.datetime(2026, 3, 5, 10, 15, tzinfo=dt.UTC)
A_FACT = Fact(  # as the wire gives it back: `updatedAt` always set
    id="a" * 32,
    title="Pick Adyen",
    text="We picked [[Adyen]].",
    timestamp=WHEN,
    updated_at=WHEN,
    importance=0.85,
    path="Engram/facts/pick-adyen.md",
)
sync_off = st.builds(SyncStatus, st.just(False), st.just("off"), counts, maybe, text)
sync_on = st.builds(
    SyncStatus,
    configured=st.just(True),
    state=st.sampled_from(["idle", "error", "syncing"]),
    pending=counts,
    last_sync=maybe,
    vault=text,
    url=text,
    device=text,
    interval=st.integers(1, 3600),
    parked=st.lists(st.builds(ParkedOp, text, text, maybe), max_size=2).map(tuple),
    conflicts=st.lists(
        st.builds(SyncConflict, text, text, text, st.lists(text, max_size=2).map(tuple), text),
        max_size=2,
    ).map(tuple),
    last_error=maybe,
    cursor=maybe,
    stopped=maybe,
    rejected=st.lists(st.builds(RejectedChange, text, text, text), max_size=2).map(tuple),
)


@given(sync_off | sync_on)
def test_a_sync_status_survives_the_wire(value: SyncStatus) -> None:
    data = over_the_wire(value)
    assert wire.sync_status_from_json(data) == value  # type: ignore[arg-type]
    assert wire.to_json(wire.sync_status_from_json(data)) == data  # type: ignore[arg-type]


@given(st.builds(CleanupReport, counts, counts, counts, counts, counts))
def test_a_cleanup_report_survives_the_wire(value: CleanupReport) -> None:
    data = over_the_wire(value)
    assert wire.cleanup_report_from_json(data) == value  # type: ignore[arg-type]
    assert wire.to_json(wire.cleanup_report_from_json(data)) == data  # type: ignore[arg-type]


ids = st.lists(text, max_size=2).map(tuple)


@given(st.builds(SyncCheck, counts, ids, ids, ids, ids, counts, counts))
def test_a_sync_check_survives_the_wire(value: SyncCheck) -> None:
    data = over_the_wire(value)
    assert wire.sync_check_from_json(data) == value  # type: ignore[arg-type]
    assert wire.to_json(wire.sync_check_from_json(data)) == data  # type: ignore[arg-type]


def check_round_trip(value: object, decode: Callable[[Any], object]) -> None:
    """Decoding the JSON gives the value back, and encoding that gives the same JSON."""
    data = over_the_wire(value)
    assert decode(data) == value
    assert wire.to_json(decode(data)) == data


@st.composite
def role_model(draw: st.DrawFn, role: str) -> RoleModel:
    spec = draw(maybe)
    if spec is None:  # not configured: no file, no error
        return RoleModel(role, None)
    found = draw(st.booleans())
    return RoleModel(role, spec, draw(text) if found else None, None if found else draw(text))


models_list = st.builds(
    ModelsList,
    st.lists(st.sampled_from(["embed", "rerank", "generate"]), unique=True).flatmap(
        lambda roles: st.tuples(*(role_model(r) for r in roles))
    ),
    st.lists(st.builds(BuiltInModel, text, text, text, st.booleans(), counts), max_size=2).map(
        tuple
    ),
    st.lists(st.builds(CachedModel, text, counts), max_size=2).map(tuple),
    text,
)


@given(models_list)
def test_a_models_list_survives_the_wire(value: ModelsList) -> None:
    check_round_trip(value, wire.models_list_from_json)


name = st.text("abcxyz-_.0123456789", min_size=1, max_size=12).filter(
    lambda n: n not in {".", ".."}
)
gguf_info = st.builds(
    GGUFInfo,
    path=st.lists(name, min_size=1, max_size=3).map(lambda parts: Path("/", *parts)),
    size_bytes=counts,
    sha256=st.text("0123456789abcdef", min_size=64, max_size=64),
    architecture=text,
    name=text,
    file_type=text,
    context_length=counts,
    max_seq_length=counts,
    embedding_length=counts,
    block_count=counts,
    pooling=text,
    tokenizer=text,
    vocab_size=counts,
    n_tensors=counts,
    classifier_labels=st.lists(text, max_size=2).map(tuple),
    has_chat_template=st.booleans(),
    prompts=st.builds(Prompts, text, text),
)


@given(gguf_info)
def test_a_gguf_info_survives_the_wire(value: GGUFInfo) -> None:
    check_round_trip(value, wire.gguf_info_from_json)
    assert over_the_wire(value)["modelId"] == value.model_id  # type: ignore[index]


listed_file = st.builds(ListedFile, text, text, text, text, counts, maybe, text)
listing = st.builds(Listing, st.lists(collection, max_size=2).map(tuple)) | st.builds(
    Listing, files=st.lists(listed_file, max_size=3).map(tuple)
)


@given(listing)
def test_a_listing_survives_the_wire(value: Listing) -> None:
    check_round_trip(value, wire.listing_from_json)


@given(st.builds(SyncSetup, text, text, text, st.integers(1, 3600), text, st.booleans(), maybe))
def test_a_sync_setup_survives_the_wire(value: SyncSetup) -> None:
    check_round_trip(value, wire.sync_setup_from_json)


@given(
    st.builds(
        BenchReport, text, score, score, score, score, counts, st.floats(0, 1e5), st.floats(0, 1e5)
    )
)
def test_a_bench_report_survives_the_wire(value: BenchReport) -> None:
    check_round_trip(value, wire.bench_report_from_json)


daemon_document = st.dictionaries(
    text.filter(lambda k: k != "servedBy"), text | counts | st.none(), max_size=3
)
served = st.builds(ServedStatus, status=status) | st.builds(
    ServedStatus, st.integers(1, 10**6), st.integers(1, 65535), daemon_document
)


@given(served)
def test_a_served_status_survives_the_wire(value: ServedStatus) -> None:
    check_round_trip(value, wire.served_status_from_json)
    assert over_the_wire(value)["servedBy"]["daemon"] is (value.status is None)  # type: ignore[index]


seconds = st.floats(0, 1e5).map(lambda x: round(x, 3))
warning = st.tuples(text, text, text)


@given(
    st.builds(
        UpdateReport,
        counts,
        counts,
        counts,
        counts,
        counts,
        counts,
        seconds,
        st.lists(warning, max_size=3),
    )
)
def test_an_update_report_survives_the_wire(value: UpdateReport) -> None:
    check_round_trip(value, wire.update_report_from_json)


@given(st.builds(EmbedReport, text, counts, st.booleans(), counts, counts, counts, seconds))
def test_an_embed_report_survives_the_wire(value: EmbedReport) -> None:
    check_round_trip(value, wire.embed_report_from_json)
