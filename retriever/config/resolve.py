"""Search settings a user can set: a TOML file plus explicit overrides, resolved once.

The file (``--retriever-config FILE``, else ``$SEARCHTRACE_RETRIEVER_CONFIG``)
has up to five sections; every key is optional::

    [dense]
    parts = true                 # index time: embed each passage's title and sentences too
    max_parts = 64               # index time: parts kept per passage
    parts_weight = 0.5           # dense score = (1 - w) cos(passage) + w max cos(part); 0 = passage only
    parts_depth = 2              # passages rescored so: parts_depth x the candidates nearest by their vector

    [fusion]
    method = "dbsf"              # dbsf | rrf | zscore | weighted | keyword_then_dense
    k0 = 60                      # RRF rank constant
    weights = { dense = 1.0, keyword = 1.0, graph = 1.0 }   # 0 skips the stage

    [feedback]                   # dense pseudo-relevance feedback (Rocchio)
    docs = 0                     # 0 = off
    weight = 0.5

    [graph]
    method = "ppr"               # ppr | expand
    depth = 2
    damping = 0.5
    unnamed_seed_weight = 0.1
    max_hits = 300
    hop_decay = 0.5
    max_relation_hits = 3
    timeout_s = 2.0
    seed_docs = 1                # ppr: entities of the best first-pass passage(s) seed the walk too; 0 = off
    seed_docs_weight = 0.5       # their restart mass beside the query's entities (1)

    [confidence]
    high = 0.65
    low = 0.35
    calibration = "calibration.json"   # relative to this file

Precedence, per setting: explicit override (a command-line flag) > the file >
the default. All problems are reported together in one ``ValidationError``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tomllib
from dataclasses import asdict, fields
from enum import Enum
from pathlib import Path
from typing import Any, Mapping

from searchtrace import environment as env_names
from searchtrace.envvalues import choice, integer, text
from searchtrace.errors import ValidationError
from searchtrace.home import Home
from searchtrace.names import FUSED_STAGES, Stage
from searchtrace.retriever.config.model import (
    ConfidenceConfig,
    DenseConfig,
    FeedbackConfig,
    FusionConfig,
    GraphConfig,
    Neo4jSettings,
    RetrieverConfig,
)
from searchtrace.retriever.embedding.encoder import Precision
from searchtrace.retriever.types import FusionMethod, GraphMethod, ShownOrder

Sections = dict[str, dict[str, Any]]

_ALLOWED: dict[str, tuple[str, ...]] = {
    "dense": tuple(f.name for f in fields(DenseConfig)),
    "fusion": ("method", "k0", "weights"),
    "feedback": ("docs", "weight"),
    "graph": tuple(f.name for f in fields(GraphConfig)),
    "confidence": ("high", "low", "calibration", "order"),
}
_WEIGHT_STAGES = {s.value: s for s in FUSED_STAGES}


def _enum(kind: type[Enum], value: object, what: str, problems: list[str], default: Enum) -> Enum:
    """``kind(value)``; on a bad value, note the problem and go on with ``default`` to find the others."""
    try:
        return kind(value)
    except ValueError:
        problems.append(f"{what} must be one of {', '.join(m.value for m in kind)}, got {value!r}")
        return default


def _weights(raw: object, problems: list[str]) -> dict[Stage, float]:
    if not isinstance(raw, Mapping):
        problems.append(f"fusion weights must be a table like {{dense = 1, keyword = 1}}, got {raw!r}")
        return {}
    out = {}
    for name, w in raw.items():
        if name not in _WEIGHT_STAGES:
            problems.append(f"fusion weight {name!r}: allowed stages {', '.join(_WEIGHT_STAGES)}")
        else:
            out[_WEIGHT_STAGES[name]] = w
    return out


def parse_weights(text: str) -> dict[str, float]:
    """``"dense=1,keyword=0.5"`` -> ``{"dense": 1.0, "keyword": 0.5}`` (the ``--weights`` flag)."""
    out: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[name.strip()] = float(value)
        except ValueError:
            raise ValidationError(f"--weights: expected stage=number pairs such as dense=1,keyword=0.5, "
                                  f"got {part!r}", field="weights") from None
    return out


def read_file(path: str | os.PathLike[str]) -> Sections:
    """The sections of a settings file; ``confidence.calibration`` made absolute."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValidationError(f"{path}: cannot read retriever settings: {exc}", field="retriever_config") from None
    problems = []
    for section, values in data.items():
        if section not in _ALLOWED:
            problems.append(f"unknown section [{section}]; allowed: {', '.join(_ALLOWED)}")
        elif not isinstance(values, dict):
            problems.append(f"[{section}] must be a table")
        else:
            problems += [f"[{section}] unknown key {k!r}; allowed: {', '.join(_ALLOWED[section])}"
                         for k in values if k not in _ALLOWED[section]]
    if problems:
        raise ValidationError(f"{path}: " + "; ".join(problems), field="retriever_config")
    calibration = data.get("confidence", {}).get("calibration")
    if isinstance(calibration, str):
        data["confidence"]["calibration"] = str((path.parent / calibration).resolve())
    return data


def merge(base: Sections, overrides: Mapping[str, Mapping[str, Any]] | None) -> Sections:
    """``overrides`` on top of ``base``, key by key (fusion weights stage by stage)."""
    out = {section: dict(values) for section, values in base.items()}
    for section, values in (overrides or {}).items():
        target = out.setdefault(section, {})
        for key, value in values.items():
            if value is None:
                continue
            if key == "weights" and isinstance(value, Mapping) and isinstance(target.get("weights"), Mapping):
                target["weights"] = {**target["weights"], **value}
            else:
                target[key] = value
    return out


