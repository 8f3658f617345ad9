"""Stored traces for people: the trace list's columns fitted to a width, or TSV (``listing``), and a trace's
span tree fitted to a width (``tree``)."""
