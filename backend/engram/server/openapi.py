"""The daemon's OpenAPI document, generated: the routes of the declared operations
(service/operations.py) from their request and result types, added to openapi_base.json (the
routes that are not operations: health, status, index, the active note, token rotation, and
those still written by hand). The served `/v1/openapi.json` and `openapi.json` in the repo
are this output; a test fails when the file is stale:

    python -m engram.server.openapi > backend/engram/server/openapi.json
"""

from __future__ import annotations

import copy
import json
import re
import sys
from functools import cache
from importlib import resources
from typing import Any

from engram import codec
from engram.service.operations import OPERATIONS, Operation, result_type

ERRORS = {
    "400": "BadRequest",
    "401": "Unauthorized",
    "403": "Forbidden",
    "404": "NotFound",
    "413": "TooLarge",
    "414": "UriTooLong",
    "default": "Error",
}
WRITE_ERRORS = {"409": "Conflict", "503": "Unavailable"}


@cache
def document() -> dict[str, Any]:
    """The whole document."""
    base = resources.files("engram.server").joinpath("openapi_base.json").read_text("utf-8")
    out: dict[str, Any] = json.loads(base)
    schemas = out["components"]["schemas"]
    for op in OPERATIONS:
        if op.request is None or op.route is None:
            continue
        method, path = op.route.split(" ", 1)
        out["paths"].setdefault(path, {})[method.lower()] = _operation(op, method, path, schemas)
    out["paths"] = dict(sorted(out["paths"].items()))
    out["components"]["schemas"] = dict(sorted(schemas.items()))
    return out


def _operation(op: Operation, method: str, path: str, schemas: dict[str, Any]) -> dict[str, Any]:
    assert op.request is not None
    doc = (op.request.__doc__ or "").strip()
    out: dict[str, Any] = {"operationId": op.name, "summary": doc.split("\n\n")[0]}
    in_path = set(re.findall(r"{(\w+)}", path))
    fields = codec.fields_of(op.request)
    params = [
        {"name": f.wire, "in": "path", "required": True, "schema": codec.schema(f.hint, f.meta)}
        for f in fields
        if f.wire in in_path
    ]
    if method in ("GET", "DELETE"):
        params += [
            {"name": f.wire, "in": "query", "required": f.required}
            | {"schema": codec.schema(f.hint, f.meta)}
            for f in fields
            if f.wire not in in_path
        ]
    else:
        body = codec.object_schema(op.request, schemas)
        for name in in_path:
            body["properties"].pop(name, None)
            body["required"] = [r for r in body.get("required", ()) if r != name]
        if not body.get("required"):
            body.pop("required", None)
        schemas[op.request.__name__] = body
        ref = {"$ref": f"#/components/schemas/{op.request.__name__}"}
        out["requestBody"] = {"required": True, "content": {"application/json": {"schema": ref}}}
    if params:
        out["parameters"] = params
    status = "201" if op.created else "200"
    out["responses"] = {status: _reply(op, schemas)} | {
        code: {"$ref": f"#/components/responses/{name}"}
        for code, name in (ERRORS | (WRITE_ERRORS if op.effect == "write" else {})).items()
    }
    return out


def _reply(op: Operation, schemas: dict[str, Any]) -> dict[str, Any]:
    result = codec.schema(result_type(op), None, schemas, encoded=True)
    if op.reply:
        result = {
            "type": "object",
            "properties": {op.reply: result},
            "required": [op.reply],
            "additionalProperties": False,
        }
    return {"description": "OK", "content": {"application/json": {"schema": result}}}


def text() -> str:
    """The document as the file in the repo holds it."""
    return json.dumps(copy.deepcopy(document()), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(text())
