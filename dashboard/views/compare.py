"""Compare: two runs metric by metric, per query, and the most regressed queries."""

import streamlit as st

from searchtrace.dashboard.ui import cached, charts, context

st.title("Compare")
home = context.home()
runs = cached.list_runs(home)
if len(runs) < 2:
    st.info("Comparing needs at least two completed runs.")
    st.stop()

left, right = st.columns(2)
with left:
    base = context.select_run(runs, "Baseline", "compare-base", url_param="base", default=1)
with right:
    cand = context.select_run(runs, "Candidate", "compare-cand", url_param="cand", default=0)
if base == cand:
    st.warning("Pick two different runs.")
    st.stop()

comparison = context.load(cached.compare_runs, home, base, cand)
if not comparison.same_dataset:
    st.warning("The runs scored different datasets (or different versions of one): deltas may mean little.")
st.caption(f"{comparison.n_queries} paired queries; delta = candidate - baseline; 95% paired bootstrap CI; "
           "p-values Holm-corrected across metrics.")
number = st.column_config.NumberColumn
st.dataframe(comparison.metrics, hide_index=True, key="compare-metrics", column_config={
    **{c: number(c, format="%.4f") for c in ("base", "candidate", "ci_low", "ci_high")},
    "delta": number("delta", format="%+.4f"),
    "p_t_test": number("p (t-test)", format="%.4f"), "p_randomization": number("p (randomization)", format="%.4f")})

metrics = comparison.metrics["metric"].tolist()
metric = st.selectbox("Metric", metrics, index=metrics.index("ndcg@10") if "ndcg@10" in metrics else 0,
                      key="compare-metric")
row = comparison.metrics.set_index("metric").loc[metric]
wins, ties, losses = st.columns(3)
wins.metric("Wins", int(row["wins"]))
ties.metric("Ties", int(row["ties"]))
losses.metric("Losses", int(row["losses"]))
st.altair_chart(charts.pair_scatter(comparison.queries[metric], metric), width="stretch")

st.header("Most regressed queries")
regressed = comparison.regressed[metric]
if regressed.empty:
    st.success(f"No query lost on {metric}.")
else:
    links = regressed.assign(open=[f"query?query={q}&run={cand}&base={base}" for q in regressed["query_id"]])
    st.dataframe(links, hide_index=True, key="compare-regressed", column_config={
        "open": st.column_config.LinkColumn("open", display_text="Query page"),
        "delta": number("delta", format="%+.4f")})
    st.caption("Open one in the Query page:")
    buttons = st.columns(min(len(regressed), 5))
    for i, query_id in enumerate(regressed["query_id"]):
        if buttons[i % len(buttons)].button(query_id, key=f"open-{query_id}"):
            st.switch_page(context.QUERY, query_params={"query": query_id, "run": cand, "base": base})
