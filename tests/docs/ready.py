"""Wait until a process started in the background (or one of its children) listens on a TCP
port: a docs block's next command may call the server it started. Exit 1, saying why, when it
exits first or is not listening within a minute and a half."""

from __future__ import annotations

import sys
import time

import psutil


def listening(pid: int) -> bool | None:
    """Whether the process tree listens; None once the process is gone."""
    try:
        root = psutil.Process(pid)
        if root.status() == psutil.STATUS_ZOMBIE:
            return None
        tree = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return None
    for process in tree:
        try:
            if any(c.status == psutil.CONN_LISTEN for c in process.net_connections("tcp")):
                return True
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return False


def main(pid: int, wait: float = 90.0) -> int:
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        state = listening(pid)
        if state:
            return 0
        if state is None:
            print(f"docs-run: the background command (pid {pid}) exited before it listened")
            return 1
        time.sleep(0.2)
    print(f"docs-run: the background command (pid {pid}) is not listening after {wait:g} s")
    return 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
