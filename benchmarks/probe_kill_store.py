"""``kill -9`` under load with the shared store up, and with it down: answered searches whose traces are kept.

Usage:
    python benchmarks/probe_kill_store.py DATASET --home HOME [--answers 400] [--clients 6] [--rounds 2]

Starts a PostgreSQL of its own (Debian's ``postgresql``, as the tests do:
``tests/postgres_server.py``), migrates a database, then each round runs
``searchtrace serve DATASET --store URL`` (the index already built in HOME;
each round in a home of its own that links HOME's index and cache) on a
loopback port under ``--clients`` threads of searches:

- ``up``: the store stays up; after ``--answers`` answers the server gets SIGKILL.
- ``down``: the store is stopped after half the answers (the searches go on,
  their spans held and spilled to the home); after ``--answers`` the server
  gets SIGKILL, the store is started, and a server started again from the same
  home writes what was spilled; it is stopped once the count settles.

Then the store is read: of the answered traces, how many are stored; of those
missing, how many ``traces.losses`` counts (``searchtrace traces status``).
Prints JSON; exit 1 when an answered trace is neither stored nor counted lost.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
from bench_kill import _serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from postgres_server import PostgresServer  # noqa: E402


def _home(base: Path, source: Path, name: str) -> Path:
    home = base / name
    (home / "indexes").mkdir(parents=True)
    for index in (source / "indexes").iterdir():
        if index.is_dir() and not index.name.startswith("."):
            (home / "indexes" / index.name).symlink_to(index.resolve(), target_is_directory=True)
    (home / "cache").symlink_to((source / "cache").resolve(), target_is_directory=True)
    return home


def _load(url: str, answers: int, clients: int, halfway: threading.Event | None,
          on_half: Any) -> list[str]:
    """Search from ``clients`` threads until ``answers`` answers; ``on_half`` runs once at half of them."""
    answered: list[str] = []
    lock = threading.Lock()
    done = threading.Event()

    def client(k: int) -> None:
        with httpx.Client(timeout=60) as session:
            for i in range(answers):  # bounded: at most `answers` requests per client
                if done.is_set():
                    return
                try:
                    r = session.post(f"{url}/v1/search", json={"query": f"storm harbour ship {k} {i}", "top_k": 5})
                except httpx.HTTPError:
                    return
                with lock:
                    if r.status_code == 200 and not done.is_set():
                        answered.append(r.headers["x-trace-id"])
                        if halfway is not None and len(answered) >= answers // 2 and not halfway.is_set():
                            halfway.set()
                            on_half()
                        if len(answered) >= answers:
                            done.set()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(900)
    return answered


def _stored(store_url: str, ids: list[str]) -> int:
    from searchtrace.database import StoreUrl
    from searchtrace.traces.store.opening import open_trace_store

    store = open_trace_store(Path("unused.sqlite"), StoreUrl(store_url))
    try:
        return len(store.stored(ids))
    finally:
        store.close()


def _losses(home: Path, store_url: str) -> str:
    done = subprocess.run([sys.executable, "-m", "searchtrace", "traces", "status", "--home", str(home),
                           "--store", store_url], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "SEARCHTRACE_OTLP": "0"})
    return "\n".join(line for line in (done.stdout + done.stderr).splitlines() if "lost" in line or "spans:" in line)


def _round(dataset: Path, home: Path, pg: PostgresServer, store_url: str, down: bool, answers: int,
           clients: int) -> dict[str, Any]:
    env = {"SEARCHTRACE_STORE": store_url}
    process, url = _serve(dataset, home, ack=True, workers=1, env=env)
    answered = _load(url, answers, clients, threading.Event() if down else None, lambda: pg.stop("immediate"))
    os.kill(process.pid, signal.SIGKILL)
    process.wait(60)
    row: dict[str, Any] = {"store": "down at half" if down else "up", "answered": len(answered)}
    if down:
        pg.start()
        again, _ = _serve(dataset, home, ack=True, workers=1, env=env)  # writes what the killed one spilled
        deadline, last, steady = time.monotonic() + 120, -1, 0
        while time.monotonic() < deadline and steady < 5:  # settled: the same count five seconds running
            now = _stored(store_url, answered)
            steady = steady + 1 if now == last else 0
            last = now
            time.sleep(1)
        again.terminate()
        again.wait(60)
    stored = _stored(store_url, answered)
    row.update(stored=stored, missing=len(answered) - stored, losses=_losses(home, store_url))
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--answers", type=int, default=400)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import tempfile

    pg = PostgresServer(durable=True, crash_safe=True).setup()  # a commit acknowledged is kept
    rows = []
    try:
        store_url = pg.new_database()
        subprocess.run([sys.executable, "-m", "searchtrace", "store", "migrate", "--store", store_url], check=True,
                       capture_output=True, text=True, timeout=120)
        with tempfile.TemporaryDirectory(prefix="probe-kill-") as base:
            for r in range(args.rounds):
                for down in (False, True):
                    home = _home(Path(base), args.home, f"r{r}-{'down' if down else 'up'}")
                    rows.append(_round(args.dataset, home, pg, store_url, down, args.answers, args.clients))
                    print(json.dumps(rows[-1]), file=sys.stderr)
    finally:
        pg.teardown()
    print(json.dumps(rows, indent=1))
    return 1 if any(r["missing"] and "lost none" in r["losses"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