def _build(section: str, values: dict[str, Any], problems: list[str]) -> object | None:
    """One section's config object, or None after noting its problems."""
    values = dict(values)
    try:
        if section == "fusion":
            if "method" in values:
                values["method"] = _enum(FusionMethod, values["method"], "fusion method", problems, FusionMethod.RRF)
            if "weights" in values:
                values["weights"] = {**FusionConfig().weights, **_weights(values["weights"], problems)}
            return FusionConfig(**values)
        if section == "graph":
            if "method" in values:
                values["method"] = _enum(GraphMethod, values["method"], "graph method", problems, GraphMethod.PPR)
            return GraphConfig(**values)
        if section == "feedback":
            return FeedbackConfig(**values)
        if section == "dense":
            return DenseConfig(**values)
        calibration = values.pop("calibration", None)
        if "order" in values:
            values["order"] = _enum(ShownOrder, values["order"], "confidence order", problems, ShownOrder.FUSED)
        return ConfidenceConfig(**values, calibration_path=Path(calibration) if calibration else None)
    except ValidationError as exc:
        problems.append(exc.message)
    except (TypeError, ValueError) as exc:
        problems.append(f"[{section}] {exc}")
    return None


def build(sections: Sections) -> dict[str, Any]:
    """Config objects for the sections given: ``{"fusion": FusionConfig, ...}``.

    Raises:
        ValidationError: every problem found, in one message.
    """
    problems: list[str] = []
    out = {section: _build(section, values, problems) for section, values in sections.items() if values}
    if problems:
        raise ValidationError("retriever settings: " + "; ".join(problems), field="retriever_config")
    return out


def resolve_sections(path: str | os.PathLike[str] | None, overrides: Mapping[str, Mapping[str, Any]] | None,
                     environ: Mapping[str, str]) -> dict[str, Any]:
    """Config objects from the file (``path``, else ``$SEARCHTRACE_RETRIEVER_CONFIG``) and the overrides."""
    path = path or text(environ, env_names.SEARCHTRACE_RETRIEVER_CONFIG)
    return build(merge(read_file(path) if path else {}, overrides))


def config_json(value: Any) -> Any:
    """A config (or any part of one) as plain JSON values: enums by value, paths as strings."""
    if hasattr(value, "__dataclass_fields__"):
        value = asdict(value)
    if isinstance(value, Mapping):
        return {str(getattr(k, "value", k)): config_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [config_json(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return getattr(value, "value", value)


def search_fingerprint(config: RetrieverConfig) -> str:
    """A short hash of a ``RetrieverConfig``'s search settings (dense, fusion, feedback, graph, confidence)."""
    spec = {name: config_json(getattr(config, name)) for name in _ALLOWED}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _precision(value: str | None, env: Mapping[str, str]) -> Precision:
    """The precision the argument names, else ``$SEARCHTRACE_EMBED_PRECISION``, else fp32."""
    if not value:
        return choice(env, env_names.SEARCHTRACE_EMBED_PRECISION, Precision) or Precision.FP32
    try:
        return Precision(value)
    except ValueError:
        raise ValidationError(f"embedding precision must be one of {', '.join(p.value for p in Precision)}, "
                              f"got {value!r} (--precision)", field="precision") from None


def resolve_config(
    *,
    home: str | os.PathLike[str] | Home | None = None,
    qdrant_url: str | None = None,
    qdrant_api_key: str | None = None,
    neo4j_uri: str | None = None,
    neo4j_user: str | None = None,
    neo4j_password: str | None = None,
    neo4j_database: str | None = None,
    precision: str | None = None,
    settings_file: str | os.PathLike[str] | None = None,
    search: Mapping[str, Mapping[str, Any]] | None = None,
    environ: Mapping[str, str] | None = None,
) -> RetrieverConfig:
    """Build the retriever's configuration: explicit argument > environment variable > default.

    Search settings (dense, fusion, feedback, graph, confidence) come from ``search``
    (sections of explicit values, e.g. from flags) over the settings file
    (``settings_file``, else ``$SEARCHTRACE_RETRIEVER_CONFIG``) over the defaults.

    Raises:
        ValidationError: every problem in the settings at once, or a malformed variable.
    """
    env = os.environ if environ is None else environ
    sections = resolve_sections(settings_file, search, env)
    uri = neo4j_uri or text(env, env_names.NEO4J_URI)
    neo4j = None
    if uri:
        neo4j = Neo4jSettings(
            uri=uri,
            user=neo4j_user or text(env, env_names.NEO4J_USER) or "neo4j",
            password=neo4j_password or text(env, env_names.NEO4J_PASSWORD) or "",
            database=neo4j_database or text(env, env_names.NEO4J_DATABASE),
        )
    return RetrieverConfig(
        home=home if isinstance(home, Home) else Home.resolve(home, env),
        qdrant_url=qdrant_url or text(env, env_names.QDRANT_URL),
        qdrant_api_key=qdrant_api_key or text(env, env_names.QDRANT_API_KEY),
        qdrant_shards=integer(env, env_names.QDRANT_SHARD_NUMBER, minimum=1),
        qdrant_replication=integer(env, env_names.QDRANT_REPLICATION_FACTOR, minimum=1),
        neo4j=neo4j,
        precision=_precision(precision, env),
        **sections,
    )
