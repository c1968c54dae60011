"""The simulated server's CORS answers, as SGLang 0.5.23's (``srt/entrypoints/http_server.py`` lines
500-506: Starlette's ``CORSMiddleware`` with every origin, method and header allowed, and credentials).

* A request with ``Origin`` gets ``Access-Control-Allow-Origin: <its origin>``,
  ``Access-Control-Allow-Credentials: true`` and ``Origin`` added to ``Vary`` (``CORSMiddleware.send``:
  credentials allowed, so the origin is mirrored, not ``*``).
* A preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``) is answered by the
  middleware itself, whatever the path: 200 ``OK`` (text), the allowed methods, the requested headers
  mirrored, ``Access-Control-Max-Age: 600``; 400 ``Disallowed CORS ...`` for a method Starlette does
  not know or a private-network request (``preflight_response``).

The API key check sits outside this middleware, as in SGLang (``add_api_key_middleware`` is added
last, so it runs first; it lets ``OPTIONS`` through).
"""

from __future__ import annotations

from aiohttp import web

#: starlette/middleware/cors.py ALL_METHODS: what allow_methods=["*"] stands for
ALL_METHODS = ("DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "QUERY")
MAX_AGE_S = 600
_VARY = "Origin, Access-Control-Request-Method, Access-Control-Request-Headers, Access-Control-Request-Private-Network"
_ORIGIN_KEY = "tuner_sim_cors_origin"


def _preflight(request: web.Request, origin: str) -> web.Response:
    headers = {"Vary": _VARY, "Access-Control-Allow-Methods": ", ".join(ALL_METHODS),
               "Access-Control-Max-Age": str(MAX_AGE_S), "Access-Control-Allow-Credentials": "true",
               "Access-Control-Allow-Origin": origin}
    failures = []
    if request.headers["Access-Control-Request-Method"] not in ALL_METHODS:
        failures.append("method")
    asked = request.headers.get("Access-Control-Request-Headers")
    if asked is not None:  # allow_headers=["*"]: the requested headers are mirrored
        headers["Access-Control-Allow-Headers"] = asked
    if request.headers.get("Access-Control-Request-Private-Network") is not None:
        failures.append("private-network")  # allow_private_network defaults to False
    if failures:
        return web.Response(text="Disallowed CORS " + ", ".join(failures), status=400, headers=headers,
                            content_type="text/plain", charset="utf-8")
    return web.Response(text="OK", status=200, headers=headers, content_type="text/plain", charset="utf-8")


@web.middleware
async def middleware(request: web.Request, handler):
    """Answers preflights; marks other requests with an ``Origin`` for :func:`add_headers`."""
    origin = request.headers.get("Origin")
    if origin is None:
        return await handler(request)
    if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
        return _preflight(request, origin)
    request[_ORIGIN_KEY] = origin
    return await handler(request)


async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the headers of a request :func:`middleware` passed (a stream's too,
    which its handler prepares before the middleware sees the response)."""
    origin = request.get(_ORIGIN_KEY)
    if origin is None:
        return
    response.headers["Access-Control-Allow-Origin"] = origin
    response.headers["Access-Control-Allow-Credentials"] = "true"
    vary = response.headers.getall("Vary", [])
    response.headers["Vary"] = ", ".join([*vary, "Origin"])
