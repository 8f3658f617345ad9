"""Search settings: TOML file, flags and environment resolved into the frozen config."""

import argparse
import textwrap
import tomllib
from pathlib import Path

import pytest

from searchtrace.environment import SEARCHTRACE_RETRIEVER_CONFIG
from searchtrace.errors import ConfigError, ValidationError
from searchtrace.names import Stage
from searchtrace.retriever import add_retriever_arguments
from searchtrace.retriever.config import resolve as settings
from searchtrace.retriever.config.model import (
    RRF_K0,
    ConfidenceConfig,
    DenseConfig,
    FeedbackConfig,
    FusionConfig,
    GraphConfig,
)
from searchtrace.retriever.config.resolve import parse_weights, resolve_config, search_fingerprint
from searchtrace.retriever.embedding.encoder import Precision
from searchtrace.retriever.types import FusionMethod, GraphMethod

FILE = """
[dense]
parts_weight = 0.25
max_parts = 16

[fusion]
method = "rrf"
k0 = 20
weights = { dense = 0.5, graph = 2 }

[feedback]
docs = 3

[graph]
method = "expand"
depth = 3

[confidence]
high = 0.7
calibration = "cal.json"
"""


@pytest.fixture
def settings_file(tmp_path) -> Path:
    path = tmp_path / "retriever.toml"
    path.write_text(FILE, encoding="utf-8")
    return path


def test_defaults():
    c = resolve_config(environ={})
    assert c.fusion.method is FusionMethod.DBSF and c.fusion.k0 == 60
    assert c.graph.method is GraphMethod.PPR and c.graph.damping == 0.5 and c.graph.depth == 2
    assert not c.feedback.enabled
    assert c.dense.parts and c.dense.parts_weight == 0.5 and c.dense.max_parts == 64


def test_file_sets_every_section(settings_file):
    c = resolve_config(environ={}, settings_file=settings_file)
    assert c.fusion.method is FusionMethod.RRF and c.fusion.k0 == 20
    assert c.fusion.weight(Stage.DENSE) == 0.5 and c.fusion.weight(Stage.KEYWORD) == 1.0
    assert c.fusion.weight(Stage.GRAPH) == 2.0
    assert c.feedback.docs == 3 and c.feedback.enabled
    assert c.graph.method is GraphMethod.EXPAND and c.graph.depth == 3
    assert c.confidence.high == 0.7 and c.confidence.low == 0.35
    assert c.confidence.calibration_path == (settings_file.parent / "cal.json").resolve()
    assert c.dense.parts and c.dense.parts_weight == 0.25 and c.dense.max_parts == 16


def test_parts_flags_override_the_file(settings_file):
    c = resolve_config(environ={}, settings_file=settings_file,
                                search={"dense": {"parts": False, "parts_weight": None}})
    assert not c.dense.parts and c.dense.parts_weight == 0.25
    with pytest.raises(ValidationError, match="dense parts_weight must be a number 0-1, got 2"):
        resolve_config(environ={}, search={"dense": {"parts_weight": 2}})


