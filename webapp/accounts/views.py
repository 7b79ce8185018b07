"""Page views: the browser application's shell, built by Vite from frontend/.

The shell is one HTML page for every path under /app/; the JavaScript bundle routes inside
it and talks to the REST API only. Asset names come from Vite's manifest
(frontend/dist/.vite/manifest.json), so a rebuild needs no template change.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.csrf import ensure_csrf_cookie

ENTRY = "src/main.jsx"
NOT_BUILT = (
    "The front end is not built: run `npm ci && npm run build` in frontend/ "
    "(./studio run does it for you)."
)


def manifest_path() -> Path:
    """Return the path of Vite's build manifest."""
    return Path(settings.BASE_DIR) / "frontend" / "dist" / ".vite" / "manifest.json"


def entry_assets(manifest: dict[str, Any], entry: str = ENTRY) -> dict[str, list[str]]:
    """Return the script and stylesheet files (relative to the static root) of `entry`.

    Stylesheets of statically imported chunks are included, in import order.
    """
    scripts: list[str] = []
    styles: list[str] = []
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or name not in manifest:
            return
        seen.add(name)
        chunk = manifest[name]
        for imported in chunk.get("imports", []):
            visit(imported)
        styles.extend(css for css in chunk.get("css", []) if css not in styles)

    visit(entry)
    if entry in manifest:
        scripts.append(manifest[entry]["file"])
    return {"scripts": scripts, "styles": styles}


@ensure_csrf_cookie
@login_required
def app_shell(request: HttpRequest, path: str = "") -> HttpResponse:
    """Return the single-page application's HTML shell (503 when the bundle is not built)."""
    try:
        manifest = json.loads(manifest_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return HttpResponse(NOT_BUILT, status=503, content_type="text/plain; charset=utf-8")
    return render(request, "spa.html", {"assets": entry_assets(manifest)})
