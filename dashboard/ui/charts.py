"""Altair charts of the dashboard's tables; each takes a DataFrame from :mod:`dashboard.data`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from searchtrace.names import Band

__all__ = ["band_precision", "best_vs_ndcg", "funnel", "latency_boxes", "latency_trend", "pair_scatter",
           "reliability", "risk_coverage", "trend", "waterfall"]

BAND_ORDER = [b.value for b in Band]  # best first
BAND_COLORS = alt.Scale(domain=BAND_ORDER, range=["#2e7d32", "#f9a825", "#c62828"])
OUTCOME_COLORS = alt.Scale(domain=["win", "tie", "loss"], range=["#2e7d32", "#9e9e9e", "#c62828"])
MAX_POINTS = 20_000  # larger tables are sampled: the browser draws every mark


def _sample(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sample(MAX_POINTS, random_state=0) if len(frame) > MAX_POINTS else frame


def _diagonal(lo: float = 0.0, hi: float = 1.0) -> alt.Chart:
    line = pd.DataFrame({"x": [lo, hi], "y": [lo, hi]})
    return alt.Chart(line).mark_line(strokeDash=[4, 4], color="gray").encode(x="x:Q", y="y:Q")


def trend(frame: pd.DataFrame, metric: str) -> alt.Chart:
    """A metric over time, one point per run, coloured by mode."""
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("created_at:T", title="run date"), y=alt.Y("value:Q", title=metric, scale=alt.Scale(zero=False)),
        color="mode:N", tooltip=["run_id", "mode", "created_at:T", alt.Tooltip("value:Q", format=".4f")])


def pair_scatter(pairs: pd.DataFrame, metric: str) -> alt.Chart:
    """Per-query baseline against candidate, coloured win/tie/loss, with the no-change diagonal."""
    points = alt.Chart(pairs).mark_circle(size=60, opacity=0.7).encode(
        x=alt.X("base:Q", title=f"baseline {metric}", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("candidate:Q", title=f"candidate {metric}", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("outcome:N", scale=OUTCOME_COLORS),
        tooltip=["query_id", "category", alt.Tooltip("base:Q", format=".4f"),
                 alt.Tooltip("candidate:Q", format=".4f"), alt.Tooltip("delta:Q", format="+.4f")])
    return (_diagonal() + points).properties(height=380)


def funnel(frame: pd.DataFrame) -> alt.Chart:
    """Gold documents held at each stage of the funnel."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("gold:Q", title="gold documents", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("stage:N", sort=None, title=None), tooltip=["stage", "gold", "documents"]).properties(height=200)


def waterfall(spans: pd.DataFrame) -> alt.Chart:
    """Spans as bars from start to end (ms from the trace's start), in start order."""
    visible = spans["end_ms"].max() / 300 if len(spans) else 0.0  # sub-pixel spans still show
    frame = spans.assign(label=[("· " * d) + n for d, n in zip(spans["depth"], spans["name"])],
                         bar_end=spans["end_ms"].clip(lower=spans["start_ms"] + visible))
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("start_ms:Q", title="ms since trace start"), x2="bar_end:Q",
        y=alt.Y("label:N", sort=None, title=None), color=alt.Color("status:N", legend=None),
        tooltip=["name", alt.Tooltip("duration_ms:Q", format=".3f"), alt.Tooltip("start_ms:Q", format=".3f"),
                 "status"]).properties(height=max(120, 26 * len(frame)))


def reliability(frame: pd.DataFrame) -> alt.Chart:
    """Observed share relevant against mean predicted relevance per bin (point size: results)."""
    points = alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("mean_relevance:Q", title="predicted relevance", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("observed:Q", title="share relevant", scale=alt.Scale(domain=[0, 1])),
        tooltip=[alt.Tooltip("mean_relevance:Q", format=".3f"), alt.Tooltip("observed:Q", format=".3f"), "count"])
    sizes = alt.Chart(frame).mark_circle().encode(x="mean_relevance:Q", y="observed:Q", size=alt.Size("count:Q"))
    return (_diagonal() + points + sizes).properties(height=320)


def band_precision(frame: pd.DataFrame) -> alt.Chart:
    """Share of relevant results in each confidence band."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("band:N", sort=BAND_ORDER), y=alt.Y("precision:Q", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("band:N", scale=BAND_COLORS, legend=None),
        tooltip=["band", alt.Tooltip("precision:Q", format=".3f"), "count"]).properties(height=320)


def risk_coverage(frame: pd.DataFrame) -> alt.Chart:
    """Risk (answered queries without a relevant result) against coverage, thresholding bestScore."""
    return alt.Chart(frame).mark_line(point=True, interpolate="step-after").encode(
        x=alt.X("coverage:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("risk:Q"),
        tooltip=[alt.Tooltip("threshold:Q", title="bestScore >=", format=".3f"),
                 alt.Tooltip("coverage:Q", format=".2f"), alt.Tooltip("risk:Q", format=".3f")]).properties(height=320)


def best_vs_ndcg(frame: pd.DataFrame) -> alt.Chart:
    """Per-query bestScore against nDCG@10, coloured by category."""
    return alt.Chart(frame).mark_circle(size=60, opacity=0.7).encode(
        x=alt.X("bestScore:Q", scale=alt.Scale(domain=[0, 1])), y=alt.Y("ndcg@10:Q", scale=alt.Scale(domain=[0, 1])),
        color="category:N", tooltip=["query_id", "category", "bestScore", alt.Tooltip("ndcg@10:Q", format=".4f")]
    ).properties(height=320)


def latency_boxes(frame: pd.DataFrame) -> alt.Chart:
    """Per-stage latency distributions (log scale), whiskers at the 1.5 IQR rule."""
    stages = [str(s) for s in frame["stage"].cat.categories] if hasattr(frame["stage"], "cat") else None
    data = _sample(frame.assign(stage=frame["stage"].astype(str), ms=frame["ms"].clip(lower=1e-3)))
    return alt.Chart(data).mark_boxplot(extent=1.5).encode(
        x=alt.X("ms:Q", title="ms (log)", scale=alt.Scale(type="log")), y=alt.Y("stage:N", sort=stages, title=None)
    ).properties(height=max(160, 28 * data["stage"].nunique()))


def latency_trend(frame: pd.DataFrame, percentile: str) -> alt.Chart:
    """A latency percentile of chosen stages, one point per run."""
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("created_at:T", title="run date"), y=alt.Y(f"{percentile}:Q", title=f"{percentile} ms"),
        color="stage:N", tooltip=["run_id", "stage", "mode", alt.Tooltip(f"{percentile}:Q", format=".3f")])
