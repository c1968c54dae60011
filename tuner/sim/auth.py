"""The simulated server's API keys, as SGLang 0.5.23 checks them (``srt/utils/auth.py``).

With ``--api-key`` or ``--admin-api-key`` SGLang adds a middleware (``entrypoints/http_server.py``
lines 2887-2898) that decides each request by its route's level (``decide_request_auth``, lines
74-151): ``/health*``, ``/ready`` and ``/metrics`` (and ``OPTIONS``) never need a key; an
"admin optional" route (``/flush_cache``, ``http_server.py`` lines 1025-1026) wants the admin key when
one is set, else the API key when one is set; every other route wants the API key when one is set.
A key is ``Authorization: Bearer KEY``; a request without the right one gets 401
``{"error": "Unauthorized"}``. The simulator has no "admin force" route.
"""

from __future__ import annotations

import secrets

from aiohttp import web

#: Paths SGLang lets through whatever keys are set (prefixes, as ``decide_request_auth`` matches them).
OPEN_PREFIXES = ("/health", "/ready", "/metrics")
#: The simulator's routes SGLang marks ``AuthLevel.ADMIN_OPTIONAL``.
ADMIN_OPTIONAL = ("/flush_cache",)


def _bearer(header: str | None, expected: str) -> bool:
    if not header:
        return False
    parts = header.split(" ", 1)
    return len(parts) == 2 and parts[0].lower() == "bearer" and secrets.compare_digest(parts[1], expected)


def allowed(method: str, path: str, authorization: str | None, api_key: str | None,
            admin_api_key: str | None) -> bool:
    """Whether SGLang lets the request through (``decide_request_auth`` for the simulator's routes)."""
    if method == "OPTIONS" or path.startswith(OPEN_PREFIXES):
        return True
    if path in ADMIN_OPTIONAL and admin_api_key:
        return _bearer(authorization, admin_api_key)
    return _bearer(authorization, api_key) if api_key else True


def middleware(api_key: str | None, admin_api_key: str | None):
    """An aiohttp middleware refusing what SGLang refuses, or None when no key is set (no check)."""
    if not api_key and not admin_api_key:
        return None

    @web.middleware
    async def check_key(request: web.Request, handler):
        if not allowed(request.method, request.path, request.headers.get("Authorization"), api_key,
                       admin_api_key):
            return web.json_response({"error": "Unauthorized"}, status=401)
        return await handler(request)

    return check_key
