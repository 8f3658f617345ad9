"""The corrective loop's retry queries, read off a response's retry hints."""

from searchtrace.evals.runs.execution.corrective import variants
from searchtrace.retriever import RetryHints


def test_each_hint_gives_one_distinct_retry_query():
    hints = RetryHints(("Emberly",), ("springs", "gout", "baths", "spa"), "Emberly springs", "Emberly")
    assert variants("hot springs of Emberly", hints) == [
        ("narrower", "Emberly springs"), ("broader", "Emberly"),
        ("related", "hot springs of Emberly springs gout baths")]


def test_a_hint_equal_to_the_query_or_another_hint_is_not_tried_twice():
    hints = RetryHints((), (), "Emberly", "emberly ")
    assert variants("emberly", hints) == []
    assert variants("spa", hints) == [("narrower", "Emberly")]
    assert variants("spa", None) == []
