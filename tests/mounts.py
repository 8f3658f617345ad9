"""Whether this machine lets a test mount a small tmpfs in a mount namespace of its own (``unshare -m``)."""

from __future__ import annotations

import shutil
import subprocess
import textwrap


def namespaces_allowed() -> str | None:
    """None when ``unshare -m`` works here, else the reason a test that needs it skips."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m is not allowed here: {probe.stderr.strip()}"


SERVE_UNTIL_READY = textwrap.dedent("""
    def serve_until_ready(cli, sample, home, out, wait_s):
        \"\"\"Start ``serve`` on ``home``, wait (at most ``wait_s``) until /readyz gives an error, and put in
        ``out["serve"]`` whether it stayed up, its exit code, that error and its stderr.\"\"\"
        import json, os, re, subprocess, time, urllib.error, urllib.request
        server = subprocess.Popen([*cli, "serve", sample, "--home", home, "--port", "0"], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        seen, ready = [], None
        try:
            while not seen or not re.search(r"http://127\\.0\\.0\\.1:\\d+", seen[-1]):  # announced on stderr
                seen.append(server.stderr.readline())
                if not seen[-1]:
                    raise SystemExit("the server ended before it announced its address: " + "".join(seen))
            url = re.search(r"http://127\\.0\\.0\\.1:\\d+", seen[-1]).group(0)
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    urllib.request.urlopen(url + "/readyz", timeout=5)
                except urllib.error.HTTPError as exc:
                    ready = json.loads(exc.read())
                    if "error" in ready:
                        break
                except OSError:
                    pass
                time.sleep(0.2)
            out["serve"] = {"alive": server.poll() is None, "code": server.returncode, "readyz": ready}
        finally:
            server.terminate()
            _, err = server.communicate(timeout=30)
            out.setdefault("serve", {})["stderr"] = "".join(seen) + err
""")
"""A driver script's function (prepend it to the script): ``serve`` on a full disk, probed until it says why
it is not ready."""


def run_driver_in_namespace(driver: str, *args: str, timeout: float) -> dict:
    """Run a driver script (``python -c``) in a mount namespace of its own, with this checkout first on its
    path and nothing sent to a collector; returns the JSON object on its last line of output. Skips, naming
    the reason, where ``unshare -m`` is not allowed."""
    import json
    import os
    import sys
    from pathlib import Path

    import pytest

    reason = namespaces_allowed()
    if reason:
        pytest.skip(reason)
    repo = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (repo, os.environ.get("PYTHONPATH", "")) if p),
           "HF_HUB_OFFLINE": "1", "SEARCHTRACE_OTLP": "0"}
    done = subprocess.run(["unshare", "-m", sys.executable, "-c", driver, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
