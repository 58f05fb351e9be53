#!/usr/bin/env python3
"""A page in headless Chromium: a screenshot scrolled to an element, and how long it took to open.
    page.py FILE.html OUT.png [#msg-ID] [--width 1280] [--height 900] [--dark] [--timing]
Talks to Chromium over the DevTools protocol (pip: websocket-client), because `chromium --screenshot` ignores the
scroll a #fragment makes. --timing prints the page's load figures (ms from navigation start)."""
import argparse, base64, json, os, shutil, subprocess, tempfile, time, urllib.request

import websocket  # websocket-client

ap = argparse.ArgumentParser()
ap.add_argument("page")
ap.add_argument("out")
ap.add_argument("fragment", nargs="?", default="")
ap.add_argument("--width", type=int, default=1280)
ap.add_argument("--height", type=int, default=900)
ap.add_argument("--dark", action="store_true")
ap.add_argument("--timing", action="store_true")
a = ap.parse_args()

browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
profile = tempfile.mkdtemp()
port = 9333
proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                         f"--remote-debugging-port={port}", "--remote-allow-origins=*", f"--user-data-dir={profile}", "about:blank"],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            tabs = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
            page = next(t for t in tabs if t.get("type") == "page")
            break
        except Exception:
            time.sleep(0.1)
    ws = websocket.create_connection(page["webSocketDebuggerUrl"])
    n = [0]

    def call(method, **params):
        n[0] += 1
        ws.send(json.dumps({"id": n[0], "method": method, "params": params}))
        while True:
            m = json.loads(ws.recv())
            if m.get("id") == n[0]:
                return m.get("result", {})

    call("Emulation.setDeviceMetricsOverride", width=a.width, height=a.height, deviceScaleFactor=1, mobile=False)
    if a.dark:
        call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
    call("Page.enable")
    url = "file://" + os.path.abspath(a.page) + a.fragment
    call("Page.navigate", url=url)
    time.sleep(1.5)
    if a.timing:
        t = call("Runtime.evaluate", returnByValue=True, expression="""(() => {
            const n = performance.getEntriesByType('navigation')[0];
            const p = performance.getEntriesByName('first-contentful-paint')[0];
            return {domContentLoaded: Math.round(n.domContentLoadedEventEnd), load: Math.round(n.loadEventEnd),
                    firstContentfulPaint: p ? Math.round(p.startTime) : null,
                    articles: document.querySelectorAll('article').length,
                    bytes: document.documentElement.outerHTML.length};
        })()""")
        print(json.dumps(t["result"]["value"]))
    if a.fragment:
        call("Runtime.evaluate", expression=f"document.getElementById({json.dumps(a.fragment[1:])}).scrollIntoView()")
        time.sleep(0.3)
    shot = call("Page.captureScreenshot", format="png")
    with open(a.out, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
finally:
    proc.kill()
    shutil.rmtree(profile, ignore_errors=True)
