"""The one list of operations (service/operations.py) against what serves and calls them:
the facade's public names, the daemon's routes, the daemon-backed Engram and discovery."""

from __future__ import annotations

import inspect

from engram.memory import ledger_raw
from engram.server import routes, routes_ledger, routes_memory, routes_notes, routes_ops
from engram.service import Engram
from engram.service.daemon import MAX_LINES, DaemonEngram
from engram.service.operations import (
    CAPABILITIES,
    IN_PROCESS,
    INTERNAL,
    LOCAL,
    OPERATIONS,
    by_name,
)


def served() -> set[str]:
    """Every "METHOD /path" the daemon's app serves."""
    out = set()
    tables = (routes, routes_ops, routes_memory, routes_notes, routes_ledger)
    for table in (t.routes for t in tables):
        for route in table:
            out.add(f"{route.method} {route.path}")  # type: ignore[attr-defined]
    return out


def test_every_public_name_of_the_facade_is_classified_once() -> None:
    public = {n for n in dir(Engram) if not n.startswith("_")}
    groups = [set(by_name()), set(LOCAL), set(INTERNAL)]
    for name in sorted(public):
        places = [g for g in groups if name in g]
        assert len(places) == 1, f"Engram.{name} is classified {len(places)} times"
    assert len(by_name()) == len(OPERATIONS), "an operation is listed twice"


def test_every_listed_operation_exists_and_every_route_is_served() -> None:
    routes_served = served()
    for op in OPERATIONS:
        assert callable(getattr(Engram, op.name, None)), f"no Engram.{op.name}"
        if op.route is not None:
            assert op.route in routes_served, f"{op.name}: {op.route} is not served"


def test_each_request_type_is_its_facade_methods_parameters() -> None:
    """Names, order and defaults: a request is a facade call, so they cannot drift apart."""
    for op in OPERATIONS:
        if op.request is None:
            continue
        local = inspect.signature(getattr(Engram, op.name)).parameters
        declared = inspect.signature(op.request).parameters
        named = [p for p, x in local.items() if p != "self" and x.kind != x.VAR_KEYWORD]
        assert list(declared) == named, op.name  # **fields: in-process only
        for name, param in declared.items():
            assert local[name].default == param.default, (op.name, name)
        if op.vault:
            assert op.vault in declared, op.name


def test_the_daemon_backed_engram_has_the_local_signature_of_each_routed_operation() -> None:
    for op in OPERATIONS:
        own = op.name in vars(DaemonEngram)
        sent = op.route is not None and op.name not in IN_PROCESS
        assert own == sent, f"{op.name}: route {op.route}, client {own}"
        if own and op.request is None:
            local = inspect.signature(getattr(Engram, op.name))
            remote = inspect.signature(getattr(DaemonEngram, op.name))
            assert list(remote.parameters) == list(local.parameters), op.name
            for name, param in local.parameters.items():
                assert remote.parameters[name].default == param.default, (op.name, name)


def test_operations_kept_in_process_have_a_route() -> None:
    ops = by_name()
    for name in IN_PROCESS:
        assert ops[name].route is not None, name


def test_discovery_capabilities_name_operations_the_daemon_serves() -> None:
    ops = by_name()
    for cap, name in CAPABILITIES.items():
        assert name in ops and ops[name].route is not None, cap


def test_the_client_sends_no_more_ledger_lines_than_the_route_takes() -> None:
    assert MAX_LINES == ledger_raw.MAX_LINES
