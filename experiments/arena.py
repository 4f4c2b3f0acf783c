"""The evidence arena: people answer, blind, the questions of finished evidence debates of the experiments whose
owners opted in (`Experiment.arena`), so the report can set their accuracy beside the LLM judges'.

A voter reads what the debate's judge read (debates/formats/evidence/debate.py: `debate_judge_prompt`): the
question and its two answers in the run's order (A and B), then the two debaters' speeches, round by round, A
before B, each quote marked verified or unverified; not the passage, which the judge never sees either. The
debaters are "Debater A" and "Debater B", and every name of theirs and of their models is removed from every
text shown (debates/redaction.py). The voter picks the answer they believe correct and only then is told the
correct answer and who argued what. Only debates whose question has a known correct answer are served (a vote on
another could never be right or wrong), and only a debate's own run: a panel's replays read the same transcript.
The rules of serving and voting are every arena's (audience/arena.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import QuerySet

from audience.arena import Arena
from batches.arena import identity
from debates import redaction
from debates.event_cards import marked_html
from debates.formats.evidence import LETTERS
from debates.formats.quotes import verify
from debates.models import Debate, Event
from experiments import design
from experiments.models import ArenaVote, Experiment, Participant, Run

# The report's statistics (experiments/stats.py, batches/stats.py: a score of frozen dataclasses, each built at
# import) load at a process's first report, not with every command.
if TYPE_CHECKING:
    from experiments import stats

LABELS = ("Debater A", "Debater B")
RELATED = ("question", "debate", "experiment", "first__persona", "second__persona")


@dataclass(frozen=True)
class Turn:
    label: str  # "Debater A" or "Debater B"
    letter: str  # the answer it argued: "A" or "B"
    round: int
    html: str  # the redacted speech, its quotes marked, as sanitized HTML


@dataclass(frozen=True)
class Seen:
    """An evidence debate as a blind voter reads it, and (shown only after their vote) the answer and who argued."""

    run: Run
    question: str
    answers: tuple[str, str]  # A and B, as the judge was shown them
    turns: tuple[Turn, ...]
    problems: tuple[str, ...]  # why the redaction is incomplete (empty: complete)
    correct: str  # the correct answer's letter
    names: tuple[str, str]  # Debater A's and Debater B's names
    models: tuple[str, str]  # the models they ran on

    @property
    def complete(self) -> bool:
        return not self.problems


# The protocols whose debates a blind voter compares: two debaters, each arguing one of the answers.
PROTOCOLS = tuple(p for p in design.PROTOCOLS if design.debated(p))


def serves(experiment: Experiment) -> bool:
    """Whether the experiment makes debates the arena may serve (its page then offers its owner the opt-in)."""
    return any(p in PROTOCOLS for p in experiment.protocols)


def debates() -> QuerySet[Run]:
    """Every debate in the evidence arena: a finished evidence debate's own run (not a replay), of an experiment
    whose owner opted in, on a question with a known correct answer."""
    return Run.objects.filter(
        experiment__arena=True,
        protocol__in=PROTOCOLS,
        source__isnull=True,
        question__correct__isnull=False,
        debate__status=Debate.Status.COMPLETED,
    )


def correct_letter(run: Run) -> str:
    """The letter the question's correct answer was shown under in this run."""
    assert run.question.correct is not None
    return LETTERS[design.letter_of(run.question.correct, run.swapped)]


def seen(run: Run) -> Seen:
    """What a blind voter reads of the run's debate, redacted, and who argued what."""
    debate = run.debate
    assert debate is not None and run.first is not None and run.second is not None
    options = debate.options
    seats = {s.key: s for s in debate.seats.select_related("persona__provider").filter(key__in=("a", "b"))}
    at_a, at_b = design.seats(run.first, run.second, run.swapped)
    people: dict[str, tuple[Participant, str]] = {"a": (at_a, LABELS[0]), "b": (at_b, LABELS[1])}
    debaters, models = [], {}
    for key, (participant, label) in people.items():
        names, models[key] = identity(participant, [seats[key]] if key in seats else [])
        debaters.append((label, names))
    events = list(
        debate.events.filter(kind=Event.Kind.TURN, visibility=Event.Visibility.PUBLIC, seat__key__in=("a", "b"))
        .order_by("ordinal")
        .values_list("seat__key", "data", "content", "model")
    )
    for key, *_, model in events:
        models[key] = model or models[key]
    passage = options.get("passage", "")
    answers = [str(a) for a in options.get("answers", ["", ""])]
    texts = [
        str(options.get("question", "")),
        *answers,
        *(verify(passage, content).marked for *_, content, _ in events),
    ]
    result = redaction.redact(texts, debaters, sorted({m for m in models.values() if m}))
    question, answer_a, answer_b, *speeches = result.texts
    turns = tuple(
        Turn(
            label=people[key][1],
            letter=LETTERS[("a", "b").index(key)],
            round=int((data or {}).get("round") or 0),
            html=marked_html(speech),
        )
        for (key, data, _, _), speech in zip(events, speeches, strict=True)
    )
    return Seen(
        run=run,
        question=question,
        answers=(answer_a, answer_b),
        turns=turns,
        problems=result.problems,
        correct=correct_letter(run),
        names=(at_a.name, at_b.name),
        models=(models["a"], models["b"]),
    )


class EvidenceArena(Arena[Run]):
    vote_model = ArenaVote
    item = "run"
    related = RELATED
    not_in_arena = "That debate is not in the arena (its experiment may have left it); nothing was counted."
    bad_choice = "Pick answer A or answer B; nothing was counted."
    final = "Your answer is final: you have been shown the correct answer, so it cannot change; nothing was changed."
    opted_in = "Its finished evidence debates are in the arena; the people's answers will show in the report."
    opted_out = "Its debates left the arena; the answers already given stay in the report."
    vote_noun = "answer"

    def items(self) -> QuerySet[Run]:
        return debates()

    def seen(self, item: Run) -> Seen:
        return seen(item)


ARENA = EvidenceArena()


def votes(experiment: Experiment) -> list[stats.HumanVote]:
    """Every arena vote on the experiment's debates, excluded ones included (they are counted as such). One query."""
    from experiments import stats

    rows = ArenaVote.objects.filter(run__experiment=experiment, run__question__correct__isnull=False).values_list(
        "run_id", "voter", "choice", "excluded", "run__swapped", "run__question__correct"
    )
    return [
        stats.HumanVote(
            run=run, voter=voter, right=choice == LETTERS[design.letter_of(correct, swapped)], excluded=excluded
        )
        for run, voter, choice, excluded, swapped, correct in rows
    ]


def human_report(experiment: Experiment, judged: list[stats.Judged]) -> stats.HumanAccuracy:
    """The report's human row and each judge's beside it, from the votes and the judged runs (`selectors.judged`)."""
    from experiments import stats

    judges = (
        experiment.participants.filter(role=Participant.Role.JUDGE).order_by("order").values_list("name", flat=True)
    )
    return stats.human_accuracy(votes(experiment), judged, list(judges))
