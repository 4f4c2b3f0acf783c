"""Transcript export as Markdown and JSON, and the `partial-` files written when a debate fails.

What an export holds follows the page's rule (debates/privacy.py): the owner's and staff's has everything,
prompts and internal calls included; anyone else's (every export through a share link, and
`export_transcript --public`) has the debaters' private thinking only while the owner shows it, and never a
prompt, since a prompt may quote its seat's private notes (a structured opening embeds the preparation).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from chaoslm import costs
from chaoslm.llm import marks
from debates import poll_hooks, selectors
from debates.formats import Format, FormatError
from debates.formats.card.decide import spoken
from debates.formats.quotes import UNVERIFIED_CLOSE, UNVERIFIED_OPEN, VERIFIED_CLOSE, VERIFIED_OPEN, verify
from debates.models import Debate, Event
from debates.privacy import EVERYTHING, Access

# Calls whose answers feed a later step and are not shown: with the prompts, for the owner and staff only.
HIDDEN_KINDS = {Event.Kind.INTERNAL}


def _format(debate: Debate) -> Format | None:
    """The debate's format; None for one this version no longer has (its export still reads)."""
    try:
        return debate.fmt
    except FormatError:
        return None


def _checked_quotes(passage: str | None, event: Event, seat_key: str | None, judge: str | None) -> dict[str, Any]:
    """An evidence speech's quotes as checked against the passage, and the speech as the judge read it."""
    if passage is None or event.kind != Event.Kind.TURN or seat_key is None or seat_key == judge:
        return {}
    checked = verify(passage, event.content)
    return {"quotes": [{"text": q.text, "verified": q.verified} for q in checked.quotes], "as_judged": checked.marked}


def _as_judged_markdown(marked: str) -> str:
    """A speech as the judge read it, its quote marks spelled out for a Markdown reader."""
    for mark, text in ((VERIFIED_OPEN, "“"), (UNVERIFIED_OPEN, "“"), (VERIFIED_CLOSE, "” [verified]")):
        marked = marked.replace(mark, text)
    return marked.replace(UNVERIFIED_CLOSE, "” [unverified]")


def event_rows(
    debate: Debate, events: QuerySet[Event], *, access: Access = EVERYTHING
) -> list[tuple[Event, dict[str, Any]]]:
    """Each of `events` the viewer may read (`access`), with its export row: the exports' and the API's one rule."""
    seats = {s.pk: s for s in debate.seats.all()}
    # An evidence protocol's speeches carry their quotes as checked (the judge's marks) in every export.
    fmt = _format(debate)
    passage = debate.options.get(fmt.quotes_option) if fmt and fmt.quotes_option else None
    judge = fmt.judge_seat if fmt else None
    rows = []
    for event in events:
        if event.kind in HIDDEN_KINDS and not access.prompts:
            continue
        if event.visibility == Event.Visibility.PRIVATE and not access.thinking:
            continue
        seat = seats.get(event.seat_id)
        prompt = {"prompt": event.prompt} if access.prompts else {}
        rows.append(
            (
                event,
                {
                    "ordinal": event.ordinal,
                    "kind": event.kind,
                    "step": event.step,
                    # The step as the event's card names it (a card's label, "negative question 1"): the step alone
                    # is a name for code (`neg_question_1`). "" for a format's ordinary turns and a message no step
                    # asked for.
                    "label": fmt.step_label(event.step) if fmt else "",
                    "seat": seat.key if seat else None,
                    "speaker": seat.name if seat else None,
                    "visibility": event.visibility,
                    **prompt,
                    "content": event.content,
                    **_checked_quotes(passage, event, seat.key if seat else None, judge),
                    "data": event.data,
                    "tokens_in": event.tokens_in,
                    "tokens_out": event.tokens_out,
                    "tokens_cached": event.tokens_cached,
                    # Dollars as an exact decimal string; null: no call, or a call at an unknown price.
                    "cost": None if event.cost is None else str(event.cost),
                    "latency_ms": event.latency_ms,
                    "model": event.model,
                    "created_at": event.created_at.isoformat(),
                },
            )
        )
    return rows


