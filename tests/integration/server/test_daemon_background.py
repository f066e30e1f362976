"""A real `engram serve` embedding a vault with MiniLM: searches are answered while the embed
runs (not after it), and the threads doing the embedding run at the lowest CPU priority."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from server_helpers import NO_KEYRING, Daemon

WORDS = [
    "protein",
    "cell",
    "membrane",
    "receptor",
    "signal",
    "pathway",
    "gene",
    "expression",
    "tumour",
    "growth",
    "vaccine",
    "antibody",
    "response",
    "infection",
    "dose",
    "trial",
    "patient",
    "outcome",
    "risk",
    "cohort",
    "blood",
    "pressure",
    "heart",
    "kidney",
    "liver",
    "brain",
    "neuron",
    "memory",
    "sleep",
    "diet",
    "exercise",
    "insulin",
    "glucose",
    "obesity",
]


def thread_nice(pid: int) -> dict[int, int]:
    """Nice value of each thread of `pid` (Linux /proc: field 19 of each task's stat)."""
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended meanwhile
            continue
        out[int(task.name)] = int(stat.rsplit(")", 1)[1].split()[16])
    return out


def write_notes(folder: Path, numbers: range) -> None:
    """Notes with distinct texts: each passage needs its own vector."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in numbers:
        body = " ".join(WORDS[(i * k + k * k) % len(WORDS)] for k in range(1, 90))
        (folder / f"note {i}.md").write_text(f"# Study {i}\n\n{body} number {i}.\n")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_searches_answer_while_the_daemon_embeds_at_low_priority(
    xdg: dict[str, str], tmp_path: Path, minilm: Path
) -> None:
    vault = tmp_path / "vault"
    write_notes(vault, range(8))
    env = {**xdg, **NO_KEYRING, "ENGRAM_EMBED_MODEL": str(minilm), "ENGRAM_THREADS": "2"}
    cli = [sys.executable, "-m", "engram"]
    run = {"env": {**os.environ, **env}, "check": True, "capture_output": True, "timeout": 300}
    subprocess.run([*cli, "collection", "add", str(vault), "--name", "vault"], **run)
    subprocess.run([*cli, "embed"], **run)  # vectors to search while the daemon embeds more
    write_notes(vault, range(8, 72))
    d = Daemon(env, vault, tmp_path / "serve.log", "--no-watch")
    try:
        d.wait_ready()
        deadline = time.monotonic() + 120
        while True:  # until the start-up job embeds the new notes, with its llama.cpp workers
            st = d.call("GET", "/v1/status")[1]
            niced = [tid for tid, nice in thread_nice(d.proc.pid).items() if nice == 19]
            if st["chunks"] > st["embedded"] and len(niced) >= 2:
                break  # the writer thread and the llama.cpp worker it started (2 threads)
            assert time.monotonic() < deadline, (st, thread_nice(d.proc.pid))
            time.sleep(0.05)
        assert d.proc.pid not in niced  # the main thread (event loop) keeps its priority
        for mode in ("search", "vsearch"):
            code, hits = d.call("POST", f"/v1/{mode}", {"q": "insulin glucose"})
            assert code == 200 and hits, (mode, hits)
            st = d.call("GET", "/v1/status")[1]
            assert st["chunks"] > st["embedded"], f"{mode} was answered only after the embed"
    finally:  # killed: a graceful stop waits for the batch in progress, slow at nice 19
        d.proc.kill()
        d.proc.wait()
