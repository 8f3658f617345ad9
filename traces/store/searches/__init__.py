"""Another retriever's searches in the store (both backends): the row each search span gets at write time
(``search_rows``), the reading that tells searches from stages (``reading``) and the per-service document-id key
(``id_keys``)."""

from searchtrace.traces.store.searches.id_keys import id_keys, set_id_key
from searchtrace.traces.store.searches.reading import Read, read_searches, searches_only
from searchtrace.traces.store.searches.search_rows import (
    ANY_SERVICE,
    COLUMNS,
    ID_KEY,
    OTLP,
    Pending,
    Tables,
    key_of,
    pending,
    record,
    rederived,
    row,
    where,
)

__all__ = ["ANY_SERVICE", "COLUMNS", "ID_KEY", "OTLP", "Pending", "Read", "Tables", "id_keys", "key_of", "pending",
           "read_searches", "record", "rederived", "row", "searches_only", "set_id_key", "where"]
