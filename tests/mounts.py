"""Whether this machine lets a test mount a small tmpfs in a mount namespace of its own (``unshare -m``)."""

from __future__ import annotations

import shutil
import subprocess


def namespaces_allowed() -> str | None:
    """None when ``unshare -m`` works here, else the reason a test that needs it skips."""
    if shutil.which("unshare") is None:
        return "no unshare command"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"unshare -m is not allowed here: {probe.stderr.strip()}"
