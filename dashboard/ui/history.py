"""Browser history without the entries a page's own URL writes add: one Back press returns to the page before.

What Streamlit 1.67 does (read from its frontend, ``static/js/index.*.js``):

- ``st.query_params`` has no replace: every write is sent as a ``page_info_changed``
  message, and the frontend's ``handlePageInfoChanged`` calls
  ``history.pushState`` (``replaceState`` only while it replays a Back or Forward).
- A move to another page (sidebar, ``st.switch_page``) is a ``pushState`` of the new
  path by ``maybeUpdatePageUrl``, carrying the old page's parameters.
- Only widgets bound with ``bind="query-params"`` write with ``replaceState``; such a
  parameter cannot be set or deleted through ``st.query_params``, which the
  dashboard's URL scheme (``ui.url_state``, ``ui.context.restore``) relies on.

So a sidebar move added two entries: the new path with the old page's
parameters, then the new page filling in its own. The best available is a
small script, run once per browser tab, that turns a ``pushState`` keeping the
path into a ``replaceState``: a page that fills in or changes its own URL no
longer adds an entry, and a move to another page still adds exactly one. A push
leaving the app's root (only page paths lack a trailing slash) replaces it too:
the root only redirects to /runs, and Back onto it would redirect again.
(``st.switch_page`` first writes the new page's parameters under the old
path: that now replaces the old page's entry, and Back to it reopens the view
that page showed last, which ``ui.context.restore`` keeps for exactly this.)
"""

from __future__ import annotations

__all__ = ["SCRIPT", "keep_history_clean"]

#: Installed once per tab (the flag survives reruns): a push to the same path becomes a replace.
SCRIPT = """<script>
(() => {
  const w = window.parent && window.parent.history ? window.parent : window;
  if (w.__searchtraceHistory) return;
  w.__searchtraceHistory = true;
  const push = w.history.pushState.bind(w.history);
  w.history.pushState = (state, title, url) => {
    const next = new URL(url ?? w.location.href, w.location.href);
    // the same page's URL filled in, or the app's root (a redirect to /runs) left: nothing to go back to
    if (next.pathname === w.location.pathname || w.location.pathname.endsWith("/")) {
      return w.history.replaceState(state, title, url);
    }
    return push(state, title, url);
  };
})();
</script>"""


def keep_history_clean() -> None:
    """Install :data:`SCRIPT` in the page (in the sidebar, where an empty element takes no room)."""
    import streamlit as st

    st.sidebar.html(SCRIPT, unsafe_allow_javascript=True)
