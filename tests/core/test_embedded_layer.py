"""The embedded channel layer delivers what Channels' in-memory layer delivers, at one pass per push."""

import asyncio

import pytest
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer

from chaoslm import embedded_layer
from chaoslm.embedded_layer import EmbeddedChannelLayer


def run(coroutine):
    return asyncio.run(coroutine)


def test_it_is_the_embedded_default():
    assert isinstance(get_channel_layer(), EmbeddedChannelLayer)


def test_a_group_push_reaches_every_member_once_in_order_each_with_its_own_copy():
    async def scenario():
        layer = EmbeddedChannelLayer()
        for name in ("a", "b", "c"):
            await layer.group_add("g", name)
        await layer.group_add("other", "d")
        await layer.group_discard("g", "c")
        for n in range(3):
            await layer.group_send("g", {"type": "push.html", "html": f"<p>{n}</p>"})
        got = {name: [await layer.receive(name) for _ in range(3)] for name in ("a", "b")}
        got["a"][0]["html"] = "changed by a"
        return layer, got

    layer, got = run(scenario())
    assert [m["html"] for m in got["b"]] == ["<p>0</p>", "<p>1</p>", "<p>2</p>"]
    assert got["a"][0]["html"] == "changed by a" and got["b"][0]["html"] == "<p>0</p>"
    assert "c" not in layer.channels and "d" not in layer.channels  # the discarded and the other group got nothing


def test_a_nested_message_is_copied_deeply_as_channels_does():
    async def scenario():
        layer = EmbeddedChannelLayer()
        await layer.group_add("g", "a")
        await layer.group_add("g", "b")
        message = {"type": "x", "data": {"list": [1]}}
        await layer.group_send("g", message)
        a, b = await layer.receive("a"), await layer.receive("b")
        a["data"]["list"].append(2)
        return message, b

    message, b = run(scenario())
    assert message["data"]["list"] == [1] and b["data"]["list"] == [1]


def test_a_member_at_capacity_misses_the_push_and_the_others_still_get_it():
    async def scenario():
        layer = EmbeddedChannelLayer(capacity=2)
        await layer.group_add("g", "slow")
        await layer.group_add("g", "fast")
        for n in range(3):
            await layer.group_send("g", {"type": "push.html", "html": str(n)})
            if n < 2:
                await layer.receive("fast")
        with pytest.raises(ChannelFull):
            await layer.send("slow", {"type": "push.html", "html": "direct"})
        return [(await layer.receive("slow"))["html"] for _ in range(2)], (await layer.receive("fast"))["html"]

    slow, fast = run(scenario())
    assert slow == ["0", "1"] and fast == "2"


def test_expired_messages_are_dropped_and_their_channel_leaves_its_groups(monkeypatch):
    monkeypatch.setattr(embedded_layer, "CLEAN_EVERY_SECONDS", 0.0)

    async def scenario():
        layer = EmbeddedChannelLayer(expiry=0.05)
        await layer.group_add("g", "gone")
        await layer.group_add("g", "here")
        await layer.group_send("g", {"type": "push.html", "html": "old"})
        await layer.receive("here")
        await asyncio.sleep(0.1)
        await layer.group_send("g", {"type": "push.html", "html": "new"})
        return layer, (await layer.receive("here"))["html"]

    layer, here = run(scenario())
    assert here == "new"
    assert "gone" not in layer.groups["g"] and "gone" not in layer.channels
