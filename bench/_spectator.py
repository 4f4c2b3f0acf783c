"""A debate page's live part, in Python: a websocket spectator that applies pushes as static/js/chaoslm.js does.

It keeps what a page would show (the cards by ordinal, the text of each card being written) and reconnects
as the htmx ws extension does when its socket drops or the server asks it to resync (close code 1013), with
`since` set to the newest event it shows, to the next of its addresses (the same web process or another).
It also counts what a page cannot see: pushes of a card it already had, token text received twice (which the
offsets drop), gaps, and the latency of each stamped token (the test server's `stamp_tokens`).

Used by tests/scaleout/test_crowd_restart.py and bench/crowd.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import random
import re
import time
from dataclasses import dataclass, field

import aiohttp

# The parts of a push that change a transcript, in the order they come: a card's opening tag (saved or being
# written), or a piece of a card's streamed text.
PART = re.compile(
    r'<article id="ev-(?P<ordinal>\d+)" class="(?P<classes>[^"]*)"[^>]*?(?: data-event-id="(?P<event>\d+)")?>'
    r'|<span data-into="(?P<into>[^"]+)"(?: data-gen="(?P<gen>\d+)" data-at="(?P<at>\d+)")?(?P<reset> data-reset)?>'
    r"(?P<text>[^<]*)</span>"
)
STAMP = re.compile(r"\[t(\d+)\]")
RESYNC_CODE = 1013


class Resync(Exception):
    """Text is missing before a piece: the page reconnects and catches up."""


@dataclass
class Stream:
    gen: int = 0
    text: str = ""


@dataclass
class LivePage:
    """A page's live part reading its socket and reopening it as the htmx ws extension does: when it drops or is
    refused, at the next of `urls` after a pause; when the server asks for a resync (close code 1013) or text is
    missing (`Resync`), at once at the same address. Each socket asks for what came after `since()`, the newest
    thing the page shows, so its first push (a catch-up) fills what was missed."""

    urls: list[str]  # websocket URLs without the query string, tried in turn
    connects: int = 0
    socket: aiohttp.ClientWebSocketResponse | None = None  # the one open: a test or bench may cut it

    def since(self) -> int:
        """What a new socket asks for what came after: the newest thing the page shows."""
        raise NotImplementedError

    def apply(self, message: str, *, catch_up: bool = False) -> None:
        """Count a push and show it as the page would (`Resync` if text is missing before a piece)."""
        raise NotImplementedError

    async def watch(self, session: aiohttp.ClientSession, done: asyncio.Event) -> None:
        """Follow the page until `done` is set, reconnecting as a page does."""
        attempt = 0
        while not done.is_set():
            url = self.urls[attempt % len(self.urls)]
            try:
                origin = "http" + url.removeprefix("ws").split("/ws/", 1)[0]  # the page's own, as a browser sends
                async with session.ws_connect(f"{url}?since={self.since()}", headers={"Origin": origin}) as ws:
                    self.socket = ws
                    self.connects += 1
                    first, resync = True, False
                    async for message in ws:
                        if message.type != aiohttp.WSMsgType.TEXT:
                            break
                        try:
                            self.apply(message.data, catch_up=first)
                        except Resync:
                            resync = True
                            break
                        first = False
                    if resync or ws.close_code == RESYNC_CODE:
                        continue  # to catch up: the same address
            except (TimeoutError, aiohttp.ClientError, OSError):
                pass
            attempt += 1  # the address dropped or refused us: the next one, after a pause
            if not done.is_set():
                # As the htmx ws extension waits ("full-jitter"): a crowd that lost its process does not come
                # back all in the same instant.
                await asyncio.sleep(random.random() * min(2 ** (attempt - 1), 8))


@dataclass
class Spectator(LivePage):
    saved: dict[int, int] = field(default_factory=dict)  # ordinal -> event id of the saved card shown
    writing: dict[int, Stream] = field(default_factory=dict)  # ordinal -> the card being written
    streamed: dict[int, str] = field(default_factory=dict)  # ordinal -> its text when the saved card came
    messages: int = 0
    chars: int = 0  # of all the messages received
    card_pushes: int = 0
    cards_again: int = 0  # pushes of a card already shown saved: harmless, counted
    text_again: int = 0  # code points received twice and dropped by their offsets
    gaps: int = 0  # pieces that came with text missing before them (each made the page resync)
    late: int = 0  # saved cards that came after a card saved later, outside a catch-up
    resumed: list[int] = field(default_factory=list)  # cards being written whose text so far a catch-up brought
    latencies: list[float] = field(default_factory=list)  # seconds, one per stamped token received
    last_event: int = 0

    def since(self) -> int:
        return max(self.saved.values(), default=0)

    def apply(self, message: str, *, catch_up: bool = False) -> None:
        self.messages += 1
        self.chars += len(message)
        now = time.time()
        for part in PART.finditer(message):
            if part["ordinal"] is not None:
                self._card(int(part["ordinal"]), part["classes"].split(), part["event"], catch_up)
            elif self._piece(part, now) and catch_up:
                self.resumed.append(int(part["into"][3:-5]))

    def _card(self, ordinal: int, classes: list[str], event: str | None, catch_up: bool) -> None:
        if "writing" in classes:
            if ordinal in self.saved and ordinal not in self.writing:
                return  # a card being written never replaces a saved one
            self.writing[ordinal] = Stream()
            return
        if event is None:
            return
        self.card_pushes += 1
        event_id = int(event)
        if self.saved.get(ordinal) == event_id:
            self.cards_again += 1
        elif event_id < self.last_event and not catch_up:
            self.late += 1
        self.last_event = max(self.last_event, event_id)
        stream = self.writing.pop(ordinal, None)
        if stream is not None and stream.text:
            self.streamed[ordinal] = stream.text
        self.saved[ordinal] = event_id

    def _piece(self, part: re.Match[str], now: float) -> bool:
        """Apply a piece of streamed text; True if it started the stream anew with text (a catch-up's)."""
        into = part["into"]
        if not into.startswith("ev-") or not into.endswith("-text"):
            return
        stream = self.writing.get(int(into[3:-5]))
        if stream is None:
            return False
        text = html.unescape(part["text"])
        for stamp in STAMP.findall(text):
            self.latencies.append(now - int(stamp) / 1e6)
        if part["at"] is None:
            stream.text += text
            return False
        gen, at = int(part["gen"]), int(part["at"])
        if part["reset"]:
            if gen < stream.gen or (gen == stream.gen and not text):
                return False
            stream.gen, stream.text = gen, text
            return bool(text)
        if gen < stream.gen:
            return False
        if gen > stream.gen or at > len(stream.text):
            self.gaps += 1
            raise Resync
        if at + len(text) <= len(stream.text):
            self.text_again += len(text)
            return False
        self.text_again += len(stream.text) - at
        stream.text += text[len(stream.text) - at :]
        return False

    async def watch_until(self, session: aiohttp.ClientSession, done: asyncio.Event) -> None:
        """`watch`, stopped once `done` is set and nothing more has come for a moment."""
        task = asyncio.ensure_future(self.watch(session, done))
        await done.wait()
        seen = -1
        while seen != self.card_pushes:
            seen = self.card_pushes
            await asyncio.sleep(1.0)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


# A room page's parts, in the order they come: a saved message's card, a card being written (an agent's, by
# agent id), a card taken away, the pending list replaced whole (a catch-up's), a piece of streamed text.
ROOM_PART = re.compile(
    r'<article id="msg-(?P<message>\d+)" class="msg msg-(?P<kind>[a-z]+)'
    r'|<article id="think-(?P<thinking>\d+)"'
    r'|<template data-remove="think-(?P<removed>\d+)">'
    r'|<section id="pending"[^>]*hx-swap-oob="true"'
    r'|<span data-into="think-(?P<into>\d+)-text"(?: data-gen="(?P<gen>\d+)" data-at="(?P<at>\d+)")?'
    r"(?P<reset> data-reset)?>(?P<text>[^<]*)</span>"
)


@dataclass
class RoomWatcher(LivePage):
    """A room page's live part, in Python, as static/js/chaoslm.js applies it; reconnects as the page does, with
    `since` its newest message (the page's rule: one less than its oldest pending answer, if it shows one)."""

    messages: dict[int, str] = field(default_factory=dict)  # message id -> kind, in the order they came
    writing: dict[int, Stream] = field(default_factory=dict)  # agent id -> its card being written
    streamed: list[str] = field(default_factory=list)  # each written card's text when it was taken away
    messages_received: int = 0
    cards_again: int = 0  # pushes of a message already shown: harmless, counted
    late: int = 0  # a message that came after a later one, outside a catch-up
    text_again: int = 0
    gaps: int = 0
    resumed: list[str] = field(default_factory=list)  # texts so far that a catch-up brought
    latencies: list[float] = field(default_factory=list)
    last: int = 0

    def since(self) -> int:
        said = [pk for pk, kind in self.messages.items() if kind != "pending"]
        pending = [pk for pk, kind in self.messages.items() if kind == "pending"]
        since = max(said, default=0)
        return min(since, min(pending) - 1) if pending else since

    def apply(self, message: str, *, catch_up: bool = False) -> None:
        self.messages_received += 1
        now = time.time()
        for part in ROOM_PART.finditer(message):
            if part["message"] is not None:
                pk = int(part["message"])
                if pk in self.messages and self.messages[pk] == part["kind"]:
                    self.cards_again += 1
                elif pk < self.last and not catch_up and part["kind"] != "pending":
                    self.late += 1
                self.messages[pk] = part["kind"]
                if part["kind"] != "pending":
                    self.last = max(self.last, pk)
            elif part["thinking"] is not None:
                self.writing.setdefault(int(part["thinking"]), Stream())
            elif part["removed"] is not None:
                stream = self.writing.pop(int(part["removed"]), None)
                if stream is not None:
                    self.streamed.append(stream.text)
            elif part["into"] is not None:
                self._piece(part, now, catch_up)
            else:  # the pending list, replaced: what it held is gone, the cards being written come after it
                self.writing.clear()
                self.messages = {pk: kind for pk, kind in self.messages.items() if kind != "pending"}

    def _piece(self, part: re.Match[str], now: float, catch_up: bool) -> None:
        stream = self.writing.get(int(part["into"]))
        if stream is None:
            return
        text = html.unescape(part["text"])
        for stamp in STAMP.findall(text):
            self.latencies.append(now - int(stamp) / 1e6)
        if part["at"] is None:
            stream.text += text
            return
        gen, at = int(part["gen"]), int(part["at"])
        if part["reset"]:
            if gen < stream.gen or (gen == stream.gen and not text):
                return
            stream.gen, stream.text = gen, text
            if catch_up and text:
                self.resumed.append(text)
            return
        if gen < stream.gen:
            return
        if gen > stream.gen or at > len(stream.text):
            self.gaps += 1
            raise Resync
        if at + len(text) <= len(stream.text):
            self.text_again += len(text)
            return
        self.text_again += len(stream.text) - at
        stream.text += text[len(stream.text) - at :]
