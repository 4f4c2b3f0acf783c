"""Which proxy a call to a model endpoint goes through: the one place the gateway's transport
(chaoslm/llm/transport.py) and `/readyz`'s probe of the model (chaoslm/health.py) both ask, so that the probe
reaches the endpoint the way the calls do. Standard library only: the probe must not import aiohttp."""

from __future__ import annotations

import urllib.request


def proxy_for(scheme: str, host: str) -> str | None:
    """The proxy HTTP(S)_PROXY names for a request to `host` over `scheme`, None when there is none or NO_PROXY
    lets the host be reached directly, as httpx's default transport honours them."""
    if urllib.request.proxy_bypass(host):
        return None
    return urllib.request.getproxies().get(scheme)
