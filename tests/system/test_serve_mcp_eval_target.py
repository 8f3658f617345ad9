"""``eval --target mcp+http://.../mcp --tool search`` and ``mcp+stdio:searchtrace serve --mcp stdio ... --tool
search``: searchtrace's own MCP tool as a shaped target scores as the local eval (the depth, the metrics)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from serve_helpers import make_service, running

pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
REPO = SAMPLE.parents[1]


def _same_scores(local, remote) -> None:
    want, got = local.summary(), remote.summary()
    assert got.errors == 0 and got.evaluated_queries == want.evaluated_queries > 0
    # The server embeds each query alone where the local eval batches them: near-ties may swap deep down,
    # never a metric by 1e-4 (as eval --target URL's test).
    for name, value in want.metrics.items():
        assert got.metrics[name] == pytest.approx(value, abs=1e-4), name
    assert got.depth == want.depth


def test_the_served_mcp_search_tool_as_a_target_scores_as_the_local_eval(tmp_path, sample_config, sample_index_path,
                                                                          model):
    from opentelemetry.sdk.trace import TracerProvider

    from searchtrace.evals import EvalSettings
    from searchtrace.evals.runs.execution import run_eval
    from searchtrace.retriever.serve.batcher import BatchingEncoder
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings

    settings = EvalSettings(dataset=str(SAMPLE), mode="fast")
    traces = TraceSettings.resolve(environ={})
    local = run_eval(settings, sample_config, out=tmp_path / "local", embedder=model, progress=False,
                     trace_settings=traces)
    encoder = BatchingEncoder(model)
    service = make_service([SAMPLE], sample_config, sample_index_path, encoder,
                           TracerProvider().get_tracer("test.serve"), timeout_s=30.0)
    service.open()
    try:
        with running(create_app(service)) as url:
            remote = run_eval(settings, sample_config, out=tmp_path / "mcp-http", progress=False,
                              target=f"mcp+{url}/mcp --tool search", trace_settings=traces)
    finally:
        service.close()
        encoder.close()
    _same_scores(local, remote)
    command = (f"{sys.executable} -m searchtrace serve --mcp stdio {SAMPLE} --home {sample_config.home.root} "
               "--no-progress")
    stdio = run_eval(settings, sample_config, out=tmp_path / "mcp-stdio", progress=False,
                     target=f"mcp+stdio:{command} --tool search", trace_settings=traces)
    _same_scores(local, stdio)
