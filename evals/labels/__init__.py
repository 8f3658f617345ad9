"""Labels: what is relevant, from judges, from agents' fetches, and which queries to ask.

``judgments/`` (gold labels, their store and the judge queue), ``querysets/`` (query sets from
traffic), ``implicit/`` (implicit judgments from agents' fetches), ``cli`` (the ``judge`` commands).
"""
