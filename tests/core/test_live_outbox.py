"""The live outbox under a burst: what piled up while a push was out goes in several pushes, in order, each
small enough for a websocket message (daphne refuses one over 1 MiB, and the socket's consumer dies of it)."""

import asyncio

from channels.layers import InMemoryChannelLayer

from chaoslm import live


def test_a_burst_goes_out_in_numbered_pushes_each_under_the_limit_in_order(monkeypatch):
    layer = InMemoryChannelLayer(capacity=1000)
    monkeypatch.setattr(live, "get_channel_layer", lambda: layer)
    cards = [f'<div id="c{n}">{"x" * 3000}</div>' for n in range(1000)]  # 3 MB, queued at once

    async def scenario() -> list[dict]:
        await layer.group_add("g", "spectator")
        outbox = live.Outbox("g", "#transcript")
        for card in cards:
            outbox.html(card)
        await outbox.drain()
        received = []
        while sum(message["html"].count('<div id="c') for message in received) < len(cards):
            received.append(await asyncio.wait_for(layer.receive("spectator"), 1))
        return received

    received = asyncio.run(scenario())
    assert len(received) > 1
    assert all(len(message["html"]) <= live.MAX_PUSH_CHARS for message in received)
    assert "".join(message["html"] for message in received) == "".join(cards)
    assert [message["seq"] for message in received] == list(range(1, len(received) + 1))
