"""The span side: every span name and attribute key once (``vocabulary``), the pure attribute builders
(``attributes``), and the OpenInference keys derived from ours at export (``openinference``)."""
