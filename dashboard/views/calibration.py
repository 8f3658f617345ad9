"""Calibration: reliability diagram, band precision, risk-coverage, bestScore against nDCG@10."""

import streamlit as st

from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.explain import explain
from searchtrace.dashboard.ui.text import band_style, md, show_table

home, runs = context.runs_page("Calibration")
if context.restore("calibration", ("run",)):
    st.caption("The run shown last in this session (the link named none).")
run_id = context.select_run(runs, "Run", "calibration-run")
context.remember("calibration", ("run",))
view = context.load(cached.calibration, home, run_id)

summary = view.summary
cells = st.columns(4)
for cell, (label, value) in zip(cells, (("ECE", summary.ece), ("Brier", summary.brier),
                                        ("AUROC", summary.auroc), ("AURC", view.aurc))):
    cell.metric(label, "n/a" if value is None else f"{value:.3f}", help=explain(label))
st.caption("Over the top 10 results of each query; a result is relevant when its grade is above 0.")
if view.rank_only:
    why = ("; ".join(f"{md(k)}: {md(v)}" for k, v in view.skipped.items()) or "no similarity score reached the "
           "relevance model")
    st.info(f"Relevance is rank-only in this run ({why}): without the dense stage's similarity, relevance "
            "falls back to each result's rank, so every query has the same bestScore. Risk-coverage then has a "
            "single point and bestScore cannot rank queries (Kendall tau n/a); the reliability diagram and band "
            "precision still describe the rank-based relevance.")
elif view.skipped:
    st.caption("Skipped stages: " + "; ".join(f"{md(k)}: {md(v)}" for k, v in view.skipped.items()) + ".")

left, right = st.columns(2)
with left:
    st.subheader("Reliability diagram")
    st.altair_chart(charts.reliability(view.reliability), width="stretch")
    show_table(st, view.reliability, hide_index=True, key="calibration-bins", column_config={
        c: st.column_config.NumberColumn(c, format="%.3f") for c in ("lower", "upper", "mean_relevance", "observed")})
with right:
    st.subheader("Band precision")
    st.altair_chart(charts.band_precision(view.bands), width="stretch")
    show_table(st, view.bands.astype({"precision": float}).style.map(band_style, subset=["band"]).format({"precision": "{:.3f}"}, na_rep="n/a"),
                 hide_index=True, key="calibration-bands")

left, right = st.columns(2)
with left:
    st.subheader("Risk-coverage")
    st.caption("Answer only when bestScore reaches a threshold; risk = answered queries without a relevant result.")
    st.altair_chart(charts.risk_coverage(view.risk_coverage), width="stretch")
with right:
    st.subheader("bestScore against nDCG@10")
    tau = summary.best_score_kendall_tau_ndcg10
    st.caption(f"Kendall tau: {'n/a' if tau is None else f'{tau:.3f}'} over {len(view.best_vs_ndcg)} queries.",
               help=explain("kendall tau"))
    st.altair_chart(charts.best_vs_ndcg(view.best_vs_ndcg), width="stretch")
