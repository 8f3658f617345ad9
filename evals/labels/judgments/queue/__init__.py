"""The judge queue (who is judging which pair): ``protocol``, ``local`` (a SQLite file beside the
judgments) and ``postgres`` (the shared store's, ``FOR UPDATE SKIP LOCKED``)."""
