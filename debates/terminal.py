"""Showing a running debate in a terminal: tokens as they stream, private thoughts dimmed, a verdict box."""

from __future__ import annotations

import json
from typing import Any, TextIO

from rich.console import Console
from rich.panel import Panel
from rich.text import Text

from debates import selectors
from debates.engine import Observer
from debates.formats import Format, FormatError, Step
from debates.formats.card.decide import shown, spoken
from debates.models import Debate, Event
from debates.selectors import verdict_scores
from debates.transcripts import ranking_of

SIDE_STYLE = {"for": "bold blue", "against": "bold red"}


class TerminalObserver(Observer):
    """Prints one step live at a time; steps that run alongside it are buffered and printed whole after."""

    def __init__(
        self, console: Console, fmt: Format, seat_names: dict[str, tuple[str, str]], *, show_private: bool = True
    ) -> None:
        self.console = console
        self.format = fmt
        self.seats = seat_names  # key -> (name, side)
        self.show_private = show_private
        self.live: int | None = None
        self.started: dict[int, Step] = {}
        self.buffers: dict[int, list[str]] = {}
        self.held: list[tuple[Event, str | None]] = []

    def _label(self, kind: str, seat_key: str | None, step_name: str) -> Text:
        name, side = self.seats.get(seat_key or "", ("", ""))
        if kind in ("PLAN", "THINK"):
            return Text(f"[private · {name}'s mind] {step_name.replace('_', ' ')}", style="dim italic")
        side_text = f" ({side})" if side else ""
        label = self.format.step_label(step_name)
        stage = f" · {label}" if label else ""
        return Text(f"{name}{side_text}{stage}", style=SIDE_STYLE.get(side, "bold"))

    def _streams(self, step: Step) -> bool:
        if step.json_schema is not None or step.kind == "INTERNAL":
            return False
        return self.show_private or step.visibility == "public"

    def step_started(self, debate: Debate, step: Step) -> None:
        self.started[step.ordinal] = step
        self.buffers[step.ordinal] = []
        if self.live is None and self._streams(step):
            self.live = step.ordinal
            self.console.print()
            self.console.print(self._label(step.kind, step.seat, step.step))

    def wants_deltas(self, step: Step) -> bool:
        return True  # every step is printed as it is written, a private one dimmed

    def delta(self, debate: Debate, step: Step, text: str) -> None:
        self.buffers[step.ordinal].append(text)
        if self.live == step.ordinal:
            style = "dim" if step.visibility == "private" else None
            self.console.print(text, end="", style=style, markup=False, highlight=False, soft_wrap=True)

    def restart(self, debate: Debate, step: Step) -> None:
        self.buffers[step.ordinal] = []
        if self.live == step.ordinal:
            self.console.print(Text("\n[the model is being asked again]", style="yellow"))

    def waiting(self, debate: Debate, step: Step, seconds: float, reason: str) -> None:
        self.console.print(Text(f"\n[{reason}: trying again in {seconds:.0f}s]", style="yellow"))

    async def event_saved(self, debate: Debate, event: Event) -> None:
        step = self.started.pop(event.ordinal, None)
        seat_key = step.seat if step else None
        self.buffers.pop(event.ordinal, None)
        if self.live == event.ordinal:
            self.live = None
            self.console.print()
        elif self.live is not None:
            # Never print into the middle of a streaming line: wait until that step lands.
            self.held.append((event, seat_key))
            return
        else:
            self.print_event(event, seat_key)
        for held_event, held_seat in self.held:
            self.print_event(held_event, held_seat)
        self.held.clear()
        # Hand the terminal to a step still running: print what it has so far, then stream it live.
        for ordinal in sorted(self.started):
            waiting = self.started[ordinal]
            if self._streams(waiting):
                self.live = ordinal
                self.console.print()
                self.console.print(self._label(waiting.kind, waiting.seat, waiting.step))
                self.console.print(
                    "".join(self.buffers.get(ordinal, [])),
                    end="",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                    style="dim" if waiting.visibility == "private" else None,
                )
                break

    def print_event(self, event: Event, seat_key: str | None) -> None:
        kind = event.kind
        if kind == "HEADER":
            self.print_header(event.data)
        elif kind == "INTERNAL":
            return
        elif kind == "SCORE":
            target = self.seats.get(event.data.get("for", ""), ("?", ""))[0]
            score = event.data.get("score")
            reason = event.data.get("reasoning", "no valid score was given")
            marks = event.data.get("marks")
            # A card's judge may mark each speaker on a rubric as well: "(matter 30, manner 29, method 14)".
            shown = f" ({', '.join(f'{k} {v}' for k, v in marks.items())})" if isinstance(marks, dict) and marks else ""
            self.console.print(
                Text(
                    f"  ⚖ score for {target}: {score if score is not None else '—'}/10{shown} · {reason}",
                    style="magenta",
                )
            )
        elif kind == "ERROR":
            self.console.print(Text(f"\nError: {event.content}", style="bold red"))
        elif kind == "SYSTEM":
            self.console.print(Text(event.content, style="italic cyan"), soft_wrap=True)
        elif kind in ("PLAN", "THINK") and not self.show_private:
            return
        else:
            self.console.print()
            self.console.print(self._label(kind, seat_key, event.step))
            self.console.print(
                spoken(event.content, event.data),
                style="dim" if event.visibility == "private" else None,
                markup=False,
                highlight=False,
                soft_wrap=True,
            )

    def print_header(self, data: dict[str, Any]) -> None:
        lines = [Text(data.get("topic", ""), style="bold")]
        if data.get("premise"):
            lines.append(Text(f"Premise: {data['premise']}"))
        for seat in data.get("seats", []):
            side = f" — {seat['side']}" if seat.get("side") else ""
            lines.append(Text(f"{seat['key']}: {seat['name']} ({seat['role']}{side})"))
        self.console.print(Panel(Text("\n").join(lines), title="ChaosLM debate", expand=False))


