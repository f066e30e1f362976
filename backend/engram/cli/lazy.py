"""Start-up cost: a library every command imports but few commands use runs on first use.

The facade brings in the Convex sync client, and with it aiohttp: about a third of the time a
short command such as a no-op `engram update` takes, although only `serve`, `sync` and deep
search talk HTTP. A deferred module is registered empty (its spec, name and search path set,
so `import` statements and submodule imports work) and runs its code the first time another
attribute is read, in the same module object, so every importer sees the real module.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
import types
from importlib.machinery import ModuleSpec
from typing import Any

DEFERRED = ("aiohttp",)
# read by the import system itself (an `import` of a module already in sys.modules, a
# submodule import); answering them must not run the module
_IMPORT_ATTRS = frozenset(
    {"__spec__", "__name__", "__path__", "__loader__", "__package__", "__file__", "__class__"}
)
_lock = threading.RLock()


class _Deferred(types.ModuleType):
    """A module whose code has not run yet; the first other attribute read runs it."""

    def __getattribute__(self, name: str) -> Any:
        if name in _IMPORT_ATTRS or name == "__dict__":
            return super().__getattribute__(name)
        with _lock:
            if type(self) is _Deferred:  # not loaded by another thread meanwhile
                spec: ModuleSpec = super().__getattribute__("__spec__")
                object.__setattr__(self, "__class__", types.ModuleType)
                try:
                    assert spec.loader is not None
                    spec.loader.exec_module(self)
                except BaseException:
                    sys.modules.pop(spec.name, None)  # the next import starts afresh
                    raise
        return getattr(self, name)


def defer(*names: str) -> None:
    """Register each module to run on first use; no-op when it is already imported."""
    for name in names:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            continue
        module = importlib.util.module_from_spec(spec)
        module.__class__ = _Deferred
        sys.modules[name] = module
