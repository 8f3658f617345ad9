"""The dashboard's door on the real server (``searchtrace dashboard``'s command, on a free loopback port): a page
on a DNS-rebinding domain reads nothing and opens no websocket; with a key, nothing is answered without it.

Each server answers several knocks (each costs seconds to start): one without a key, one with."""

from __future__ import annotations

import socket

from streamlit_server import serve

STREAM = "/_stcore/stream"  # Streamlit's websocket
HEALTH = "/_stcore/health"


def knock(url: str, path: str, host: str | None = None, origin: str | None = None, upgrade: bool = False,
          key: str | None = None) -> int:
    """The status of one raw request to the server at ``url`` (a websocket upgrade with ``upgrade``)."""
    port = int(url.rsplit(":", 1)[1])
    lines = [f"GET {path} HTTP/1.1", f"Host: {host or f'127.0.0.1:{port}'}"]
    if origin:
        lines.append(f"Origin: {origin}")
    if key:
        lines.append(f"Authorization: Bearer {key}")
    if upgrade:
        lines += ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
                  "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
    else:
        lines.append("Connection: close")
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    status = head.split(b"\r\n", 1)[0].split()
    assert len(status) >= 2, f"no status line from {path}: {head[:200]!r}"
    return int(status[1])


def test_a_foreign_host_or_origin_is_refused_and_loopback_is_answered(tmp_path):
    with serve(tmp_path) as url:
        own = url.removeprefix("http://")
        # DNS rebinding: the page's own name in Host, its own origin in Origin; the page and the websocket
        rebound = {"host": "evil.com:8501", "origin": "http://evil.com:8501"}
        assert knock(url, "/", host="evil.com") == 421
        assert knock(url, "/", **rebound) == 421
        assert knock(url, STREAM, host="evil.com", upgrade=True) == 421
        assert knock(url, STREAM, upgrade=True, **rebound) == 421
        # a loopback Host with a foreign Origin: a cross-site page's websocket
        assert knock(url, STREAM, origin="http://evil.com:8501", upgrade=True) == 421
        assert knock(url, "/_stcore/host-config", host="evil.com") == 421
        # this server's names: the page loads and the websocket opens
        port = own.rsplit(":", 1)[1]
        for host in (own, f"localhost:{port}", "127.0.0.1"):
            assert knock(url, "/", host=host) == 200
            assert knock(url, STREAM, host=host, origin=f"http://{host}", upgrade=True) == 101
        assert knock(url, HEALTH, host="evil.com") == 200  # the probe's "ok", whatever the name


def test_with_a_key_nothing_is_answered_without_it(tmp_path):
    with serve(tmp_path, env={"SEARCHTRACE_API_KEY": "s3cret"}) as url:
        for path, upgrade, ok in (("/", False, 200), (STREAM, True, 101)):
            assert knock(url, path, upgrade=upgrade) == 401
            assert knock(url, path, upgrade=upgrade, key="wrong") == 401
            assert knock(url, path, upgrade=upgrade, key="s3cret") == ok
        assert knock(url, "/", host="evil.com", key="s3cret") == 421  # the key does not open a rebound page
        assert knock(url, HEALTH) == 200
