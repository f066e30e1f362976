"""Fuzz the daemon with schemathesis against its own OpenAPI document (/v1/openapi.json).

Property: no request, valid or not, gets a 5xx answer, except a 503 `unavailable` from a route
whose OpenAPI operation documents it (a capability that is not set up here: sync not
configured, vector search with no embeddings). The server's access log is the witness: the
script counts every status it logged. Schemathesis also checks that statuses, content types
and bodies match the document and that schema-violating input is refused. Loopback only,
bounded by --max-examples per operation and --max-time. Needs `pip install schemathesis`.

    python scripts/fuzz_server.py [--max-examples 100] [--max-time 300] [--seed 1]
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import serve_harness

from engram.server.openapi import document as openapi_document

EXAMPLE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "vaults" / "example"
LOGGED = re.compile(r"aiohttp\.access: (\S+) (\S*) (\d{3}) ")
# Responses are checked too: statuses, content types and bodies must match the document.
CHECKS = (
    "not_a_server_error,status_code_conformance,content_type_conformance,"
    "response_schema_conformance,negative_data_rejection"
)


def failures(events: Path) -> tuple[list[str], collections.Counter[str]]:
    """Failed checks that are real findings, as "check: operation -> status" lines, and
    how many of each kind were set aside.

    Left out: any-5xx (judged from the server log above, against the documented 503s) and
    schema-violating input answered 413/414 (too large / too long: a refusal schemathesis
    does not count as one).
    """
    out: list[str] = []
    ignored: collections.Counter[str] = collections.Counter()
    for line in events.read_text().splitlines():
        finished = json.loads(line).get("ScenarioFinished")
        if not finished:
            continue
        recorder = finished["recorder"]
        for case_id, checks in (recorder.get("checks") or {}).items():
            response = (recorder.get("interactions") or {}).get(case_id, {}).get("response")
            status = (response or {}).get("status_code")
            for check in checks:
                if check.get("status") != "failure":
                    continue
                if check["name"] == "not_a_server_error" or (
                    check["name"] == "negative_data_rejection" and status in (413, 414)
                ):
                    ignored[f"{check['name']} answered {status}"] += 1
                    continue
                out.append(f"{check['name']}: {recorder['label']} -> {status}")
    return out, ignored


def main() -> None:
    """Start a daemon on a copy of the example vault, fuzz it, report the statuses."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-examples", type=int, default=100)
    ap.add_argument("--max-time", type=int, default=300, help="Seconds for the whole run.")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    st = shutil.which("schemathesis") or shutil.which("st")
    if st is None:
        sys.exit("schemathesis is not installed: pip install schemathesis")
    work = Path(tempfile.mkdtemp(prefix="engram-fuzz-"))
    vault = work / "vault"
    shutil.copytree(EXAMPLE, vault)
    print(f"machine: {serve_harness.machine()}")
    server = serve_harness.start(vault, work)
    server.wait_idle()
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            [
                st,
                "run",
                f"{server.url}/v1/openapi.json",
                "--header",
                f"Authorization: Bearer {server.token}",
                "--checks",
                CHECKS,
                "--max-examples",
                str(args.max_examples),
                "--max-time",
                str(args.max_time),
                "--seed",
                str(args.seed),
                "--generation-database",
                "none",
                "--workers",
                "2",
                "--no-color",
                "--output-sanitize",
                "true",
                # rotating the token would lock the fuzzer out (tests cover rotation)
                "--exclude-operation-id",
                "rotateToken",
                "--generation-with-security-parameters",
                "false",
                "--report",
                "json,ndjson",
                "--report-json-path",
                str(work / "report.json"),
                "--report-ndjson-path",
                str(work / "events.ndjson"),
            ],
            capture_output=True,
            text=True,
            timeout=args.max_time + 600,
            cwd=work,  # schemathesis keeps a cache folder in its working directory
        )
    finally:
        code = server.stop()
    summary = proc.stdout.split("SUMMARY", 1)[-1].strip().splitlines()
    print("schemathesis summary:\n" + "\n".join(summary).replace(server.token, "<token>"))
    logged = [m.groups() for m in LOGGED.finditer(server.log.read_text())]
    statuses = collections.Counter(status for _, _, status in logged)
    documented = {
        (method.upper(), path)
        for path, ops in openapi_document()["paths"].items()
        for method, op in ops.items()
        if isinstance(op, dict) and "503" in op.get("responses", {})
    }
    unexpected = [
        f"{method} {path} {status}"
        for method, path, status in logged
        if status.startswith("5") and not (status == "503" and (method, path) in documented)
    ]
    report = json.loads((work / "report.json").read_text())
    other, ignored = failures(work / "events.ndjson")
    print(
        f"\n{len(logged)} requests in {time.perf_counter() - started:.0f}s; statuses logged "
        "by the server: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items()))
    )
    print(
        f"5xx other than a documented 503: {len(unexpected)} (target 0) "
        + " ".join(unexpected[:5])
    )
    print(
        "set aside (documented answers): "
        + (", ".join(f"{k}: {n}" for k, n in sorted(ignored.items())) or "none")
    )
    print(f"other schemathesis failures: {len(other)}")
    for line in sorted(set(other))[:20]:
        print(f"  {line}")
    print(f"schemathesis errors: {report['errors'] or 'none'}; daemon exit code {code}")
    print(f"after the run: {serve_harness.machine()}; report in {work / 'report.json'}")
    sys.exit(1 if unexpected or other else 0)


if __name__ == "__main__":
    main()
