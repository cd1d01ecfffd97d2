"""Chat completions over plain HTTP with ``http.client``, for OpenAI-compatible servers at an ``http://`` URL.

The SDK's request path (its request builder, then httpx's and httpcore's) costs ~0.9 ms of CPU a call, under the
interpreter lock that 32 questions in flight share; ``http.client`` on a kept-alive connection ~0.16 ms
(/tmp/i17c/sdkbench.py: one 6 kB request to the fake server, 300 calls). The request is the SDK's: its default
headers (User-Agent, X-Stainless-*, OpenAI-Organization/-Project) and its auth header, read from the SDK client
once, and an HTTP error reply is turned into the SDK's own exception (``_make_status_error_from_response``), so
the provider maps it exactly as before. Used only where the SDK would add nothing the server sees: plain
``http://`` (a local or in-cluster server), no proxy for the host, a static API key. HTTPS (the OpenAI API),
proxies and workload identity stay with the SDK.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.parse
import urllib.request
from typing import Any

import httpx2
import openai

# a kept-alive connection the server has closed meanwhile fails at once, before any reply: sent again on a fresh
# one (what httpx's pool does too); any other failure is the call's
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, http.client.CannotSendRequest)


def plain_http_for(client: openai.OpenAI, base_url: str | None, timeout_s: float) -> PlainHTTP | None:
    """A :class:`PlainHTTP` for ``client`` when its requests can go that way (see the module doc), else None."""
    if not base_url or not base_url.startswith("http://"):
        return None
    url = urllib.parse.urlsplit(base_url)
    host = url.hostname or ""
    if "http" in urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
        return None  # the SDK's httpx client honours HTTP_PROXY; keep it
    auth = client.auth_headers
    if not auth.get("Authorization"):
        return None  # no static key: workload identity or a custom auth flow, which the SDK runs per request
    headers = {k: v for k, v in client.default_headers.items() if isinstance(v, str)}  # (Omit: left out)
    # what the SDK adds per request: it never retries (max_retries=0) and states its read timeout
    sent = {**headers, **auth, "x-stainless-retry-count": "0", "x-stainless-read-timeout": str(timeout_s)}
    return PlainHTTP(client, host, url.port or 80, url.path.rstrip("/"), sent, timeout_s)


class PlainHTTP:
    """POSTs to one server over a pool of kept-alive connections; safe to share between threads."""

    def __init__(self, client: openai.OpenAI, host: str, port: int, prefix: str, headers: dict[str, str],
                 timeout_s: float):
        self._client, self.host, self.port, self.prefix = client, host, port, prefix
        self.headers, self.timeout_s = headers, timeout_s
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def post(self, path: str, body: dict[str, Any]) -> httpx2.Response:
        """The reply as an ``httpx2.Response`` (what the SDK's ``post`` returned); an HTTP error, a timeout or an
        unreachable server raise the SDK's exceptions (APIStatusError, APITimeoutError, APIConnectionError)."""
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()  # as the SDK
        url = self.prefix + path
        for attempt in (1, 2):
            conn, reused = self._take()
            try:
                conn.request("POST", url, body=data, headers=self.headers)
                reply = conn.getresponse()
                content = reply.read()
            except _STALE as exc:
                conn.close()
                if reused and attempt == 1:
                    continue
                raise openai.APIConnectionError(request=self._request(url)) from exc
            except (TimeoutError, socket.timeout) as exc:
                conn.close()
                raise openai.APITimeoutError(request=self._request(url)) from exc
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                raise openai.APIConnectionError(request=self._request(url)) from exc
            if reply.will_close:
                conn.close()
            else:
                self._give_back(conn)
            response = httpx2.Response(reply.status, headers=reply.getheaders(), content=content,
                                       request=self._request(url))
            if response.status_code >= 400:
                raise self._client._make_status_error_from_response(response)  # the SDK's own error for it
            return response
        raise AssertionError("unreachable")  # (the loop returns or raises)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return http.client.HTTPConnection(self.host, self.port, timeout=self.timeout_s), False

    def _give_back(self, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            self._idle.append(conn)

    def _request(self, url: str) -> httpx2.Request:
        return httpx2.Request("POST", f"http://{self.host}:{self.port}{url}")
