from searchtrace.retriever.search.retry_hints import broader_query, narrower_query, related_terms, retry_hints
from searchtrace.retriever.types import GraphHit, Triple


def hit(s, p, o, hops=1, seed="x"):
    return GraphHit(Triple(s, p, o, "d1"), hops, seed)


def test_related_terms_are_one_hop_neighbours_not_in_query():
    hits = [hit("Alder", "flows through", "Brackenford"), hit("Alder", "rises in", "Fell Moor"),
            hit("Brackenford", "capital of", "Vey", hops=2), hit("Alder", "joins", "Brackenford")]
    assert related_terms("Where does the Alder flow?", hits) == ["Brackenford", "Fell Moor"]


def test_a_name_reached_only_from_another_passage_is_not_related():
    """Issue 24: an off-topic question got 'Lantry' appended, a name the walk reached from the best passage."""
    hits = [hit("Shipwrights' Guild", "seated in", "Lantry"), hit("Alder", "rises in", "Fell Moor")]
    assert related_terms("What were the causes of the French Revolution?", hits) == []
    assert related_terms("Who founded the guild?", hits, entities=["Shipwrights' Guild"]) == ["Lantry"]


def test_an_unrelated_top_title_adds_nothing():
    query = "What were the causes of the French Revolution?"
    assert retry_hints(query, [], [], "Lantry", top_related=False).narrower_query == query
    assert retry_hints(query, [], [], "Lantry").narrower_query == f"{query} Lantry"


def test_broader_drops_most_specific_word():
    assert broader_query("valve KX-220 pressure rating") == "valve pressure rating"
    assert broader_query("the harbour") == "harbour"


def test_narrower_without_graph_uses_top_title():
    assert narrower_query("harbour fees", [], "Port Vell Harbour Dues") == "harbour fees Port Vell Dues"
    assert narrower_query("harbour fees", ["Port Vell"], None) == "harbour fees Port Vell"


def test_hints_shape():
    h = retry_hints("q word", ["E"], [], None)
    assert set(h.to_json()) == {"detectedEntities", "relatedTerms", "narrowerQuery", "broaderQuery"}
    assert h.detected_entities == ("E",)


def test_an_off_topic_question_on_the_sample_gets_no_unrelated_suggestion(traced):
    retriever, _ = traced()
    query = "What were the causes of the French Revolution?"
    hints = retriever.search({"query": query, "mode": "graph"}).retry_hints
    assert hints is not None and hints.related_terms == () and hints.narrower_query == query
