"""Concurrency: one Retriever searched from many threads, and the query-embedding micro-batcher.

The stress test runs 8 threads x ``SEARCHTRACE_STRESS_SEARCHES`` mixed searches
(default 60 per thread to keep CI fast; the issue's 500 with
``SEARCHTRACE_STRESS_SEARCHES=500``) and checks the responses equal the same
searches run one at a time, and that the trace store holds exactly one trace per search.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

THREADS = 8
PER_THREAD = int(os.environ.get("SEARCHTRACE_STRESS_SEARCHES", "60"))


def _mixed_requests(dataset, n):
    """``n`` requests cycling over the sample's queries, modes, sizes, filters and the debug flag."""
    shapes = [{}, {"mode": "fast"}, {"mode": "graph", "depth": 2}, {"top_k": 10, "candidates": 50},
              {"collection": "biographies"}, {"debug": True}, {"min_relevance": 0.4}]
    queries = [q.text for q in dataset.queries]
    return [{"query": queries[i % len(queries)], **shapes[i % len(shapes)]} for i in range(n)]


def _without_trace(response):
    return replace(response, trace_id="")


@pytest.mark.slow
def test_concurrent_searches_equal_serial_ones_with_one_trace_each(tmp_path, sample_index_path, sample_config,
                                                                  sample_dataset, model):
    from searchtrace.home import Home
    from searchtrace.retriever.index import open_index
    from searchtrace.retriever.search.pipeline import Retriever
    from searchtrace.retriever.serve.service import Variant, variant_config
    from searchtrace.traces import TraceFilter, TraceSettings, make_tracer_provider

    provider, handles = make_tracer_provider(Home(tmp_path), TraceSettings(store=True, schedule_delay_ms=200))
    tracer = provider.get_tracer("test.stress")
    index = open_index(sample_index_path, sample_config)
    retrievers = [Retriever(index, model, variant_config(sample_config, v), tracer=tracer) for v in Variant]
    requests = _mixed_requests(sample_dataset, THREADS * PER_THREAD)
    jobs = [(retrievers[i % len(retrievers)], r) for i, r in enumerate(requests)]
    serial = [_without_trace(r.search(req)) for r, req in jobs]
    handles.flush_store()
    before = handles.store.count(TraceFilter(limit=None))

    barrier = threading.Barrier(THREADS)

    def worker(t):
        barrier.wait()
        return [(i, jobs[i][0].search(jobs[i][1])) for i in range(t, len(jobs), THREADS)]

    with ThreadPoolExecutor(THREADS) as pool:
        done = [pair for part in pool.map(worker, range(THREADS)) for pair in part]
    concurrent = dict(done)
    assert len(concurrent) == len(jobs)
    mismatched = [i for i in range(len(jobs)) if _without_trace(concurrent[i]) != serial[i]]
    assert not mismatched, f"{len(mismatched)} of {len(jobs)} differ, first {jobs[mismatched[0]][1]}"
    ids = {r.trace_id for r in concurrent.values()}
    assert len(ids) == len(jobs)
    assert handles.flush_store()
    assert handles.store.count(TraceFilter(limit=None)) - before == len(jobs)
    assert set(handles.store.stored(sorted(ids))) == ids
    index.close()
    handles.shutdown()


class CountingEncoder:
    """A stand-in model: a vector from the text's bytes; each call takes ``delay`` seconds."""

    model_id = "counting"
    dim = 4

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.batches: list[int] = []

    def _vec(self, text):
        v = np.array([len(text), sum(text.encode()), text.count("a") + 1, 1.0], dtype=np.float32)
        return v / np.linalg.norm(v)

    def encode_query(self, text):
        time.sleep(self.delay)
        self.batches.append(1)
        return self._vec(text)

    def encode_queries(self, texts):
        time.sleep(self.delay)
        self.batches.append(len(texts))
        return np.stack([self._vec(t) for t in texts])

    def encode_documents(self, texts, batch_size=64, progress=False):
        return self.encode_queries(texts)


def test_concurrent_queries_share_model_calls_and_get_their_own_vectors():
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    inner = CountingEncoder(delay=0.05)
    batcher = BatchingEncoder(inner)
    texts = [f"query number {i} " + "a" * i for i in range(32)]
    with ThreadPoolExecutor(32) as pool:
        vectors = list(pool.map(batcher.encode_query, texts))
    for text, vector in zip(texts, vectors):
        np.testing.assert_array_equal(vector, inner._vec(text))
    assert sum(inner.batches) == 32 and batcher.queries == 32
    assert len(inner.batches) <= 8, inner.batches  # 32 queries at once: a few calls, not 32
    assert max(inner.batches) > 1
    batcher.close()


