"""The OTLP receiver: traces any instrumented program sends, decoded, checked and stored.

``bodies`` (an OTLP/HTTP body, decompressed within bounds, to the request message), ``otlp_json`` (its
JSON encoding), ``values`` (its attribute values), ``spans`` (the request to ``ReadableSpan``s, each
checked), ``limits`` (what a request may hold, the totals), ``answers`` (what OTLP/HTTP answers),
``writer`` (group commit to the store), ``route`` (``POST /v1/traces`` as an ASGI app),
``grpc_service`` (the same over gRPC), ``app`` (the receiver alone) and ``cli`` (``searchtrace
collect``).
"""
