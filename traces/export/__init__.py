"""The export side: the tracer provider and its settings (``provider``), the store and OTLP exporters
(``exporter``), OTLP JSON (``otlp_json``), the buffer for a shared store out of reach (``buffered``), heavy
attributes built at export (``deferred``) and a server's wait for its trace's commit (``commits``)."""
