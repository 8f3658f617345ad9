"""Altair charts of the dashboard's tables; each takes a DataFrame from :mod:`dashboard.data`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import pandas as pd

from searchtrace.dashboard.data.baselines import BETTER, NOT_SIGNIFICANT, VERDICTS, WORSE, run_order
from searchtrace.names import Band

__all__ = ["GROUP_COLORS", "PICK", "VERDICT_BACKGROUND", "VERDICT_COLORS", "VERDICT_LEGEND", "band_precision", "forest", "best_vs_ndcg", "ctr_by_position", "funnel", "gold_ranks", "latency_boxes",
           "latency_trend", "pair_scatter", "rbo_histogram", "reliability", "requests_per_minute", "risk_coverage",
           "span_state", "trend", "waterfall"]

BAND_ORDER = [b.value for b in Band]  # best first
BAND_COLORS = alt.Scale(domain=BAND_ORDER, range=["#2e7d32", "#f9a825", "#c62828"])
#: One meaning per colour on Runs and Compare: green better and significant, red worse and significant, grey
#: not significant. Nothing else on those pages is green, red or grey.
VERDICT_HEX = {BETTER: "#2e7d32", WORSE: "#c62828", NOT_SIGNIFICANT: "#9e9e9e"}
#: The same verdicts as table cell backgrounds (lighter, so the numbers stay readable).
VERDICT_BACKGROUND = {BETTER: "#c8e6c9", WORSE: "#ffcdd2", NOT_SIGNIFICANT: "#eeeeee"}
VERDICT_COLORS = alt.Scale(domain=list(VERDICTS), range=[VERDICT_HEX[v] for v in VERDICTS])
VERDICT_LEGEND = ("Colours: green = better and significant, red = worse and significant, grey = not "
                  "significant (p \u2265 0.05, randomization test, Holm-corrected across metrics).")
#: Per-query wins and losses are not significance: blue and orange, so green and red keep their one meaning.
OUTCOME_COLORS = alt.Scale(domain=["win", "tie", "loss"], range=["#1e88e5", "#bdbdbd", "#ef6c00"])
#: Settings groups on the trend: hues that are none of the verdict colours.
GROUP_COLORS = ["#1e88e5", "#ef6c00", "#8e24aa", "#6d4c41", "#00acc1", "#d81b60", "#3949ab", "#c0ca33"]
MAX_POINTS = 20_000  # larger tables are sampled: the browser draws every mark


def _sample(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sample(MAX_POINTS, random_state=0) if len(frame) > MAX_POINTS else frame


def _diagonal(lo: float = 0.0, hi: float = 1.0) -> alt.Chart:
    line = pd.DataFrame({"x": [lo, hi], "y": [lo, hi]})
    return alt.Chart(line).mark_line(strokeDash=[4, 4], color="gray").encode(x="x:Q", y="y:Q")


#: Tick labels as fine as the ticks (Vega's multi-format: runs seconds apart get seconds), 24 h, no AM/PM.
TIME_FORMAT = {"year": "%Y", "quarter": "%Y-%m", "month": "%Y-%m", "week": "%Y-%m-%d", "date": "%Y-%m-%d",
               "hours": "%m-%d %H:%M", "minutes": "%H:%M", "seconds": "%H:%M:%S", "milliseconds": "%H:%M:%S.%L"}
TIME_AXIS = alt.Axis(format=TIME_FORMAT, formatType="time", labelAngle=-30, labelOverlap=True, tickCount=6)
STATUS_COLORS = alt.Scale(domain=["ran", "skipped", "error"], range=["#1e88e5", "#bdbdbd", "#c62828"])


def trend(frame: pd.DataFrame, metric: str, color: str = "group") -> alt.Chart:
    """A metric on run order (``dashboard.data.baselines.run_order``: 1 the dataset's oldest run), one point
    per run, one line per group of identical settings. Run order, not the clock: runs seconds apart stand one
    step apart; both axes are padded so no point sits on an axis or the frame. A frame without ``order``
    is numbered here, oldest first."""
    if "order" not in frame:
        frame = run_order(frame)
    count = max(int(frame["order"].max()) if len(frame) else 1, 1)
    ticks = alt.Axis(tickMinStep=1, format="d", values=list(range(1, count + 1))) if count <= 30 else alt.Axis(
        tickMinStep=1, format="d")
    tooltip: list[Any] = [alt.Tooltip("order:Q", title="run #"), alt.Tooltip("name:N", title="run"),
                          alt.Tooltip(f"{color}:N", title="settings"),
                          alt.Tooltip("created_at:T", format="%Y-%m-%d %H:%M:%S", title="date (UTC)"),
                          alt.Tooltip("value:Q", format=".3f")]
    return alt.Chart(frame).mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=alt.X("order:Q", title="run (1 = oldest on this dataset)",
                scale=alt.Scale(domain=[0.5, count + 0.5], nice=False), axis=ticks),
        y=alt.Y("value:Q", title=metric, scale=alt.Scale(zero=False, padding=14, nice=True)),
        color=alt.Color(f"{color}:N", title="settings", scale=alt.Scale(range=GROUP_COLORS),
                        legend=alt.Legend(labelLimit=400, orient="bottom", columns=2)),
        tooltip=tooltip).properties(height=300)


def forest(rows: pd.DataFrame) -> alt.LayerChart:
    """Per-metric deltas with their 95% intervals (``dashboard.data.baselines.forest_rows``): a dot at the
    delta, a bar across the interval, coloured by verdict, and the no-change line at 0."""
    data = rows.assign(label=[f"{m}  (p {p})" for m, p in zip(rows["metric"], rows["p_text"])])
    y = alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=260))
    colour = alt.Color("verdict:N", scale=VERDICT_COLORS, title="verdict", legend=alt.Legend(orient="bottom"))
    tips = [alt.Tooltip("metric:N"), alt.Tooltip("delta:Q", format="+.3f"), alt.Tooltip("ci_low:Q", format="+.3f"),
            alt.Tooltip("ci_high:Q", format="+.3f"), alt.Tooltip("p_text:N", title="p (Holm)"), alt.Tooltip("verdict:N")]
    lo, hi = min(float(data["ci_low"].min()), 0.0), max(float(data["ci_high"].max()), 0.0)
    pad = 0.06 * ((hi - lo) or 1.0)  # room either side: neither an interval nor the 0 line on the frame
    x = alt.X("ci_low:Q", title="delta (candidate - baseline), 95% CI",
              scale=alt.Scale(domain=[lo - pad, hi + pad], nice=False))
    base = alt.Chart(data).encode(y=y, color=colour, tooltip=tips)
    bars = base.mark_rule(strokeWidth=3).encode(x=x, x2="ci_high:Q")
    dots = base.mark_circle(size=90, opacity=1).encode(x="delta:Q")
    zero = alt.Chart(pd.DataFrame({"x": [0.0]})).mark_rule(strokeDash=[4, 4], color="#616161").encode(x="x:Q")
    return (zero + bars + dots).properties(height=alt.Step(34))  # one 34 px row per metric, every label shown


def gold_ranks(frame: pd.DataFrame) -> alt.Chart:
    """Each gold document's rank in each chosen run (x: the runs in the order given, y: rank, best at the
    top); a run that did not rank the document is drawn at its depth + 1 with a hollow mark."""
    order = list(dict.fromkeys(frame["run"]))
    shown = frame.assign(placed=frame["rank"].astype("Float64").fillna(frame["depth"] + 1).astype(float),
                         ranked=frame["rank"].notna().map({True: "ranked", False: "not ranked"}))
    return alt.Chart(shown).mark_line(point=alt.OverlayMarkDef(size=60, filled=True)).encode(
        x=alt.X("run:N", sort=order, title=None, axis=alt.Axis(labelAngle=-20, labelLimit=220)),
        y=alt.Y("placed:Q", title="rank (1 = top)", scale=alt.Scale(reverse=True, zero=False)),
        color=alt.Color("doc_id:N", title="gold document", legend=alt.Legend(orient="bottom", columns=3)),
        shape=alt.Shape("ranked:N", title=None, scale=alt.Scale(domain=["ranked", "not ranked"],
                                                                range=["circle", "triangle-down"])),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("doc_id:N"), alt.Tooltip("title:N"), alt.Tooltip("grade:Q"),
                 alt.Tooltip("rank:Q")]).properties(height=260)


def rbo_histogram(queries: pd.DataFrame, p: float) -> alt.Chart:
    """How many queries have each rank-biased overlap (bins of 0.05 over [0, 1])."""
    return alt.Chart(queries[["rbo"]]).mark_bar().encode(
        x=alt.X("rbo:Q", bin=alt.Bin(extent=[0, 1], step=0.05), title=f"RBO, p={p:g} (1: the same ranking)"),
        y=alt.Y("count():Q", title="queries")).properties(height=260)


PICK = "pick"  # the scatter's point selection (st.altair_chart on_select)


def pair_scatter(pairs: pd.DataFrame, metric: str) -> alt.LayerChart:
    """Per-query baseline against candidate, coloured win/tie/loss, with the no-change diagonal;
    clicking a point selects its query (selection :data:`PICK`, field ``query_id``)."""
    pick = alt.selection_point(name=PICK, fields=["query_id"], on="click")
    points = alt.Chart(pairs[["query_id", "text", "category", "base", "candidate", "delta", "outcome"]]).mark_circle(
        size=70, opacity=0.75, cursor="pointer").encode(
        x=alt.X("base:Q", title=f"baseline {metric}", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("candidate:Q", title=f"candidate {metric}", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("outcome:N", scale=OUTCOME_COLORS),
        tooltip=["query_id", "text", "category", alt.Tooltip("base:Q", format=".3f"),
                 alt.Tooltip("candidate:Q", format=".3f"), alt.Tooltip("delta:Q", format="+.3f")]).add_params(pick)
    return (_diagonal() + points).properties(height=380)


def funnel(frame: pd.DataFrame) -> alt.Chart:
    """Gold documents held at each stage of the funnel; a skipped stage is grey and says so."""
    data = frame.assign(label=[f"{s} (skipped)" if k else s for s, k in zip(frame["stage"], frame["skipped"])],
                        state=["skipped" if k else "ran" for k in frame["skipped"]])
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("gold:Q", title="gold documents", axis=alt.Axis(tickMinStep=1)),
        y=alt.Y("label:N", sort=None, title=None, axis=alt.Axis(labelLimit=200)),
        color=alt.Color("state:N", scale=STATUS_COLORS, legend=None),
        tooltip=["stage", "gold", "documents", "skipped"]).properties(height=200)


def span_state(status: str, skipped: str) -> str:
    """ran, skipped or error: a span's colour."""
    return "error" if status == "ERROR" else "skipped" if skipped else "ran"


