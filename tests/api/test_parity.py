"""Everything a page does, a script can do: every page route the URL resolver has is mapped here to the API
operations that do what it does (with the same service, rule and message: tests/api/test_page_actions.py and the
other API tests check those), or is in the short list of exceptions below, with why. A new page route with neither
fails, as does a mapping to an operation the OpenAPI document does not have, or to a route that is gone."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver

from api.main import api
from api.problems import unknown
from api.urls import DeferredURLconf
from batches.kinds import KINDS

D, R = "/debates/{debate_id}", "/rooms/{room_id}"


def _batch(page: str, kind: str, arena: bool) -> dict[str, list[str]]:
    """A kind's pages (named by its model, `page`) and its operations (at /<kind>s/...); its arena's opt-in if it
    has an arena."""
    base = f"/{kind}s/{{batch_id}}"
    mapped = {
        f"{page}_list": [f"GET /{kind}s"],
        f"{page}_new": [f"POST /{kind}s", "GET /personas"],
        f"{page}_estimate": [f"POST /{kind}s/estimate"],
        f"{page}_detail": [f"GET {base}", f"GET {base}/report", f"GET {base}/events"],
        f"{page}_export": [f"GET {base}/export/{{file}}"],
        f"{page}_pause": [f"POST {base}/pause"],
        f"{page}_resume": [f"POST {base}/resume"],
        f"{page}_cancel": [f"POST {base}/cancel"],
        f"{page}_delete": [f"DELETE {base}"],
        f"{page}_visibility": [f"PATCH {base}"],
        f"{page}_share_reset": [f"POST {base}/share-link"],
        # Share links: what the page at the link shows, for whoever holds its token.
        f"{page}_share": [f"GET /shared/{kind}s/{{token}}"],
        f"{page}_share_export": [f"GET /shared/{kind}s/{{token}}/export/{{file}}"],
    }
    return {**mapped, f"{page}_arena": [f"PUT {base}/arena"]} if arena else mapped


def _batches() -> dict[str, list[str]]:
    """Every registered kind with faces for the API (batches/faces.py), from the registry."""
    mapped: dict[str, list[str]] = {}
    for kind in KINDS.values():
        faces = kind.api_faces()
        if faces is not None:
            mapped |= _batch(str(kind.model._meta.model_name), kind.kind, faces.arena is not None)
    return mapped


def _arena(names: tuple[str, str, str], at: str) -> dict[str, list[str]]:
    page, item, vote = names
    return {
        page: [f"GET /arena/{at}/next"],
        item: [f"GET /arena/{at}/{{item_id}}"],
        vote: [f"POST /arena/{at}/{{item_id}}/vote"],
    }


# Each page route (by its URL name) and the API operations that do what it does.
PARITY: dict[str, list[str]] = {
    "home": ["GET /debates"],
    "debate_new": ["POST /debates", "GET /formats", "GET /personas"],
    "persona_prompt": ["GET /personas/{persona_id}/prompt"],
    "format_list": ["GET /formats"],
    "format_detail": ["GET /formats/{name}", "GET /formats/{name}/plan"],
    "debate_detail": [f"GET {D}", f"GET {D}/events"],
    "debate_export": [f"GET {D}/export/{{kind}}"],
    "debate_end": [f"POST {D}/end"],
    "debate_start_now": [f"POST {D}/start-now"],
    "debate_speak": [f"POST {D}/speak"],
    "debate_retry": [f"POST {D}/retry"],
    "debate_visibility": [f"PATCH {D}"],
    "debate_thinking": [f"PATCH {D}"],
    "debate_share_reset": [f"POST {D}/share-link"],
    "debate_delete": [f"DELETE {D}"],
    "debate_poll": [f"GET {D}/poll"],
    "debate_poll_vote": [f"POST {D}/poll/vote"],
    "debate_poll_close": [f"POST {D}/poll/close"],
    "room_list": ["GET /rooms", "POST /rooms", "GET /room-templates"],
    "room_detail": [f"GET {R}", f"GET {R}/events"],
    "room_say": [f"POST {R}/say"],
    "room_mode": [f"POST {R}/mode"],
    "room_interrupt": [f"POST {R}/interrupt"],
    "room_keep": [f"POST {R}/keep"],
    "room_settings": [f"PUT {R}/settings"],
    "room_turn_order": [f"PUT {R}/turn-order"],
    "room_agent_settings": [f"PUT {R}/agent-settings"],
    "room_memory": [f"PUT {R}/memory"],
    "room_save_template": [f"POST {R}/template"],
    "room_add_agent": [f"POST {R}/agents"],
    "room_agent_pause": [f"PATCH {R}/agents/{{agent_id}}"],
    "room_agent_remove": [f"DELETE {R}/agents/{{agent_id}}"],
    "room_agent_next": [f"POST {R}/agents/{{agent_id}}/next"],
    "room_agent_earlier": [f"POST {R}/agents/{{agent_id}}/earlier"],
    "room_agent_retry": [f"POST {R}/agents/{{agent_id}}/retry"],
    "room_toggle_message": [f"POST {R}/messages/{{message_id}}/toggle"],
    "room_visibility": [f"PATCH {R}"],
    "room_share_reset": [f"POST {R}/share-link"],
    "room_delete": [f"DELETE {R}"],
    "room_export_md": [f"GET {R}/export/{{kind}}"],
    "room_export_json": [f"GET {R}/export/{{kind}}"],
    **_batches(),
    **_arena(("arena", "arena_match", "arena_vote"), "matches"),
    **_arena(("evidence_arena", "evidence_arena_debate", "evidence_arena_vote"), "evidence"),
    # Share links: what the page at the link shows, for whoever holds its token.
    "debate_share": ["GET /shared/debates/{token}", "GET /shared/debates/{token}/poll"],
    "debate_share_poll": ["GET /shared/debates/{token}/poll"],
    "debate_share_poll_vote": ["POST /shared/debates/{token}/poll/vote"],
    "debate_share_export": ["GET /shared/debates/{token}/export/{kind}"],
    "room_share": ["GET /shared/rooms/{token}"],
    "room_share_export_md": ["GET /shared/rooms/{token}/export/{kind}"],
    "room_share_export_json": ["GET /shared/rooms/{token}/export/{kind}"],
    "account_usage": ["GET /usage"],
    "api_tokens": ["GET /tokens"],  # its list; making a token is the exception below
    "api_token_revoke": ["DELETE /tokens/{token_id}"],
    "api_webhooks": ["GET /webhooks", "POST /webhooks", "GET /webhooks/{webhook_id}/deliveries"],
    "api_webhook_delete": ["DELETE /webhooks/{webhook_id}"],
    "api_redeliver": ["POST /deliveries/{delivery_id}/redeliver"],
}

# The page routes with no API operation, and why. Kept short: anything else a page does, a script can do.
EXCEPTIONS: dict[str, str] = {
    # Signing in and up are the browser's way to an account; a script holds a token instead.
    "login": "a browser's session",
    "logout": "a browser's session",
    "signup": "making an account",
    # Making a token: a token cannot vouch for making another (the tokens page's list and revoke are mapped).
    "api_tokens (POST)": "making a token",
    # Not an action: a redirect to the site's icon for browsers that ask /favicon.ico.
    "favicon": "the site's icon",
    # The home page's word on the embedded model while it starts, polled by that page; a debate the API starts
    # meanwhile waits for the model by itself.
    "local_model_status": "the home page's poll of the embedded model's start",
}

# Not pages: the admin (staff's own tool, with Django's URLs) and the API itself.
NOT_PAGES = ("admin/",)


def _page_routes(patterns: list, prefix: str = "") -> list[tuple[str, str]]:
    """(route, URL name) of every page route, walking the resolver's includes; the API's mount is left out."""
    found: list[tuple[str, str]] = []
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if route.startswith(NOT_PAGES):
            continue
        if isinstance(pattern, URLResolver):
            if any(isinstance(inner, DeferredURLconf) for inner in pattern.url_patterns):
                continue  # /api/v1/: the operations themselves
            found += _page_routes(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern) and pattern.callback is not unknown:
            found.append((route, pattern.name or ""))
    return found


def _operations() -> set[str]:
    schema = api.get_openapi_schema()
    return {
        f"{method.upper()} {path.removeprefix('/api/v1')}" for path, ops in schema["paths"].items() for method in ops
    }


def test_every_page_route_has_an_api_counterpart_or_a_stated_exception():
    routes = _page_routes(get_resolver().url_patterns)
    assert len(routes) > 80, "the resolver's routes were not walked"
    exceptions = {name.split(" ")[0] for name in EXCEPTIONS}
    unnamed = [route for route, name in routes if not name]
    assert not unnamed, f"page routes without a name, so without a mapping: {unnamed}"
    missing = [f"{route} ({name})" for route, name in routes if name not in PARITY and name not in exceptions]
    assert not missing, f"page routes with no API operation and no stated exception: {missing}"
    names = {name for _, name in routes}
    stale = sorted((set(PARITY) | exceptions) - names)
    assert not stale, f"mapped or excepted routes that no longer exist: {stale}"
    print(
        f"\npage routes: {len(routes)}, with an API counterpart: {sum(name in PARITY for _, name in routes)}, "
        f"exceptions: {sum(name in exceptions and name not in PARITY for _, name in routes)}"
    )


def test_every_mapped_operation_is_in_the_openapi_document():
    operations = _operations()
    unknown_operations = sorted({op for ops in PARITY.values() for op in ops} - operations)
    assert not unknown_operations, f"mapped to operations the OpenAPI document lacks: {unknown_operations}"
