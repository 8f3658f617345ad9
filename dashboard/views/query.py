"""Query: one query in a baseline and a candidate run side by side, and across every run."""

import streamlit as st

from searchtrace.dashboard.data import find_queries
from searchtrace.dashboard.ui import cached, charts, context
from searchtrace.dashboard.ui.query_help import help_for
from searchtrace.dashboard.ui.query_parts import (
    band_chips,
    band_list,
    show_context,
    show_gold_moves,
    show_gold_paths,
    show_header,
    show_run,
)
from searchtrace.dashboard.ui.text import METRIC_FORMAT, md, show_table
from searchtrace.dashboard.ui.url_state import url_multiselect
from searchtrace.evals import BEST_SCORE, NO_CONFIDENT

home, runs = context.runs_page("Query")
VIEW = ("run", "base", "query", "gold")  # gold: the runs whose gold ranks are shown
if context.restore("query", VIEW):
    st.caption("The query shown last in this session (the link named none).")
names = context.run_names(runs)
left, right = st.columns(2)
with right:
    cand = context.select_run(runs, "Candidate run", "query-run", url_param="run")
previous = runs.set_index("run_id")["previous"].get(cand)
with left:
    if context.param("base") not in set(runs["run_id"]) and previous:
        st.query_params["base"] = previous
    base = context.select_run(runs, "Baseline run", "query-base", url_param="base",
                              default=int(runs["run_id"].tolist().index(previous)) if previous else 0)

pairs = context.load(cached.per_query, home, cand, ["query_id", "ndcg@10"])
options = pairs["query_id"].tolist()
dataset_path = context.load(cached.load_run, home, cand).dataset.path
find, pick = st.columns([1, 2])
needle = find.text_input("Find a query by its text", key="query-find", placeholder="words of the query, or its id")
wanted = context.param("query") or (options[0] if options else None)
if needle.strip():
    found = find_queries(dataset_path, options, needle)
    find.caption(f"{len(found)} matching queries" + (" (first 50)" if len(found) == 50 else ""))
    options = found["query_id"].tolist()
if wanted is None:
    st.info("This run has no queries.")
    st.stop()
    raise SystemExit  # not reached: st.stop() raises
texts = cached.query_texts(dataset_path)
# the URL's query is the one shown; the box shows it only when it is among the options (a search that does
# not match it lists the matches and leaves the box empty until one is picked)
shown = wanted if wanted in options else None
if st.session_state.get("query-id") != shown:
    st.session_state["query-id"] = shown


def _pick_query() -> None:
    if st.session_state["query-id"] is not None:
        st.query_params["query"] = st.session_state["query-id"]


pick.selectbox("Query", options, key="query-id", on_change=_pick_query, format_func=lambda q: f"{q}  {texts.get(q, '')[:90]}",
               placeholder=f"{len(options)} matching queries: pick one" if options else "no query matches")
query_id = str(wanted)
if shown is None and needle.strip():
    pick.caption(f"Showing {query_id}, which does not match the search.")
if context.param("query") != query_id:
    st.query_params["query"] = query_id
context.remember("query", VIEW)

pair = context.load(cached.side_by_side, home, base, cand, query_id)
either = pair.candidate or pair.base
if either is None:
    st.warning(f"Neither run has a record of query {md(query_id)}.")
    st.stop()
    raise SystemExit  # not reached: st.stop() raises
show_header(either)
across = cached.query_across_runs(home, query_id, ("ndcg@10", "recall@100"))  # one scan of every run's file
ndcg = dict(zip(across["run_id"], across["ndcg@10"])) if "ndcg@10" in across else {}
if base == cand:
    st.caption("Baseline and candidate are the same run: pick another baseline to compare rankings.")
left, right = st.columns(2)
with left:
    show_run(pair.base, pair.base_results, "baseline", names, ndcg.get(base))
with right:
    show_run(pair.candidate, pair.candidate_results, "candidate", names, ndcg.get(cand))
show_gold_moves(pair)
st.subheader("Gold documents, stage by stage", help=help_for("stage_rank"))
sides = [(s, v) for s, v in (("candidate", pair.candidate), ("baseline", pair.base if base != cand else None))
         if v is not None and not v.gold_path.empty]
for side, view in sides:
    show_gold_paths(view, side, names)
if not sides:
    st.caption("No gold document is judged for this query.")
show_context(either)

st.header("Across runs", help=help_for("across"))
across = across.assign(name=across["run_id"].map(names))
if "bands" in across:
    across = across.assign(bands=across["bands"].map(band_list))
show_table(st, across[["name", "created_at", "mode", "ndcg@10", "recall@100", BEST_SCORE, NO_CONFIDENT,
                     "bands", "run_id"]] if "ndcg@10" in across else across, hide_index=True, key="query-across",
             column_config={"created_at": st.column_config.DatetimeColumn("date (UTC)", format="YYYY-MM-DD HH:mm"),
                            "bands": band_chips(), NO_CONFIDENT: st.column_config.CheckboxColumn(
                                NO_CONFIDENT, help=help_for(NO_CONFIDENT)),
                            **{c: st.column_config.NumberColumn(c, format=METRIC_FORMAT, help=help_for(c))
                               for c in ("ndcg@10", "recall@100", BEST_SCORE)}})
if len(across) > 1 and "ndcg@10" in across:
    groups = runs.set_index("run_id")["group"]
    points = across.rename(columns={"ndcg@10": "value"}).assign(group=across["run_id"].map(groups))
    st.altair_chart(charts.trend(points, "ndcg@10"), width="stretch")

st.subheader("Gold documents across runs")
same = runs[runs["dataset"] == runs.set_index("run_id").at[cand, "dataset"]]["run_id"].tolist()
chosen = url_multiselect(st, "Runs", same, default=[r for r in dict.fromkeys([base, cand]) if r in same],
                         format_func=context.run_label(runs), key="query-gold-runs", param="gold",
                         help="Runs of this query's dataset, in the order picked: where each gold document "
                             "ranked in each.")
context.remember("query", VIEW)
ranks = cached.gold_ranks_across(home, query_id, tuple(chosen))
if not chosen:
    st.caption("Pick runs to see where the query's gold documents ranked in each.")
elif ranks.empty:
    st.caption("The chosen runs have no gold documents for this query (no labels, or none relevant).")
else:
    label = context.run_label(runs)
    labels = {r: label(r) for r in chosen}
    repeated = {x for x in labels.values() if list(labels.values()).count(x) > 1}
    ranks = ranks.assign(run=ranks["run_id"].map(lambda r: f"{labels[r]} {r}" if labels[r] in repeated else labels[r]))
    table = ranks.set_index(["doc_id", "title", "grade", "run"])["rank"].unstack("run")
    table = table.reindex(columns=list(dict.fromkeys(ranks["run"])))
    st.caption("Rank of each gold document in each run (1 = top; empty: not ranked within the run's depth, "
               f"{int(ranks['depth'].max())} at most).", help=help_for("gold_across"))
    show_table(st, table.reset_index(), hide_index=True, key="query-gold-ranks")
    st.altair_chart(charts.gold_ranks(ranks), width="stretch")