def _verdict_label(debate: Debate) -> str:
    try:
        return debate.fmt.verdict_label
    except FormatError:  # a format this version no longer has
        return "Winner"


def print_verdict(console: Console, debate: Debate) -> None:
    decided = selectors.decision(debate)
    if decided is not None:
        answer = "none" if decided["answer"] is None else shown(decided["answer"])
        body = Text(f"Answer: {answer}\n", style="bold green")
        body.append(decided["line"])
        console.print(Panel(body, title="Decision", expand=False, border_style="green"))
        if not debate.winner:
            return
    if not debate.announcement and not debate.winner:
        return
    body = Text()
    # As the page's verdict box and the Markdown export word it: a ranking in its places, a protocol's own
    # word for its outcome ("Not guilty (Defence)"), else its label for the winner.
    words = selectors.verdict_words(debate)
    ranked, unranked = ranking_of(debate)
    if ranked:
        places = ", ".join(f"{place}. {name}" for place, name in enumerate(ranked, 1))
        body.append(f"{_verdict_label(debate)}, best first: {places}\n", style="bold green")
        if unranked:
            body.append(f"Not ranked (the debate ended before they spoke): {', '.join(unranked)}\n")
    elif words:
        body.append(f"Verdict: {words} ({debate.winner})\n", style="bold green")
    else:
        body.append(f"{_verdict_label(debate)}: {debate.winner or 'undecided'}\n", style="bold green")
    if debate.scores:
        each = (
            f"{s.name} {s.score}/{s.out_of}" + (f" ({s.marks_text})" if s.marks else "") for s in verdict_scores(debate)
        )
        body.append("Scores: " + ", ".join(each) + "\n")
    if debate.contradicts:
        body.append(f"Scores contradict the verdict: {debate.outscored_by} scored higher\n", style="bold yellow")
    if debate.premise_upheld is not None and not words:
        body.append(f"Premise {'UPHELD' if debate.premise_upheld else 'REJECTED'}\n", style="bold")
    fallback = selectors.verdict_fallback(debate)
    if fallback:
        body.append(f"Not the judge's own verdict: {fallback}\n", style="bold yellow")
    if debate.announcement:
        body.append("\n" + debate.announcement_shown)
    console.print(Panel(body, title="Verdict", expand=False, border_style="green"))


class JsonLinesObserver(Observer):
    """Prints every saved event as one JSON object a line, for other programs."""

    def __init__(self, stream: TextIO, seat_keys: dict[int, str]) -> None:
        self.stream = stream
        self.seat_keys = seat_keys  # seat id -> key

    async def event_saved(self, debate: Debate, event: Event) -> None:
        self.stream.write(
            json.dumps(
                {
                    "debate": debate.pk,
                    "ordinal": event.ordinal,
                    "kind": event.kind,
                    "step": event.step,
                    "seat": self.seat_keys.get(event.seat_id or 0),
                    "visibility": event.visibility,
                    "content": event.content,
                    "data": event.data,
                    "tokens_in": event.tokens_in,
                    "tokens_out": event.tokens_out,
                    "latency_ms": event.latency_ms,
                },
                ensure_ascii=False,
            )
            + "\n"
        )
        self.stream.flush()