LABEL_PX = 260  # the waterfall's label column at most


def waterfall(spans: pd.DataFrame) -> alt.LayerChart:
    """Spans as bars from start to end (ms from the trace's start) in tree order, every row labelled
    with its stage (its depth marked) and its duration; skipped stages grey, errors red."""
    visible = spans["end_ms"].max() / 300 if len(spans) else 0.0  # sub-pixel spans still show
    rows: list[str] = []
    taken: set[str] = set()
    for label, skip in zip(spans["label"], spans["skipped"]):
        row = f"{label} (skipped)" if skip else label
        while row in taken:  # one row per span, siblings of one name too (zero-width spaces tell them apart)
            row += "\u200b"
        rows.append(row)
        taken.add(row)
    frame = spans.assign(
        row=rows,
        bar_end=spans["end_ms"].clip(lower=spans["start_ms"] + visible),
        state=[span_state(st, sk) for st, sk in zip(spans["status"], spans["skipped"])],
        duration=[f"{d:.1f} ms" if d < 10_000 else f"{d / 1000:.1f} s" for d in spans["duration_ms"]])
    # left-aligned labels, so a label's depth marks line up as a tree; as wide as the longest (about 7 px a
    # character at 12 px), so short names leave the bars their room
    width = min(LABEL_PX, 12 + 7 * max((len(r.rstrip("\u200b")) for r in rows), default=0))
    y = alt.Y("row:N", sort=None, title=None, axis=alt.Axis(labelOverlap=False, labelLimit=width, labelFontSize=12,
                                                            labelAlign="left", labelPadding=width))
    base = alt.Chart(frame).encode(y=y)
    bars = base.mark_bar().encode(
        x=alt.X("start_ms:Q", title="ms since trace start"), x2="bar_end:Q",
        color=alt.Color("state:N", scale=STATUS_COLORS, title=None),
        tooltip=["name", "duration", alt.Tooltip("start_ms:Q", format=".1f"), "status", "skipped"])
    labels = base.mark_text(align="left", dx=4, fontSize=11).encode(x="bar_end:Q", text="duration:N")
    return (bars + labels).properties(height=max(140, 28 * len(frame)))


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
        color="category:N", tooltip=["query_id", "category", alt.Tooltip("bestScore:Q", format=".3f"),
                                     alt.Tooltip("ndcg@10:Q", format=".3f")]).properties(height=320)


