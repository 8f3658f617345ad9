"""One search, stage by stage: the pipeline, its traced stages, filter and shape, the answer record,
relevance and confidence bands, retry hints, and the span helper every stage opens its span with."""