def as_dict(debate: Debate, *, access: Access = EVERYTHING, messages: bool = False) -> dict[str, Any]:
    """The JSON export's content. With `messages` (for a viewer who may read the prompts), each model call's event
    carries the messages it was sent, `null` where they cannot be shown as sent."""
    seats = {s.pk: s for s in debate.seats.all()}
    events = [row for _, row in event_rows(debate, debate.events.all(), access=access)]
    if messages and access.prompts:
        sent = selectors.messages_sent(debate)
        for row in events:
            if row.get("prompt"):
                row["messages"] = sent.get(row["ordinal"])
    made_by = selectors.made_by(debate)
    ranking, unranked = ranking_of(debate)
    fmt = _format(debate)
    return {
        "id": debate.pk,
        "topic": debate.topic,
        "premise": debate.premise,
        "material": debate.material,
        "format": debate.format,
        # Those it runs at, its format's defaults with those given (stored as given: the command stores only those).
        "options": fmt.effective_options(debate.options) if fmt else debate.options,
        "status": debate.status,
        "error": debate.error_text,
        # The line the debate's pages show when the embedded model wrote its replies (all or some), or None.
        "written_by_embedded": made_by.line(list(seats.values())) or None,
        "seats": [
            {
                "key": s.key,
                "name": s.name,
                "role": s.role,
                "side": s.side,
                "human": s.is_human,
                "model": s.llm.get("model", ""),
                # The embedded model its calls were made to (SmolLM2-135M), or None.
                "embedded_model": made_by.embedded.get(s.pk),
            }
            for s in seats.values()
        ],
        "verdict": {
            "winner": debate.winner,
            "scores": debate.scores,
            "premise_upheld": debate.premise_upheld,
            "announcement": debate.announcement,
            "ranking": ranking,
            # What the protocol calls the outcome ("Not guilty"), where its winning side has a word for it.
            "words": selectors.verdict_words(debate),
            # Sides the debate ended before they spoke: below the ranking, not placed in it as if judged.
            "unranked": unranked,
            # Why the verdict is not the judge's own (its verdict JSON stayed invalid), or None.
            "fallback": selectors.verdict_fallback(debate) or None,
            # A rubric's marks by criterion behind each score, by side name ({} for a verdict without them).
            "marks": selectors.rubric_marks(debate),
        }
        if debate.announcement or debate.winner
        else None,
        # A card's decision over its seats' answers (rule, answer, split, voters, reason); None if it decides none.
        "decision": selectors.decision(debate),
        "events": events,
        "cost": cost_of(debate),
        # Counts only, of the phases that have closed (audience/votes.py); None for a debate without a poll.
        "audience_poll": poll_hooks.poll().export(debate),
    }


def _verbatim(text: str) -> str:
    """`text` as a fenced block, which a Markdown reader shows as it is (no markup, no HTML): its fence is longer than
    any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _listed(marks: dict[str, Any]) -> str:
    """Marks by criterion as the exports write them: "matter 30, manner 29"."""
    return ", ".join(f"{key} {value}" for key, value in marks.items())


def _marks(data: dict[str, Any]) -> str:
    """A score's marks by criterion (a card whose judge marks each speaker on a rubric), as " (matter 30, ...)"."""
    marks = data.get("marks")
    if not isinstance(marks, dict) or not marks:
        return ""
    return f" ({_listed(marks)})"


def _cuts(data: dict[str, Any]) -> list[str]:
    """The line saying a reply was cut, as its card says it: at the word limit, or by the model's token limit
    mid-reply; [] for a reply given whole."""
    cuts = []
    if data.get("truncated_from_words"):
        cuts.append(f"cut from {data['truncated_from_words']} words to the word limit")
    if data.get("cut_at_tokens"):
        cuts.append(marks.cut_words(data["cut_at_tokens"]))
    return [f"*({'; '.join(cuts)})*", ""] if cuts else []


def ranking_of(debate: Debate) -> tuple[list[str], list[str]]:
    """A debate whose judge ranks more than two sides: every side that spoke, best first, then those the debate
    ended before, in seat order, each by the name its verdict gives it (a team's label, a side of one seat its
    speaker's name). ([], []) for any other debate, or one of a format no longer known."""
    fmt = _format(debate)
    if fmt is None or not fmt.ranks_teams():
        return [], []
    ranked = selectors.ranked_sides(debate)  # one read of the events: both lists come from it
    return [_side_name(s) for s in ranked if s.spoke], [_side_name(s) for s in ranked if not s.spoke]


def _side_name(side: selectors.RankedSide) -> str:
    return side.seats[0][1] if len(side.seats) == 1 else side.label


def cost_of(debate: Debate) -> dict[str, Any]:
    """The debate's cost in all and per persona and model (chaoslm/costs.py): one query."""
    calls = debate.events.filter(tokens_in__gt=0)
    rows = costs.totals_by(calls, "seat__name", "model")
    total = sum((row[1] for row in rows), costs.Total())
    return {
        **total.as_json(),
        "by_persona": [
            {"persona": name, "model": model, "calls": t.calls, "tokens_in": t_in, "tokens_out": t_out, **t.as_json()}
            for (name, model), t, t_in, t_out, _ in rows
        ],
    }


def as_json(debate: Debate, *, access: Access = EVERYTHING, messages: bool = False) -> str:
    return json.dumps(as_dict(debate, access=access, messages=messages), indent=2, ensure_ascii=False)


