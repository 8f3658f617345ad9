"""The judgments store: ``protocol`` (what every store does), ``jsonl`` (``judgments.jsonl`` beside
the dataset), ``postgres`` (``st_judgments`` in the store a team shares) and ``opening`` (the factory every caller
goes through: it alone names a backend), ``schema`` (the tables on PostgreSQL, the judge queue's too)."""
