"""The one list of operations (service/operations.py) against what serves and calls them:
the facade's public names, the daemon's routes, the daemon-backed Engram and discovery."""

from __future__ import annotations

import inspect

from engram.server import routes, routes_ops
from engram.service import Engram
from engram.service.daemon import DaemonEngram
from engram.service.operations import (
    CAPABILITIES,
    INTERNAL,
    LOCAL,
    OPERATIONS,
    by_name,
)


def served() -> set[str]:
    """Every "METHOD /path" the daemon's app serves."""
    out = set()
    tables = (routes, routes_ops)
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


def test_each_request_type_is_its_facade_methods_parameters(engram: Engram) -> None:
    """Names, order and defaults: a request is a facade call, so they cannot drift apart."""
    for op in OPERATIONS:
        if op.request is None:
            continue
        local = inspect.signature(getattr(engram, op.name)).parameters  # bound: no self
        declared = inspect.signature(op.request).parameters
        named = [p for p, x in local.items() if x.kind != x.VAR_KEYWORD]
        assert list(declared) == named, op.name  # **fields: in-process only
        for name, param in declared.items():
            assert local[name].default == param.default, (op.name, name)
        if op.vault:
            assert op.vault in declared, op.name


def test_every_operation_with_a_route_is_declared_and_sent() -> None:
    """A route without a request type would be hand-written again; the daemon-backed Engram
    sends each declared operation (none is kept in-process by a method of its own)."""
    for op in OPERATIONS:
        assert (op.route is None) == (op.request is None), op.name
        assert (op.name in vars(DaemonEngram)) == (op.route is not None), op.name
        if op.route is not None:
            assert op.result is not None, op.name


def test_discovery_capabilities_name_operations_the_daemon_serves() -> None:
    ops = by_name()
    for cap, name in CAPABILITIES.items():
        assert name in ops and ops[name].route is not None, cap
