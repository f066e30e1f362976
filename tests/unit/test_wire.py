"""engram.codec on every value that crosses a process: encoded, sent as JSON, decoded and
encoded again, it is the same JSON. So the daemon-backed facade answers what the local one
would, and what a `--json` command prints can be read back into the value it came from."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram import codec
from engram.graph.graph_index import TypedNeighbor
from engram.graph.results import (
    LinkRef,
    NoteLinks,
    NotePath,
    NoteRef,
    Ranking,
    Theme,
    UnresolvedLink,
)
from engram.index.embed import EmbedReport
from engram.index.indexer import UpdateReport
from engram.memory.archive import Move
from engram.memory.results import (
    DailyResult,
    LifecycleChange,
    SessionEnd,
    SupersedeResult,
    VaultInfo,
    WakeResult,
)
from engram.memory.wake import Checkpoint
from engram.models.protocols import GGUFInfo
from engram.server.state import ActiveNote
from engram.service.collections import CollectionInfo, ContextEntry, ListedFile
from engram.service.core import Check
from engram.service.graph_files import ColourPlan, TypedNeighborhood
from engram.service.operations import OPERATIONS, result_type
from engram.service.rebuild import RebuildReport
from engram.service.semantic import ModelsList
from engram.service.sync import SyncCheck, SyncSetup, SyncStatus
from engram.service.upkeep import BenchReport, CleanupReport, Status

text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20)


def values_of(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a type: what a facade could return, within what JSON carries."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return values_of(args[0])
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
        str: text,
        Path: text.map(Path),
        int: st.integers(0, 10**6),
        float: st.floats(0, 1),
        bool: st.booleans(),
        dt.datetime: st.datetimes(timezones=st.just(dt.UTC)),
        dt.date: st.dates(),
        type(None): st.none(),
        Any: st.none() | st.floats(0, 1) | st.text(max_size=5),
    }[hint]


DECLARED = {result_type(op) for op in OPERATIONS if op.result}
# what a `--json` command, an MCP tool or a route outside OPERATIONS prints (a list of T: T)
PRINTED = {
    # engram status / cleanup / doctor / bench / rebuild, collections, contexts, ls
    Status,
    CleanupReport,
    Check,
    BenchReport,
    RebuildReport,
    CollectionInfo,
    ContextEntry,
    ListedFile,
    # update, embed, models
    UpdateReport,
    EmbedReport,
    ModelsList,
    GGUFInfo,
    # sync
    SyncStatus,
    SyncCheck,
    SyncSetup,
    # memory
    VaultInfo,
    SupersedeResult,
    DailyResult,
    Checkpoint,
    WakeResult,
    SessionEnd,
    LifecycleChange,
    Move,
    # graph
    LinkRef,
    NoteLinks,
    UnresolvedLink,
    NoteRef,
    NotePath,
    Ranking,
    Theme,
    TypedNeighbor,
    TypedNeighborhood,
    ColourPlan,
    # the daemon's active note (its jobs, in GET /v1/status, are sent and never read back:
    # a job's JSON has the number of its paths, not the paths)
    ActiveNote,
}
REGISTERED = sorted(DECLARED | PRINTED, key=str)


@pytest.mark.parametrize("hint", REGISTERED, ids=str)
def test_every_value_that_crosses_a_process_survives_the_wire(hint: Any) -> None:
    """Encoded, sent as JSON, decoded and encoded again, a value is the same JSON."""

    @given(values_of(hint))
    def check(value: Any) -> None:
        data = json.loads(json.dumps(codec.encode(value)))
        assert codec.encode(codec.decode(hint, data)) == data

    check()
