"""The judge queue (who is judging which pair), opened over the judgments store it records into:
``protocol``, ``local`` (a SQLite file beside the judgments), ``postgres`` (the shared store's, ``FOR UPDATE SKIP
LOCKED``) and ``opening`` (the factory every caller goes through: it alone names a backend)."""
