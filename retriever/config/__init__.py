"""Search settings: the frozen settings model, the settings file and environment it is resolved from, and
the command-line flags that override both."""