def latency_boxes(frame: pd.DataFrame, skipped: Mapping[str, str] | None = None) -> alt.Chart:
    """Per-stage latency distributions (log scale), whiskers at the 1.5 IQR rule; skipped stages labelled."""
    skipped = skipped or {}

    def name(stage: object) -> str:
        return f"{stage} (skipped)" if str(stage) in skipped else str(stage)

    stages = [name(s) for s in frame["stage"].cat.categories] if hasattr(frame["stage"], "cat") else None
    data = _sample(frame.assign(stage=frame["stage"].map(name).astype(str), ms=frame["ms"].clip(lower=1e-3)))
    return alt.Chart(data).mark_boxplot(extent=1.5).encode(
        x=alt.X("ms:Q", title="ms (log)", scale=alt.Scale(type="log")), y=alt.Y("stage:N", sort=stages, title=None)
    ).properties(height=max(160, 28 * data["stage"].nunique()))


def latency_trend(frame: pd.DataFrame, percentile: str) -> alt.LayerChart:
    """A latency percentile of chosen stages, one point per run; a run that skipped the stage is a hollow
    point off the line (its near-zero time is not a speed-up)."""
    data = frame.assign(state=frame["skipped"].map({True: "skipped", False: "ran"}))
    base = alt.Chart(data).encode(x=alt.X("created_at:T", title="run date (UTC)", axis=TIME_AXIS),
                                  y=alt.Y(f"{percentile}:Q", title=f"{percentile} ms"), color="stage:N")
    line = base.transform_filter(alt.datum.state == "ran").mark_line()
    points = base.mark_point(filled=True, size=50).encode(
        shape=alt.Shape("state:N", scale=alt.Scale(domain=["ran", "skipped"], range=["circle", "cross"]),
                        title="stage"),
        tooltip=["name", "stage", "state", alt.Tooltip(f"{percentile}:Q", format=".1f")])
    return line + points


