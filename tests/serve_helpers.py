"""Running the served app for tests: uvicorn in a thread on an ephemeral loopback port, and a Service on the sample."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

import uvicorn


@contextmanager
def running(app: Any) -> Iterator[str]:
    """Serve ``app`` on 127.0.0.1 at a free port until the block ends; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


class SlowReranker:
    """Keeps the fused order, after sleeping ``seconds`` when the query contains ``slowly``."""

    name = "slow-for-tests"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def rerank(self, query: str, fused: Any, top_k: int) -> Any:
        if "slowly" in query:
            time.sleep(self.seconds)
        return fused


def make_service(datasets: list[Any], config: Any, index_path: Any, model: Any, tracer: Any, store: Any = None,
                 reranker: Any = None, worker: Any = None, **serve: Any) -> Any:
    """A Service on already built indexes (every dataset opens ``index_path``), not yet opened."""
    from searchtrace.retriever.index import open_index
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.retriever.serve.config import ServeConfig
    from searchtrace.retriever.serve.service import Service
    from searchtrace.traces import vocabulary

    def opener(path, cfg):
        return Retriever(open_index(index_path, cfg), model, cfg, tracer=tracer, reranker=reranker,
                         source=vocabulary.Source.HTTP)

    return Service(datasets, config, ServeConfig(**serve), opener, tracer=tracer, store=store, worker=worker)