def as_markdown(debate: Debate, *, access: Access = EVERYTHING) -> str:
    data = as_dict(debate, access=access)
    fmt = _format(debate)

    def heading(event: dict[str, Any]) -> str:
        """A public statement's heading: its speaker, and the step when the format names one (a cross-examination
        question reads as one)."""
        title = fmt.step_title(event["step"]) if fmt else ""
        return f"### {event['speaker'] or ''}" + (f" — {title}" if title else "")

    lines = [f"# {data['topic']}", ""]
    if data["premise"]:
        lines += [f"**Premise:** {data['premise']}", ""]
    if data["material"]:
        lines += ["<details><summary>Material</summary>", "", _verbatim(data["material"]), "", "</details>", ""]
    shown = fmt.title if fmt else data["format"]  # a card or format no longer known keeps its name
    lines.append(f"**Format:** {shown} · **Status:** {data['status']} · **Cost:** {data['cost']['text']}")
    lines.append("")
    if data["written_by_embedded"]:
        lines += [f"*{data['written_by_embedded']}*", ""]
    for seat in data["seats"]:
        side = f", {seat['side']}" if seat["side"] else ""
        lines.append(f"- **{seat['name']}** ({seat['key']}{side})")
    lines.append("")
    for event in data["events"]:
        kind, speaker, content = event["kind"], event["speaker"] or "", event["content"]
        if kind == "HEADER":
            continue
        if kind == "SCORE":
            score = event["data"].get("score", "—")
            target = next((s["name"] for s in data["seats"] if s["key"] == event["data"].get("for")), "")
            marks = _marks(event["data"])
            lines += [f"> **Score for {target}: {score}/10**{marks} — {event['data'].get('reasoning', '')}", ""]
        elif kind in ("PLAN", "THINK", "INTERNAL"):
            # Named as its card names it ("preparation", "deliberation"); by its kind where the format names none.
            named = event["label"] or kind.lower()
            lines += [
                f"<details><summary>{speaker} · {named} (private)</summary>",
                "",
                content,
                "",
                *_cuts(event["data"]),
                "</details>",
                "",
            ]
        elif kind == "SYSTEM":
            lines += [f"*{content}*", ""]
        elif kind == "ERROR":
            lines += [f"**Error:** {content}", ""]
        elif kind == "VERDICT":
            lines += [f"## Verdict — {speaker}", "", content, "", *_cuts(event["data"])]
        elif "as_judged" in event:
            counts = sum(q["verified"] for q in event["quotes"]), len(event["quotes"])
            lines += [heading(event), "", _as_judged_markdown(event["as_judged"]), "", *_cuts(event["data"])]
            if counts[1]:
                lines += [f"*{counts[1]} quote{'s' if counts[1] != 1 else ''}: {counts[0]} verified*", ""]
        else:
            lines += [heading(event), "", spoken(content, event["data"]), "", *_cuts(event["data"])]
    verdict = data["verdict"]
    if verdict and verdict["winner"]:
        scores = ", ".join(f"{name} {score}" for name, score in verdict["scores"].items())
        label = fmt.verdict_label if fmt else "Winner"
        # A ranking names every side in its place, not only the first.
        shown = ", ".join(f"{place}. {name}" for place, name in enumerate(verdict["ranking"], 1)) or verdict["winner"]
        if verdict["words"]:
            shown, label = f"{verdict['words']} ({verdict['winner']})", "Verdict"
        lines.append(f"**{label}:** {shown}" + (f" ({scores})" if scores else ""))
        if verdict["unranked"]:
            lines.append(f"**Not ranked** (the debate ended before they spoke): {', '.join(verdict['unranked'])}")
        if verdict["marks"]:
            by_side = verdict["marks"].items()
            lines.append("**Marks:** " + " · ".join(f"{name}: {_listed(marks)}" for name, marks in by_side))
        if verdict["premise_upheld"] is not None and not verdict["words"]:
            lines.append(f"**Premise:** {'upheld' if verdict['premise_upheld'] else 'rejected'}")
    if verdict and verdict["fallback"]:
        lines.append(f"**Not the judge's own verdict:** {verdict['fallback']}")
    if data["decision"]:
        lines.append(f"**Decision:** {data['decision']['line']}")
    lines += poll_hooks.poll().export_markdown(data["audience_poll"])
    if data["error"]:
        lines += ["", f"**This debate stopped with an error:** {data['error']}"]
    return "\n".join(lines).rstrip() + "\n"


def save_partial(debate: Debate) -> Path:
    """Write the transcript of a failed debate as partial-<id>.md and .json; return the .md path."""
    folder = Path(settings.CHAOSLM_TRANSCRIPTS_DIR)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"partial-{debate.pk}.json").write_text(as_json(debate), encoding="utf-8")
    path = folder / f"partial-{debate.pk}.md"
    path.write_text(as_markdown(debate), encoding="utf-8")
    return path
