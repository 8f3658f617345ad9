"""The served API against its own OpenAPI document, by a fuzzer nobody in this project wrote.

schemathesis reads ``/openapi.json`` from a live server on loopback and sends
requests generated from it, valid and invalid, with every check on: no 5xx, a
status and a body the document declares, schema-valid requests accepted and
invalid ones refused. Bounded: a fixed number of examples per operation, no
shrinking past a deadline.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

import schemathesis  # noqa: E402
from hypothesis import HealthCheck, Phase, settings  # noqa: E402
from serve_helpers import make_service, running  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample"
EXAMPLES = 40  # per operation: about 10 operations, a minute in all


@pytest.fixture(scope="module")
def api(tmp_path_factory, sample_index_path, sample_config, model):
    from searchtrace.home import Home
    from searchtrace.retriever.serve.batcher import BatchingEncoder
    from searchtrace.retriever.serve.http import create_app
    from searchtrace.traces import TraceSettings, make_tracer_provider

    home = Home(tmp_path_factory.mktemp("contract-home"))
    provider, handles = make_tracer_provider(home, TraceSettings(store=True, schedule_delay_ms=200))
    encoder = BatchingEncoder(model)
    service = make_service([SAMPLE], sample_config, sample_index_path, encoder, provider.get_tracer("contract"),
                           store=handles.store, timeout_s=30, max_inflight=64)
    service.open()
    with running(create_app(service)) as url:
        yield url
    service.close()
    encoder.close()
    handles.shutdown()


#: A request the schema does not allow must be refused with one of these. Beside schemathesis's own list:
#: 413, since a generated body over the server's 64 KiB limit is refused by its size before a field is read.
REFUSALS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5XX"]


def _operations(url: str) -> list:
    from schemathesis.config import SchemathesisConfig

    config = SchemathesisConfig.from_dict({"checks": {"negative_data_rejection": {"expected-statuses": REFUSALS}}})
    loaded = schemathesis.openapi.from_url(f"{url}/openapi.json", config=config)
    return [result.ok() for result in loaded.get_all_operations()]  # type: ignore[union-attr]  # an Err raises


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_the_api_keeps_its_own_contract(api, mode):
    """Every operation, with requests its schema allows (all must be answered 2xx) and requests it does not
    (all must be refused 4xx), every response as the document declares it."""
    from hypothesis import given
    from hypothesis.errors import Unsatisfiable

    operations = _operations(api)
    assert {f"{op.method.upper()} {op.path}" for op in operations} >= {
        "POST /v1/search", "POST /v1/search/keyword", "POST /v1/search/vector", "GET /v1/docs", "GET /v1/chunks"}
    failures = []
    for op in operations:
        @given(case=op.as_strategy(schemathesis.GenerationMode(mode)))
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
        def run(case):
            case.call_and_validate(base_url=api)

        try:
            run()
        except Unsatisfiable:  # no invalid request exists for an operation that takes nothing
            assert mode == "negative" and not op.query and not op.body, f"{op.method.upper()} {op.path}"
        except Exception as exc:  # every operation's failures, not only the first
            failures.append(f"{op.method.upper()} {op.path}: {exc}")
    assert not failures, "\n\n".join(failures)
