"""A small file system of a test's own, for real "no space left" and "read-only" errors.

`unshare --user --map-root-user --mount` gives a process a private mount namespace without
being root (where user namespaces are allowed; CI's root can always): there a tmpfs is
mounted over a folder, keeping what the folder held, then filled to the last block or made
read-only. Nothing outside the namespace sees it, and it is gone when the process ends.

Run as a script it is that process: it answers one JSON request per line on stdin (mount,
fill, readonly, run an engram command, hash a tree, serve, stop), or with `--exec` sets the
file systems up from its arguments and becomes the given command (an MCP server).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SIZE = 2 << 20  # bytes: room for a small vault, or a small index


@cache
def available() -> bool:
    """Can this machine give a process a mount namespace with its own tmpfs?"""
    if shutil.which("unshare") is None:
        return False
    probe = "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d && umount $d; rmdir $d"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", probe], capture_output=True)
    return done.returncode == 0


def command(*prelude: str) -> list[str]:
    """The argv that starts this script in a namespace of its own."""
    return ["unshare", "-rm", sys.executable, str(Path(__file__).resolve()), *prelude]


class Namespace:
    """This script running in its own mount namespace, asked one request at a time."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, **env},
            text=True,
        )

    def ask(self, **request: Any) -> Any:
        """Send one request, return its answer."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the namespace process ended ({self.proc.wait()})"
        return json.loads(line)

    def close(self) -> None:
        """End the process (and the daemon it serves, and its file systems)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


def mount(folder: str, size: int = SIZE) -> None:
    """A tmpfs of `size` bytes over `folder`, holding what the folder held."""
    keep = tempfile.mkdtemp()
    shutil.copytree(folder, keep, dirs_exist_ok=True, symlinks=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", folder], check=True)
    shutil.copytree(keep, folder, dirs_exist_ok=True, symlinks=True)
    shutil.rmtree(keep)


def fill(folder: str) -> int:
    """Fill the file system of `folder` to the last block; the bytes it took."""
    written = 0
    with open(Path(folder, ".filler"), "wb", buffering=0) as out:
        block = b"\0" * 4096
        while True:
            try:
                written += out.write(block)
            except OSError:  # ENOSPC: full
                return written


def tree(folder: str) -> dict[str, str]:
    """Every file under `folder` but the filler: path -> sha256."""
    root = Path(folder)
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".filler"
    }


def run(args: list[str]) -> dict[str, Any]:
    """`engram ARGS`: its exit code and output."""
    done = subprocess.run(
        [sys.executable, "-m", "engram", *args], capture_output=True, text=True, timeout=120
    )
    return {"code": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def answer(request: dict[str, Any], state: dict[str, Any]) -> Any:
    """One request's answer."""
    if "mount" in request:
        mount(request["mount"], request.get("size", SIZE))
        return True
    if "fill" in request:
        return fill(request["fill"])
    if "readonly" in request:
        subprocess.run(["mount", "-o", "remount,ro", request["readonly"]], check=True)
        return True
    if "run" in request:
        return run(request["run"])
    if "tree" in request:
        return tree(request["tree"])
    if "serve" in request:
        sys.path.insert(0, str(HERE / "server"))
        from server_helpers import Daemon

        vault = Path(request["serve"])
        state["daemon"] = daemon = Daemon({}, vault, Path(request["log"]))
        info = daemon.wait_ready()
        daemon.wait_indexed()
        return {"url": info["url"], "token": info["token"]}
    if "stop" in request:
        return state.pop("daemon").stop()
    raise ValueError(f"unknown request {request}")


def main(argv: list[str]) -> None:
    """Set up from `--mount DIR`, `--fill DIR` and exec `--exec CMD...`, or serve stdin."""
    if argv:
        rest = list(argv)
        while rest and rest[0] != "--exec":
            flag, folder = rest.pop(0), rest.pop(0)
            mount(folder) if flag == "--mount" else fill(folder)
        os.execvp(rest[1], rest[1:])
    state: dict[str, Any] = {}
    try:
        for line in sys.stdin:
            print(json.dumps(answer(json.loads(line), state)), flush=True)
    finally:
        if "daemon" in state:
            state["daemon"].stop()


if __name__ == "__main__":
    main(sys.argv[1:])
