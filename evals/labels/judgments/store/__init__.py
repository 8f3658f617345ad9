"""The judgments store: ``protocol`` (what every store does), ``jsonl`` (``judgments.jsonl`` beside
the dataset) and ``postgres`` (``st_judgments`` in the store a team shares)."""