def ctr_by_position(frame: pd.DataFrame) -> alt.Chart:
    """Click-through rate by shown position (``dashboard.data.implicit.ctr_table``): the smoothed rate the
    expected clicks use as bars (pooled positions lighter), the raw one in the tooltip."""
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("position:O", title="shown position"),
        y=alt.Y("ctr:Q", title="click-through rate"),
        opacity=alt.condition("datum.pooled", alt.value(0.45), alt.value(1.0)),
        tooltip=["position", "impressions", "clicks", alt.Tooltip("raw:Q", format=".3f", title="clicks / impressions"),
                 alt.Tooltip("ctr:Q", format=".3f", title="rate used (smoothed)"), "pooled"]).properties(height=260)


def latency_over_time(frame: pd.DataFrame, bucket_min: int) -> alt.Chart:
    """The request's p50, p95 and p99 over time (``Traffic.over_time`` of one grouping): a colour per name, a
    dash per percentile, milliseconds on a log scale (a p99 ten times the p50 leaves both readable)."""
    per = f" per {bucket_min} min" if bucket_min > 1 else " per minute"
    return alt.Chart(frame).mark_line(point=len(frame) < 90).encode(
        x=alt.X("minute:T", title="time (UTC)", axis=TIME_AXIS),
        y=alt.Y("ms:Q", title=f"request latency (ms){per}", scale=alt.Scale(type="log")),
        color=alt.Color("name:N", title=str(frame["by"].iloc[0]) if len(frame) else "name"),
        strokeDash=alt.StrokeDash("percentile:N", title="percentile", sort=["p50", "p95", "p99"]),
        tooltip=[alt.Tooltip("minute:T", format="%Y-%m-%d %H:%M"), "name", "percentile",
                 alt.Tooltip("ms:Q", format=".1f", title="ms"), alt.Tooltip("n:Q", title="requests")]
    ).properties(height=260)


def requests_per_minute(frame: pd.DataFrame, bucket_min: int) -> alt.Chart:
    """Requests per minute of each source over time (averaged over buckets of ``bucket_min`` minutes)."""
    title = "requests per minute" + (f" (mean over {bucket_min} min)" if bucket_min > 1 else "")
    return alt.Chart(frame).mark_line(point=len(frame) < 60, interpolate="step-after").encode(
        x=alt.X("minute:T", title="time (UTC)", axis=TIME_AXIS), y=alt.Y("per_minute:Q", title=title),
        color=alt.Color("source:N", title="source"),
        tooltip=[alt.Tooltip("minute:T", format="%Y-%m-%d %H:%M"), "source",
                 alt.Tooltip("per_minute:Q", format=".2f")]).properties(height=260)
