"""The openai client's HTTP transport: aiohttp under the client's own httpx interface.

The client's default transport (httpx over httpcore and h11) costs several times the CPU of aiohttp for
the same request: with many debates at once it was most of what a call cost (bench/concurrency.py).
The openai package ships an aiohttp transport too (`DefaultAioHttpClient`), but it maps a dropped
connection, and a refused one, to a *connect timeout*: the gateway would then retry a dead server once at
1.5x the timeout and report that it "did not answer in time". This one maps each failure to the httpx
error that says what happened, as the default transport does, so the gateway's retry policy sees the
same errors whichever transport runs:

- no answer within the timeout (connecting, or between two reads): `httpx.ConnectTimeout` / `ReadTimeout`;
- nobody listening, or the connection failing before a request went out: `httpx.ConnectError`;
- the connection dropped, or a malformed reply, after the request went out: `httpx.RemoteProtocolError`.

Each transport holds one aiohttp session (its connection pool), opened on first use on the running event
loop and closed with the openai client (the gateway keeps one per debate run: `own_connections`).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator

import aiohttp
import httpx2 as httpx

from chaoslm.llm.proxies import proxy_for


class AiohttpTransport(httpx.AsyncBaseTransport):
    def __init__(self, ssl_context: ssl.SSLContext, max_connections: int, keepalive_expiry: float = 5.0) -> None:
        self.ssl_context = ssl_context
        self.max_connections = max_connections
        self.keepalive_expiry = keepalive_expiry
        self.session: aiohttp.ClientSession | None = None
        self.proxies: dict[tuple[str, str], str | None] = {}

    def _session(self) -> aiohttp.ClientSession:
        if self.session is None:
            connector = aiohttp.TCPConnector(
                limit=self.max_connections, keepalive_timeout=self.keepalive_expiry, ssl=self.ssl_context
            )
            self.session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        return self.session

    def _proxy(self, url: httpx.URL) -> str | None:
        """The proxy HTTP(S)_PROXY and NO_PROXY name for `url`, as the default transport honours them.

        Looked up once a host: aiohttp's own `trust_env` looks them up (and reads ~/.netrc) in a thread
        for every request, a fifth of what a request cost a Celery worker's loop."""
        key = (url.scheme, url.host)
        if key not in self.proxies:
            self.proxies[key] = proxy_for(url.scheme, url.host)
        return self.proxies[key]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeout = request.extensions.get("timeout", {})
        body = await request.aread()
        try:
            response = await self._session().request(
                request.method,
                str(request.url),
                headers=request.headers,
                data=body or None,
                allow_redirects=False,
                proxy=self._proxy(request.url),
                timeout=aiohttp.ClientTimeout(
                    sock_connect=timeout.get("connect"), sock_read=timeout.get("read"), connect=timeout.get("pool")
                ),
            )
        except (aiohttp.ClientError, TimeoutError) as error:
            raise _mapped(error) from error
        return httpx.Response(
            status_code=response.status,
            headers=response.raw_headers,
            stream=_Body(response),
            request=request,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
        )

    async def aclose(self) -> None:
        if self.session is not None:
            await self.session.close()


class _Body(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self.response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            # Whatever has arrived, as it arrives: a streamed reply's events reach the reader at once.
            async for chunk in self.response.content.iter_any():
                yield chunk
        except (aiohttp.ClientError, TimeoutError) as error:
            raise _mapped(error) from error

    async def aclose(self) -> None:
        # Back to the pool if the body was read to its end, else the connection is closed.
        self.response.release()


def _mapped(error: Exception) -> httpx.TransportError:
    message = str(error) or type(error).__name__
    if isinstance(error, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(message)
    if isinstance(error, TimeoutError):  # aiohttp's socket read timeout is one too
        return httpx.ReadTimeout(message)
    if isinstance(error, aiohttp.ClientConnectorError):
        return httpx.ConnectError(message)
    return httpx.RemoteProtocolError(message)