def test_flags_override_file_which_overrides_env_file(settings_file, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text('[fusion]\nmethod = "zscore"\n', encoding="utf-8")
    env = {SEARCHTRACE_RETRIEVER_CONFIG: str(other)}
    assert resolve_config(environ=env).fusion.method is FusionMethod.ZSCORE
    from_file = resolve_config(environ=env, settings_file=settings_file)
    assert from_file.fusion.method is FusionMethod.RRF
    flagged = resolve_config(environ=env, settings_file=settings_file,
                                      search={"fusion": {"method": "dbsf", "k0": None, "weights": {"keyword": 0}}})
    assert flagged.fusion.method is FusionMethod.DBSF and flagged.fusion.k0 == 20
    assert flagged.fusion.weight(Stage.DENSE) == 0.5 and not flagged.fusion.enabled(Stage.KEYWORD)


def test_all_problems_reported_together(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('[fusion]\nmethod = "sum"\nk0 = 0\nweights = {rerank = 1}\n[graph]\ndepth = 9\n', encoding="utf-8")
    with pytest.raises(ValidationError) as err:
        resolve_config(environ={}, settings_file=path)
    message = err.value.message
    for needle in ("fusion method must be one of dbsf, rrf, zscore, weighted, keyword_then_dense, got 'sum'",
                   "k0 must be an integer >= 1", "allowed stages dense, keyword, graph", "graph depth must be"):
        assert needle in message


@pytest.mark.parametrize("text, needle", [
    ("[ranking]\nx = 1\n", "unknown section [ranking]"),
    ("[fusion]\nmode = 'rrf'\n", "unknown key 'mode'; allowed: method, k0, weights"),
    ("[fusion\n", "cannot read"),
])
def test_malformed_files(tmp_path, text, needle):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError, match=needle.replace("[", r"\[").replace("]", r"\]")):
        resolve_config(environ={}, settings_file=path)


def test_missing_file_is_a_validation_error(tmp_path):
    with pytest.raises(ValidationError, match="cannot read"):
        resolve_config(environ={}, settings_file=tmp_path / "absent.toml")


def test_parse_weights():
    assert parse_weights("dense=1, keyword=0.5,graph=0") == {"dense": 1.0, "keyword": 0.5, "graph": 0.0}
    with pytest.raises(ValidationError, match="stage=number"):
        parse_weights("dense")
    with pytest.raises(ValidationError, match="stage=number"):
        parse_weights("dense=high")


def test_fingerprint_follows_search_settings_only(tmp_path):
    a = resolve_config(environ={}, home=tmp_path / "a")
    b = resolve_config(environ={}, home=tmp_path / "b")
    c = resolve_config(environ={}, search={"fusion": {"method": "rrf"}})
    d = resolve_config(environ={}, search={"dense": {"parts_weight": 0.0}})
    assert search_fingerprint(a) == search_fingerprint(b) != search_fingerprint(c)
    assert search_fingerprint(d) not in (search_fingerprint(a), search_fingerprint(c))


def test_environment_variables_blank_is_unset_and_a_bad_value_is_named():
    env = {"QDRANT_URL": "http://q:6333", "QDRANT_API_KEY": " ", "NEO4J_URI": "bolt://g:7687", "NEO4J_USER": "",
           "SEARCHTRACE_EMBED_PRECISION": "INT8", "QDRANT_SHARD_NUMBER": " 3 ", "QDRANT_REPLICATION_FACTOR": ""}
    c = resolve_config(environ=env)
    assert (c.qdrant_url, c.qdrant_api_key, c.qdrant_shards, c.qdrant_replication) == ("http://q:6333", None, 3, None)
    assert c.neo4j is not None and (c.neo4j.uri, c.neo4j.user) == ("bolt://g:7687", "neo4j")
    assert c.precision is Precision.INT8 and resolve_config(environ=env, precision="fp32").precision is Precision.FP32
    with pytest.raises(ConfigError, match="SEARCHTRACE_EMBED_PRECISION must be one of fp32, int8, got 'fp16'"):
        resolve_config(environ={"SEARCHTRACE_EMBED_PRECISION": "fp16"})
    with pytest.raises(ValidationError, match=r"embedding precision must be one of fp32, int8, got 'fp16' \(--precision\)"):
        resolve_config(environ={}, precision="fp16")
    with pytest.raises(ConfigError, match="QDRANT_REPLICATION_FACTOR must be a whole number >= 1, got '0'"):
        resolve_config(environ={"QDRANT_REPLICATION_FACTOR": "0"})


def test_the_example_file_in_the_settings_docstring_shows_the_defaults():
    """The module's example values (k0 = 60 among them) are the defaults, so they cannot drift from the config."""
    example = settings.__doc__.split("::", 1)[1].split("\n\nPrecedence", 1)[0]
    sections = tomllib.loads(textwrap.dedent(example))
    assert sections["fusion"]["k0"] == RRF_K0 == FusionConfig().k0
    sections["confidence"].pop("calibration")  # an example file name; the default is none
    assert settings.build(sections) == {"dense": DenseConfig(), "fusion": FusionConfig(), "feedback": FeedbackConfig(),
                                        "graph": GraphConfig(), "confidence": ConfidenceConfig()}


def test_the_k0_flag_help_states_the_default():
    """The help cannot import the config (``searchtrace --help`` loads no numpy), so its copy is pinned here."""
    parser = argparse.ArgumentParser()
    add_retriever_arguments(parser)
    k0 = next(a for a in parser._actions if "--k0" in a.option_strings)
    assert k0.default is None and f"(default {RRF_K0})" in (k0.help or "")