def test_a_lone_query_is_not_delayed_and_takes_the_single_query_path():
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    inner = CountingEncoder(delay=0.0)
    batcher = BatchingEncoder(inner)
    for i in range(5):
        batcher.encode_query(f"q{i}")
    assert inner.batches == [1] * 5
    batcher.close()


def test_a_lone_query_runs_in_the_callers_thread_and_model_calls_never_overlap():
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    class Watching(CountingEncoder):
        def __init__(self) -> None:
            super().__init__(delay=0.01)
            self.threads: list[str] = []
            self.running = self.most_at_once = 0
            self.lock = threading.Lock()

        def _watch(self, call, arg):
            with self.lock:
                self.running += 1
                self.most_at_once = max(self.most_at_once, self.running)
                self.threads.append(threading.current_thread().name)
            try:
                return call(arg)
            finally:
                with self.lock:
                    self.running -= 1

        def encode_query(self, text):
            return self._watch(super().encode_query, text)

        def encode_queries(self, texts):
            return self._watch(super().encode_queries, texts)

    inner = Watching()
    batcher = BatchingEncoder(inner)
    batcher.encode_query("alone")
    assert inner.threads == [threading.current_thread().name]  # no hand-over to the batcher's thread
    texts = [f"q{i}" for i in range(48)]
    with ThreadPoolExecutor(16) as pool:
        vectors = list(pool.map(batcher.encode_query, texts))
    for text, vector in zip(texts, vectors):
        np.testing.assert_array_equal(vector, inner._vec(text))
    assert inner.most_at_once == 1
    assert batcher.queries == 49 == sum(inner.batches) and batcher.calls == len(inner.batches) < 49
    batcher.close()


def test_a_window_gathers_queries_arriving_just_after_the_first():
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    inner = CountingEncoder(delay=0.0)
    batcher = BatchingEncoder(inner, window_ms=100)
    with ThreadPoolExecutor(4) as pool:
        futures = []
        for i in range(4):
            futures.append(pool.submit(batcher.encode_query, f"q{i}"))
            time.sleep(0.01)
        [f.result() for f in futures]
    assert inner.batches == [4]
    batcher.close()


def test_a_model_failure_reaches_every_caller_of_the_batch_and_the_worker_carries_on():
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    class Failing(CountingEncoder):
        fail = True

        def encode_query(self, text):
            if self.fail:
                self.fail = False
                raise RuntimeError("model broke")
            return super().encode_query(text)

    batcher = BatchingEncoder(Failing(0.0))
    with pytest.raises(RuntimeError, match="model broke"):
        batcher.encode_query("first")
    assert batcher.encode_query("second").shape == (4,)
    batcher.close()


@pytest.mark.slow
def test_batched_vectors_match_the_models_own(model):
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    batcher = BatchingEncoder(model)
    texts = ["hot springs of Emberly", "who wrote the first medical book", "siege of Marrowgate", "gout cure"]
    with ThreadPoolExecutor(len(texts)) as pool:
        vectors = list(pool.map(batcher.encode_query, texts))
    for text, vector in zip(texts, vectors):
        np.testing.assert_allclose(vector, model.encode_query(text), atol=2e-5)
    batcher.close()


@pytest.mark.slow
def test_a_server_files_query_vectors_under_the_models_own_cache_key(model, tmp_path):
    """The batcher is keyed as the model is: what a server embeds, the CLI and an eval reuse (and back)."""
    from searchtrace.retriever.embedding.cache import EmbeddingCache, embed_with_cache
    from searchtrace.retriever.embedding.encoder import cache_identity
    from searchtrace.retriever.serve.batcher import BatchingEncoder

    batcher = BatchingEncoder(model)
    try:
        assert cache_identity(batcher) == cache_identity(model) != model.model_id
        with EmbeddingCache(tmp_path / "embeddings.sqlite") as cache:
            embed_with_cache(batcher, cache, ["hot springs of Emberly", "siege of Marrowgate"])
            again = embed_with_cache(model, cache, ["hot springs of Emberly", "siege of Marrowgate"])
        assert again.embedded == 0
    finally:
        batcher.close()
