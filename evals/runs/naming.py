"""What a run is called: its name, tags and note, its id, and its settings as readable ``key = value`` pairs.

A run's name defaults to its dataset, its mode and the settings that differ from
the defaults (``sample · graph · fusion=rrf``), so two runs of one dataset that
differ in one setting never look alike in a list. Its id (the run folder's name
under ``<home>/runs``) starts the same way, from ``--name`` when given
(:func:`run_id_stem`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from searchtrace.errors import ValidationError

if TYPE_CHECKING:
    from searchtrace.evals.runs.runfolder import EvalSettings, RunSummary

__all__ = ["MAX_NAME", "RunLabel", "default_run_name", "run_id_stem", "run_settings", "settings_diff",
           "show_setting"]

MAX_NAME = 120  # characters of a name, a tag or a note line shown in a table
MAX_STEM = 48  # characters of a run id before its time and key: the whole id fits 80 columns (75 at most)
SEPARATOR = " · "
_UNSAFE = re.compile(r"[^\w.=+-]+", re.ASCII)  # what a folder name of a run id does not keep
#: Retriever configuration keys that say where things live, not how search behaves.
_PLACES = ("home", "qdrant_url", "qdrant_shards", "qdrant_replication", "neo4j", "index")
#: Readable names of some settings (the rest keep their dotted path).
_LABELS = {"fusion.method": "fusion", "graph.method": "graph", "confidence.calibration_path": "calibration",
           "fusion.weights.dense": "dense weight", "fusion.weights.keyword": "keyword weight",
           "fusion.weights.graph": "graph weight"}


@dataclass(frozen=True)
class RunLabel:
    """What the user calls a run (``eval --name/--tag/--note``); validated on construction.

    Raises:
        ValidationError: an empty or over-long name or tag, a tag with a comma.
    """

    name: str | None = None
    tags: tuple[str, ...] = ()
    note: str | None = None

    def __post_init__(self) -> None:
        if self.name is not None and not 0 < len(self.name.strip()) <= MAX_NAME:
            raise ValidationError(f"--name must be 1-{MAX_NAME} characters, got {len(self.name.strip())}",
                                  field="name")
        for tag in self.tags:
            if not 0 < len(tag.strip()) <= MAX_NAME or "," in tag:
                raise ValidationError(f"--tag must be 1-{MAX_NAME} characters without a comma, got {tag!r}",
                                      field="tag")


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, item in value.items():
            _flatten(f"{prefix}{key}.", item, out)
    else:
        key = prefix[:-1]
        out[_LABELS.get(key, key)] = tuple(value) if isinstance(value, list) else value


def settings_of(settings: EvalSettings, mode: str | None, config: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting that can change a run's results, by readable name (``fusion``, ``dense weight``).

    Args:
        settings: the eval's settings.
        mode: the search mode (None: not chosen).
        config: the retriever configuration as JSON (``config_json``); places are left out.
    """
    out: dict[str, Any] = {"mode": mode, "split": settings.split, "depth": settings.depth,
                           "corrective": settings.corrective}
    _flatten("", {k: v for k, v in config.items() if k not in _PLACES}, out)
    return out


def run_settings(summary: RunSummary) -> dict[str, Any]:
    """Every setting of a run that can change its results, by readable name (``fusion``, ``dense weight``)."""
    return settings_of(summary.settings, summary.retriever.mode, summary.retriever.config)


@functools.lru_cache(maxsize=1)
def _defaults() -> dict[str, Any]:
    from searchtrace.evals.runs.runfolder import EvalSettings
    from searchtrace.retriever import config_json, resolve_config

    config = {k: v for k, v in config_json(resolve_config(environ={})).items() if k not in _PLACES}
    settings = EvalSettings(dataset="")
    out: dict[str, Any] = {"split": settings.split, "depth": settings.depth, "corrective": settings.corrective}
    _flatten("", config, out)
    return out


def show_setting(value: Any) -> str:
    """A setting's value as the dashboard and run names show it (``0``, ``on``, ``rrf``, ``-``)."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ",".join(map(show_setting, value))
    return "-" if value is None else str(value)


def _changed(values: Mapping[str, Any]) -> list[str]:
    """``key=value`` of each setting (but the mode) that differs from its default."""
    defaults = _defaults()
    return [f"{key}={show_setting(value)}" for key, value in values.items()
            if key != "mode" and key in defaults and defaults[key] != value]


def default_run_name(summary: RunSummary) -> str:
    """``dataset · mode`` and each setting that differs from the default (``fusion=rrf``)."""
    return SEPARATOR.join([summary.dataset.name, summary.retriever.mode, *_changed(run_settings(summary))])


def run_id_stem(label: RunLabel, dataset: str, values: Mapping[str, Any]) -> str:
    """The start of a run's id, safe as a folder name: ``--name``, else ``dataset-mode`` and each changed setting.

    Args:
        label: the run's label (its name, when given, is the stem).
        dataset: the dataset's folder name.
        values: the run's settings (:func:`settings_of`); ``default`` stands for a mode not chosen
            only when no setting differs from its default.
    """
    parts = [dataset, *([values["mode"]] if values.get("mode") else []), *_changed(values)]
    unnamed = SEPARATOR.join(parts if len(parts) > 1 else [dataset, "default"])
    for text in (label.name or "", unnamed):
        stem = _UNSAFE.sub("-", text).strip("-.")[:MAX_STEM].rstrip("-.")
        if stem:
            return stem
    return "run"


def settings_diff(base: Mapping[str, Any], candidate: Mapping[str, Any],
                  keys: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
    """(setting, base value, candidate value) of each setting that differs, values as shown."""
    names = keys if keys is not None else list(dict.fromkeys([*base, *candidate]))
    return [(k, show_setting(base.get(k)), show_setting(candidate.get(k))) for k in names if base.get(k) != candidate.get(k)]
