"""A headless Chromium driven over the DevTools protocol: open a URL, wait for the page, read it, screenshot it.

``chromium --dump-dom`` returns before a Streamlit page has rendered (it fills
the page over a websocket), so pages are polled until a condition holds.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.sync.client import connect

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0")


class Chromium:
    """One headless browser with one tab; use as a context manager."""

    def __init__(self, binary: str = CHROMIUM, timeout_s: float = 30.0, window: tuple[int, int] = (1600, 1000)) -> None:
        self.binary = binary
        self.window = window
        self.timeout_s = timeout_s
        self._ids = itertools.count(1)

    def __enter__(self) -> Chromium:
        self._profile = tempfile.mkdtemp(prefix="chromium-profile-")
        self._proc = subprocess.Popen([self.binary, *FLAGS, f"--user-data-dir={self._profile}",
                                       f"--window-size={self.window[0]},{self.window[1]}", "about:blank"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._stack = contextlib.ExitStack()
        try:
            port = self._devtools_port()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
                page = next(t for t in json.load(response) if t["type"] == "page")
            self._ws = self._stack.enter_context(connect(page["webSocketDebuggerUrl"], max_size=None,
                                                         open_timeout=10))
            self.call("Page.enable")
            self.call("Emulation.setDeviceMetricsOverride", width=self.window[0], height=self.window[1],
                      deviceScaleFactor=1, mobile=False)  # the window's size is the page's, screenshots included
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()
        self._proc.terminate()
        try:
            self._proc.wait(10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        shutil.rmtree(self._profile, ignore_errors=True)

    def _devtools_port(self) -> int:
        marker = Path(self._profile) / "DevToolsActivePort"
        deadline = time.monotonic() + self.timeout_s
        while time.monotonic() < deadline:
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self._proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self._proc.returncode}")
            time.sleep(0.1)
        raise TimeoutError("chromium did not open its DevTools port")

    def call(self, method: str, **params: Any) -> dict:
        """Send one DevTools command and return its result (events in between are skipped)."""
        call_id = next(self._ids)
        self._ws.send(json.dumps({"id": call_id, "method": method, "params": params}))
        while True:
            message = json.loads(self._ws.recv(timeout=self.timeout_s))
            if message.get("id") == call_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression in the page."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def wait_for(self, expression: str, timeout_s: float | None = None) -> Any:
        """Poll until ``expression`` is truthy; returns its value."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise TimeoutError(f"timed out waiting for {expression}")

    def click_at(self, x: float, y: float) -> None:
        """A left mouse click at viewport coordinates, as a user's (canvas widgets such as tables need one)."""
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=0 if kind == "mouseMoved" else 1)

    def rect(self, selector: str) -> dict[str, float]:
        """The element's box in viewport coordinates after scrolling it into the middle of the view."""
        found = self.evaluate(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
            if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect();
            return {{x: r.x, y: r.y, width: r.width, height: r.height}}; }})()""")
        if not found:
            raise LookupError(f"no element matches {selector}")
        return found

    def click_row(self, selector: str, row: int, row_px: float = 35.0) -> None:
        """Click the selection box of a Streamlit dataframe's ``row`` (0-based, below a one-row header)."""
        box = self.rect(selector)
        time.sleep(0.3)  # the scroll settles
        box = self.rect(selector)
        self.click_at(box["x"] + 16, box["y"] + row_px * (row + 1) + row_px / 2)

    def click(self, selector: str) -> None:
        """Click the centre of the element (a button, a link)."""
        box = self.rect(selector)
        time.sleep(0.2)
        box = self.rect(selector)
        self.click_at(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
