"""``eval --target`` against ``searchtrace serve``'s own HTTP app on the sample: the local eval's metrics, to the
same depth (recall@100 and map@100 included)."""

from __future__ import annotations

from pathlib import Path

import pytest
from serve_helpers import make_service, running

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"


def test_eval_target_against_the_served_sample_scores_as_the_local_eval(tmp_path, sample_config, sample_index_path,
                                                                         model):
    from opentelemetry.sdk.trace import TracerProvider

    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever.serve.batcher import BatchingEncoder
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings

    settings = EvalSettings(dataset=str(SAMPLE), mode="fast")  # the default depth, 100
    traces = TraceSettings.resolve(environ={})
    local = run_eval(settings, sample_config, out=tmp_path / "local", embedder=model, progress=False,
                     trace_settings=traces)
    encoder = BatchingEncoder(model)
    service = make_service([SAMPLE], sample_config, sample_index_path, encoder,
                           TracerProvider().get_tracer("test.serve"), timeout_s=30.0)
    service.open()
    try:
        with running(create_app(service)) as url:
            remote = run_eval(settings, sample_config, out=tmp_path / "remote", target=url, progress=False,
                              trace_settings=traces)
    finally:
        service.close()
        encoder.close()
    want, got = local.summary(), remote.summary()
    assert got.errors == 0 and got.evaluated_queries == want.evaluated_queries > 0
    assert {"recall@100", "map@100"} <= set(want.metrics)
    assert got.external is not None and (got.external.kind, got.external.source) == ("target", url)
    # The server embeds each query alone where the local eval embeds them in one batch: vectors agree
    # to about 1e-7, which may swap two near-tied documents deep in a ranking, never a metric by 1e-4.
    assert set(got.metrics) == set(want.metrics)
    for name, value in want.metrics.items():
        assert got.metrics[name] == pytest.approx(value, abs=1e-4), name
    local_top = {o.query_id: [d for d, _ in o.ranking][:10] for o in local.outcomes()}
    remote_top = {o.query_id: [d for d, _ in o.ranking][:10] for o in remote.outcomes()}
    assert sum(local_top[q] == remote_top[q] for q in local_top) >= 0.95 * len(local_top)
    assert got.depth == want.depth == settings.depth  # asked, answered and scored to the same depth
