# ruff: noqa: E501  (the expected prompts are one per line, as the card fills them in)
"""Protocols the project does not ship, written as cards from their published rules using docs/cards.md alone
(tests/debates/formats/protocol_cards/): Policy, Karl Popper, SPAR, Asian Parliamentary, consultancy, a judge who
questions the debaters between rounds, a multi-round debate with first and final round prompts, Australs (a chair's
lines, a `last` round, every speaker scored), Canadian parliamentary (points of information, a think before the
rebuttal), Congress (four legislators ranked, each questioned in turn by another) and a moot court (a bench of two
judges who question, one who decides). Each is read
prompt for prompt against its card (the pure driver, no database), then saved by `import_formats` and over the
API, run from the `debate` command against the test server, its every request read against the card's templates,
its exports, status line and audience poll checked for the card's labels, and the two-sided ones run in a
tournament with a judge panel."""

from __future__ import annotations

import json
import re
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils.html import escape

from api.tokens import create_token
from audience import votes
from batches.checks import Contestant
from chaoslm.runner import inline
from debates import format_cards, selectors, transcripts
from debates.formats.card import CardError, parse_card
from debates.formats.card.doc import protocol_markdown
from debates.models import Debate, Event, FormatCard
from debates.status import activity
from personas.models import Persona, import_personas
from tests.batches.helpers import debater, judge, questions, run_to_end
from tests.debates.formats.test_card import config_for, reply
from tests.debates.formats.test_card_equivalence import run
from tournaments import results, services
from tournaments.models import Judgment, Match

FOLDER = Path(__file__).resolve().parent / "protocol_cards"
NAMES = sorted(p.stem for p in FOLDER.glob("*.yaml"))
# Consultancy's other answer has no seat (no entrant fills it); Congress ranks four legislators.
TWO_SIDED = [n for n in NAMES if n not in ("one-consultant", "congress")]


def text_of(name: str) -> str:
    return (FOLDER / f"{name}.yaml").read_text()


def card_of(name: str):
    return parse_card(text_of(name))


def defaults(card) -> dict[str, int]:
    return {o.name: o.default for o in card.option_specs}


# --- what each seat is asked, against the card (no database) -------------------------------------------------------

EXPECTED = {
    "policy": [
        ("aff1", "prep", "The resolution is: School uniforms. You are Aff1-name, Affirmative. Prepare privately against the Negative."),
        ("aff2", "prep", "The resolution is: School uniforms. You are Aff2-name, Affirmative. Prepare privately against the Negative."),
        ("neg1", "prep", "The resolution is: School uniforms. You are Neg1-name, Negative. Prepare privately against the Affirmative."),
        ("neg2", "prep", "The resolution is: School uniforms. You are Neg2-name, Negative. Prepare privately against the Affirmative."),
        ("aff1", "first_aff_constructive", "Your notes: <aff1 prep 1>. Read the first affirmative constructive: the plan and its advantages."),
        ("neg2", "cx_1ac_q_1", "Cross-examine Aff1-name on the 1AC: <aff1 first_aff_constructive 5>"),
        ("aff1", "cx_1ac_a_1", "Neg2-name asks: <neg2 cx_1ac_q_1 6>"),
        ("neg2", "cx_1ac_q_2", 'Cross-examine Aff1-name on the 1AC: <aff1 first_aff_constructive 5>\nEarlier you asked: "<neg2 cx_1ac_q_1 6>"\nThey answered: "<aff1 cx_1ac_a_1 7>"\n'),
        ("aff1", "cx_1ac_a_2", "Neg2-name asks: <neg2 cx_1ac_q_2 8>"),
        ("neg1", "first_neg_constructive", "Your notes: <neg1 prep 3>. Answer the 1AC: <aff1 first_aff_constructive 5>"),
        ("aff1", "cx_1nc_q_1", "Cross-examine Neg1-name on the 1NC: <neg1 first_neg_constructive 10>"),
        ("neg1", "cx_1nc_a_1", "Aff1-name asks: <aff1 cx_1nc_q_1 11>"),
        ("aff1", "cx_1nc_q_2", 'Cross-examine Neg1-name on the 1NC: <neg1 first_neg_constructive 10>\nEarlier you asked: "<aff1 cx_1nc_q_1 11>"\nThey answered: "<neg1 cx_1nc_a_1 12>"\n'),
        ("neg1", "cx_1nc_a_2", "Aff1-name asks: <aff1 cx_1nc_q_2 13>"),
        ("aff2", "second_aff_constructive", "Your notes: <aff2 prep 2>. Answer the 1NC: <neg1 first_neg_constructive 10>"),
        ("neg1", "cx_2ac_q_1", "Cross-examine Aff2-name on the 2AC: <aff2 second_aff_constructive 15>"),
        ("aff2", "cx_2ac_a_1", "Neg1-name asks: <neg1 cx_2ac_q_1 16>"),
        ("neg1", "cx_2ac_q_2", 'Cross-examine Aff2-name on the 2AC: <aff2 second_aff_constructive 15>\nEarlier you asked: "<neg1 cx_2ac_q_1 16>"\nThey answered: "<aff2 cx_2ac_a_1 17>"\n'),
        ("aff2", "cx_2ac_a_2", "Neg1-name asks: <neg1 cx_2ac_q_2 18>"),
        ("neg2", "second_neg_constructive", "Your notes: <neg2 prep 4>. Your partner said: <neg1 first_neg_constructive 10>. Answer the 2AC: <aff2 cx_2ac_a_2 19>"),
        ("aff2", "cx_2nc_q_1", "Cross-examine Neg2-name on the 2NC: <neg2 second_neg_constructive 20>"),
        ("neg2", "cx_2nc_a_1", "Aff2-name asks: <aff2 cx_2nc_q_1 21>"),
        ("aff2", "cx_2nc_q_2", 'Cross-examine Neg2-name on the 2NC: <neg2 second_neg_constructive 20>\nEarlier you asked: "<aff2 cx_2nc_q_1 21>"\nThey answered: "<neg2 cx_2nc_a_1 22>"\n'),
        ("neg2", "cx_2nc_a_2", "Aff2-name asks: <aff2 cx_2nc_q_2 23>"),
        ("neg1", "first_neg_rebuttal", "Give the first negative rebuttal."),
        ("aff1", "first_aff_rebuttal", "Give the first affirmative rebuttal: answer the negative block."),
        ("neg2", "second_neg_rebuttal", "Give the last negative rebuttal: Aff1-name just said: <aff1 first_aff_rebuttal 26>"),
        ("aff2", "second_aff_rebuttal", "Give the last affirmative rebuttal, the last speech of the round."),
        ("judge", "confirm_winner", "Which team won? Reply with exactly one of these names and nothing else: 'Affirmative' or 'Negative'."),
        ("judge", "verdict_json", 'Write your ballot as JSON: {"winner": "Affirmative", "scores": {"Affirmative": 28, "Negative": 27}}\nThe "winner" must be \'Affirmative\' or \'Negative\'.'),
        ("judge", "announce", "Give your reason for decision in a short paragraph."),
    ],
    "karl-popper": [
        ("a1", "a1_constructive", "The resolution is: School uniforms. Present the Affirmative case."),
        ("n3", "n3_asks_1", "Question A1-name about: <a1 a1_constructive 1>"),
        ("a1", "a1_answers_1", "N3-name asks: <n3 n3_asks_1 2>"),
        ("n3", "n3_asks_2", 'Question A1-name about: <a1 a1_constructive 1>\nEarlier you asked: "<n3 n3_asks_1 2>"\nThey answered: "<a1 a1_answers_1 3>"\n'),
        ("a1", "a1_answers_2", "N3-name asks: <n3 n3_asks_2 4>"),
        ("n1", "n1_constructive", "The resolution is: School uniforms. The Affirmative argued: <a1 a1_constructive 1>. Present the Negative case."),
        ("a3", "a3_asks_1", "Question N1-name about: <n1 n1_constructive 6>"),
        ("n1", "n1_answers_1", "A3-name asks: <a3 a3_asks_1 7>"),
        ("a3", "a3_asks_2", 'Question N1-name about: <n1 n1_constructive 6>\nEarlier you asked: "<a3 a3_asks_1 7>"\nThey answered: "<n1 n1_answers_1 8>"\n'),
        ("n1", "n1_answers_2", "A3-name asks: <a3 a3_asks_2 9>"),
        ("a2", "a2_rebuttal", "Rebut the Negative case and rebuild the Affirmative's."),
        ("n1", "n1_asks_1", "Question A2-name about: <a2 a2_rebuttal 11>"),
        ("a2", "a2_answers_1", "N1-name asks: <n1 n1_asks_1 12>"),
        ("n1", "n1_asks_2", 'Question A2-name about: <a2 a2_rebuttal 11>\nEarlier you asked: "<n1 n1_asks_1 12>"\nThey answered: "<a2 a2_answers_1 13>"\n'),
        ("a2", "a2_answers_2", "N1-name asks: <n1 n1_asks_2 14>"),
        ("n2", "n2_rebuttal", "Rebut the Affirmative case and rebuild the Negative's."),
        ("a1", "a1_asks_1", "Question N2-name about: <n2 n2_rebuttal 16>"),
        ("n2", "n2_answers_1", "A1-name asks: <a1 a1_asks_1 17>"),
        ("a1", "a1_asks_2", 'Question N2-name about: <n2 n2_rebuttal 16>\nEarlier you asked: "<a1 a1_asks_1 17>"\nThey answered: "<n2 n2_answers_1 18>"\n'),
        ("n2", "n2_answers_2", "A1-name asks: <a1 a1_asks_2 19>"),
        ("a3", "a3_rebuttal", "Sum up the clash for the Affirmative. No new arguments."),
        ("n3", "n3_rebuttal", "Sum up the clash for the Negative, the last speech. No new arguments."),
        ("judge", "confirm_winner", "Which team won? Reply with one of 'Affirmative' or 'Negative'."),
        ("judge", "verdict_json", '{"winner": "Affirmative", "scores": {"Affirmative": 8, "Negative": 7}} The "winner" must be \'Affirmative\' or \'Negative\'.'),
    ],
    "spar": [
        ("pro", "prep", "You have two minutes. The topic: School uniforms. Jot three points for the Pro."),
        ("con", "prep", "You have two minutes. The topic: School uniforms. Jot three points for the Con."),
        ("pro", "pro_constructive", "Your notes: <pro prep 1>. Open for the Pro."),
        ("con", "con_constructive", "Your notes: <con prep 2>. Pro-name said: <pro pro_constructive 3>. Open for the Con."),
        ("pro", "pro_asks_1", "Round 1: ask Con-name one question."),
        ("con", "con_answers_1", "Pro-name asks: <pro pro_asks_1 5>"),
        ("con", "con_asks_1", "Round 1: ask Pro-name one question."),
        ("pro", "pro_answers_1", "Con-name asks: <con con_asks_1 7>"),
        ("pro", "pro_asks_1", "Round 2: ask Con-name one question."),
        ("con", "con_answers_1", "Pro-name asks: <pro pro_asks_1 9>"),
        ("con", "con_asks_1", "Round 2: ask Pro-name one question."),
        ("pro", "pro_answers_1", "Con-name asks: <con con_asks_1 11>"),
        ("con", "con_closing", "Close for the Con."),
        ("pro", "pro_closing", "Close for the Pro; Con-name closed with: <con con_closing 13>"),
        ("judge", "confirm_winner", "Who won? Reply with exactly one of 'Pro-name' or 'Con-name'."),
        ("judge", "verdict_json", 'Write {"winner": "Pro-name", "scores": {"Pro-name": 7, "Con-name": 6}}; the winner must be \'Pro-name\' or \'Con-name\'.'),
    ],
    "asian-parliamentary": [
        *[
            (seat, "case", f"Motion: School uniforms. Prepare your part of the {side}'s case with your team.")
            for seat, side in [("pm", "Government"), ("dpm", "Government"), ("gw", "Government"),
                               ("lo", "Opposition"), ("dlo", "Opposition"), ("ow", "Opposition")]
        ],
        # Partners prepare together: a speaker's {team_case} is the latest note of its team (its whip's).
        ("pm", "constructive", "Speech 1 of 6. You are Pm-name for the Government. Your team's notes: <gw case 3>. Speak."),
        ("lo", "constructive", "Speech 2 of 6. You are Lo-name for the Opposition. Your team's notes: <ow case 6>. Speak."),
        ("dpm", "constructive", "Speech 3 of 6. You are Dpm-name for the Government. Your team's notes: <gw case 3>. Speak."),
        ("dlo", "constructive", "Speech 4 of 6. You are Dlo-name for the Opposition. Your team's notes: <ow case 6>. Speak."),
        ("gw", "constructive", "Speech 5 of 6. You are Gw-name for the Government. Your team's notes: <gw case 3>. Speak."),
        ("ow", "constructive", "Speech 6 of 6. You are Ow-name for the Opposition. Your team's notes: <ow case 6>. Speak."),
        ("lo", "opp_reply", "Reply for the Opposition: a biased summary. The Government Whip said: <gw constructive 11>"),
        ("pm", "gov_reply", "Reply for the Government, the last speech."),
        ("judge", "confirm_winner", "Which team won? One of 'Government' or 'Opposition'."),
        ("judge", "verdict_json", 'JSON: {"winner": "Government", "scores": {"Government": {"matter": 30, "manner": 30, "method": 15}, "Opposition": {"matter": 29, "manner": 29, "method": 14}}}\nThe "winner" must be \'Government\' or \'Opposition\'.'),
    ],
    "one-consultant": [
        ("consultant", "case", "Question: School uniforms. Argue that the answer is: Uniforms help."),
        ("judge", "judge_q_1", "The consultant argued: <consultant case 1> Ask one question."),
        ("consultant", "consultant_a_1", "The judge asks: <judge judge_q_1 2>"),
        ("judge", "judge_q_2", 'The consultant argued: <consultant case 1>\nEarlier you asked: "<judge judge_q_1 2>"\nThey answered: "<consultant consultant_a_1 3>"\n Ask one question.'),
        ("consultant", "consultant_a_2", "The judge asks: <judge judge_q_2 4>"),
        ("judge", "verdict_json", 'Choose: {"winner": "Consultant-name", "scores": {"Consultant-name": 6, "Other answer": 4}} from \'Consultant-name\' or \'Other answer\'.'),
    ],
    "judge-questions": [
        ("alice", "argue_alice", "The question is School uniforms. Argue for Answer A."),
        ("bob", "argue_bob", "The question is School uniforms. Argue for Answer B; Alice-name said: <alice argue_alice 1>"),
        ("judge", "ask_alice_1", "Round 1. Ask Alice-name one question."),
        ("alice", "alice_replies_1", "The judge asks: <judge ask_alice_1 3>"),
        ("judge", "ask_bob_1", "Round 1. Ask Bob-name one question."),
        ("bob", "bob_replies_1", "The judge asks: <judge ask_bob_1 5>"),
        ("alice", "argue_alice", "Round 2 of 2 on School uniforms. Answer Bob-name: <bob argue_bob 2>"),
        ("bob", "argue_bob", "Round 2 of 2 on School uniforms. Answer Alice-name: <alice argue_alice 7>"),
        ("judge", "ask_alice_1", "Round 2. Ask Alice-name one question."),
        ("alice", "alice_replies_1", "The judge asks: <judge ask_alice_1 9>"),
        ("judge", "ask_bob_1", "Round 2. Ask Bob-name one question."),
        ("bob", "bob_replies_1", "The judge asks: <judge ask_bob_1 11>"),
        ("judge", "confirm_winner", "Who is right? One of 'Alice-name' or 'Bob-name'."),
        ("judge", "verdict_json", '{"winner": "Alice-name", "scores": {"Alice-name": 6, "Bob-name": 5}} must be \'Alice-name\' or \'Bob-name\''),
    ],
    "multi-round": [
        ("a", "opening_a", "Open for Debater A on School uniforms."),
        ("judge", "score", 'Score A-name (turn 1): {"score": 7, "reasoning": "..."}'),
        ("b", "opening_b", "Open for Debater B on School uniforms; A-name said: <a opening_a 1>"),
        ("judge", "score", 'Score B-name (turn 2): {"score": 7, "reasoning": "..."}'),
        ("a", "round_a", "Round 2 of 3. Rebut B-name's last point: <b opening_b 3>"),
        ("judge", "score", 'Score A-name (turn 3): {"score": 7, "reasoning": "..."}'),
        ("b", "round_b", "Round 2 of 3. Rebut A-name: <a round_a 5>"),
        ("judge", "score", 'Score B-name (turn 4): {"score": 7, "reasoning": "..."}'),
        ("a", "closing_a", "Close for Debater A; B-name said: <b round_b 7>"),
        ("judge", "score", 'Score A-name (turn 5): {"score": 7, "reasoning": "..."}'),
        ("b", "closing_b", "Close for Debater B; A-name said: <a closing_a 9>"),
        ("judge", "score", 'Score B-name (turn 6): {"score": 7, "reasoning": "..."}'),
        ("judge", "confirm_winner", "Who won? 'A-name' or 'B-name'"),
        ("judge", "verdict_json", '{"winner": "A-name", "scores": {"A-name": 6, "B-name": 5}} must be \'A-name\' or \'B-name\''),
    ],
    "australs": [
        ('aff1', 'aff_first', 'You open for the Affirmative on: School uniforms. Define the motion, outline the team split and give your arguments.'),
        ('judge', 'score', 'Mark Aff1-name\'s speech (1) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('neg1', 'neg_substantive', 'You are speaker 1 of 3 for the Negative. Answer Aff1-name: <aff1 aff_first 3>'),
        ('judge', 'score', 'Mark Neg1-name\'s speech (2) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('aff2', 'aff_substantive', 'You are speaker 2 of 3 for the Affirmative on: School uniforms. Your team argues that Uniforms help. Give your substantive speech.'),
        ('judge', 'score', 'Mark Aff2-name\'s speech (3) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('neg2', 'neg_substantive', 'You are speaker 2 of 3 for the Negative. Answer Aff2-name: <aff2 aff_substantive 9>'),
        ('judge', 'score', 'Mark Neg2-name\'s speech (4) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('aff3', 'aff_third', "You are the third Affirmative. No new arguments: rebut the Negative's case: <neg2 neg_substantive 12>"),
        ('judge', 'score', 'Mark Aff3-name\'s speech (5) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('neg3', 'neg_third', 'You are the third Negative, the last substantive speech. No new arguments: rebut Aff3-name: <aff3 aff_third 15>'),
        ('judge', 'score', 'Mark Neg3-name\'s speech (6) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('neg1', 'neg_reply', "Give the Negative's reply: a biased adjudication of the debate's clashes. No new arguments."),
        ('judge', 'score', 'Mark Neg1-name\'s speech (7) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('aff1', 'aff_reply', "Give the Affirmative's reply, the last speech: why the Affirmative won each clash. Neg1-name replied: <neg1 neg_reply 21>"),
        ('judge', 'score', 'Mark Aff1-name\'s speech (8) on matter (of 40), manner (of 40) and method (of 20), and overall out of 10: {"score": 7, "marks": {"matter": 30, "manner": 29, "method": 14}, "reasoning": "..."}'),
        ('judge', 'confirm_winner', "Which team won the debate? Reply with exactly one of 'Affirmative' or 'Negative'."),
        ('judge', 'verdict_json', 'Write the ballot: {"winner": "Affirmative", "scores": {"Affirmative": {"matter": 30, "manner": 29, "method": 14}, "Negative": {"matter": 29, "manner": 29, "method": 13}}}\nThe "winner" must be \'Affirmative\' or \'Negative\'.'),
        ('judge', 'announce', 'Give your adjudication to the room in a short paragraph.'),
    ],
    "canadian": [
        ('pm', 'prep', 'Resolved: School uniforms. You are Pm-name for the Government. Prepare privately.'),
        ('mc', 'prep', 'Resolved: School uniforms. You are Mc-name for the Government. Prepare privately.'),
        ('mo', 'prep', 'Resolved: School uniforms. You are Mo-name for the Opposition. Prepare privately.'),
        ('lo', 'prep', 'Resolved: School uniforms. You are Lo-name for the Opposition. Prepare privately.'),
        ('pm', 'pm_constructive', "Your notes: <pm prep 1>. Define the resolution and make the Government's case."),
        ('mo', 'poi_to_pm_1', 'Rise on a point of information to Pm-name.'),
        ('pm', 'pm_takes_poi_1', 'Mo-name rises: <mo poi_to_pm_1 7> Answer in a sentence.'),
        ('mo', 'mo_constructive', 'Your notes: <mo prep 3>. Clash with the Prime Minister: <pm pm_constructive 6>'),
        ('mc', 'poi_to_mo_1', 'Rise on a point of information to Mo-name.'),
        ('mo', 'mo_takes_poi_1', 'Mc-name rises: <mc poi_to_mo_1 10> Answer in a sentence.'),
        ('mc', 'mc_constructive', "Your notes: <mc prep 2>. Your partner opened with: <pm pm_constructive 6>. Rebuild and extend the Government's case."),
        ('lo', 'poi_to_mc_1', 'Rise on a point of information to Mc-name.'),
        ('mc', 'mc_takes_poi_1', 'Lo-name rises: <lo poi_to_mc_1 13> Answer in a sentence.'),
        ('lo', 'lo_speech', 'Your notes: <lo prep 4>. Your partner said: <mo mo_constructive 9>. Give the Opposition block: rebut the Government and summarise why the Opposition wins.'),
        ('pm', 'think', 'Privately list what the Leader of the Opposition left standing: <lo lo_speech 15>'),
        ('pm', 'pm_rebuttal', "Give the Prime Minister's rebuttal, the last speech. No new arguments."),
        ('judge', 'deliberate', 'Weigh the round privately.'),
        ('judge', 'confirm_winner', "Which side won? One of 'Government' or 'Opposition'."),
        ('judge', 'verdict_json', '{"winner": "Government", "scores": {"Government": 26, "Opposition": 25}} The "winner" must be \'Government\' or \'Opposition\'.'),
    ],
    "congress": [
        ('a', 'authorship', 'Give the authorship speech for the bill: School uniforms.'),
        ('d', 'question_1', 'Question A-name on their speech.'),
        ('a', 'answer_1', 'D-name asks you: <d question_1 4>'),
        ('b', 'legislation_speech', 'Speech 2 of 4 on the bill. Speak for it if your number is odd, against it if even, and answer the chamber so far.'),
        ('a', 'question_1', 'Question B-name on their speech.'),
        ('b', 'answer_1', 'A-name asks you: <a question_1 8>'),
        ('c', 'legislation_speech', 'Speech 3 of 4 on the bill. Speak for it if your number is odd, against it if even, and answer the chamber so far.'),
        ('b', 'question_1', 'Question C-name on their speech.'),
        ('c', 'answer_1', 'B-name asks you: <b question_1 12>'),
        ('d', 'legislation_speech', 'Speech 4 of 4 on the bill. Speak for it if your number is odd, against it if even, and answer the chamber so far.'),
        ('c', 'question_1', 'Question D-name on their speech.'),
        ('d', 'answer_1', 'C-name asks you: <c question_1 16>'),
        ('parliamentarian', 'deliberate', "Weigh each legislator's speech and questioning privately."),
        ('parliamentarian', 'verdict_json', '{"ranking": ["A-name", "B-name", "C-name", "D-name"], "scores": {"A-name": 6, "B-name": 5, "C-name": 4, "D-name": 3}} Rank them all, best first: \'A-name\', \'B-name\', \'C-name\' or \'D-name\'.'),
        ('parliamentarian', 'announce', 'Announce the ranking.'),
    ],
    "moot-court": [
        ('app1', 'app1_submission', "May it please the Court. The question before the Court: School uniforms. Present the Applicant's first submissions."),
        ('president', 'evaluate', "Consider privately App1-name's submissions: <app1 app1_submission 1>"),
        ('wing', 'bench_asks_app1_1', 'Put one question to App1-name on: <app1 app1_submission 1>'),
        ('president', 'oralist_score', 'Score App1-name\'s oral argument: {"score": 7, "reasoning": "..."}'),
        ('app1', 'app1_answers_1', 'The Court asks: <wing bench_asks_app1_1 4>'),
        ('app2', 'app2_submission', "Your co-agent submitted: <app1 app1_submission 1>. Present the Applicant's remaining submissions."),
        ('president', 'evaluate', "Consider privately App2-name's submissions: <app2 app2_submission 6>"),
        ('president', 'oralist_score', 'Score App2-name\'s oral argument: {"score": 7, "reasoning": "..."}'),
        ('president', 'president_asks_app2_1', 'Put one question to App2-name on: <app2 app2_submission 6>'),
        ('app2', 'app2_answers_1', 'The President asks: <president president_asks_app2_1 9>'),
        ('res1', 'res1_submission', "The Applicant argued: <app1 app1_submission 1> and <app2 app2_submission 6>. Present the Respondent's first submissions."),
        ('president', 'evaluate', "Consider privately Res1-name's submissions: <res1 res1_submission 11>"),
        ('wing', 'bench_asks_res1_1', 'Put one question to Res1-name on: <res1 res1_submission 11>'),
        ('president', 'oralist_score', 'Score Res1-name\'s oral argument: {"score": 7, "reasoning": "..."}'),
        ('res1', 'res1_answers_1', 'The Court asks: <wing bench_asks_res1_1 14>'),
        ('res2', 'res2_submission', "Your co-agent submitted: <res1 res1_submission 11>. Present the Respondent's remaining submissions."),
        ('president', 'evaluate', "Consider privately Res2-name's submissions: <res2 res2_submission 16>"),
        ('president', 'oralist_score', 'Score Res2-name\'s oral argument: {"score": 7, "reasoning": "..."}'),
        ('president', 'president_asks_res2_1', 'Put one question to Res2-name on: <res2 res2_submission 16>'),
        ('res2', 'res2_answers_1', 'The President asks: <president president_asks_res2_1 19>'),
        ('app1', 'rebuttal', 'Rebuttal for the Applicant: answer the Respondent only.'),
        ('res1', 'surrebuttal', 'Surrebuttal for the Respondent: answer only the rebuttal.'),
        ('president', 'confirm_winner', "Which side argued better? One of 'Applicant' or 'Respondent'."),
        ('president', 'verdict_json', '{"winner": "Applicant", "scores": {"Applicant": 7, "Respondent": 6}} must be \'Applicant\' or \'Respondent\''),
        ('president', 'announce', "The President gives the Court's ruling on the oral round."),
    ],
}  # fmt: skip


def test_every_protocol_card_has_its_expected_prompts():
    assert sorted(EXPECTED) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_seat_is_asked_the_cards_templates_filled_in(name):
    card = card_of(name)
    config = config_for(card, premise="Uniforms help")
    steps, _, records, plan = run(card, config, reply=reply)
    asked = [(s.seat, s.step, s.prompt) for s in steps if s.calls_llm]
    assert asked == EXPECTED[name]
    assert plan.finished
    assert len(asked) == card.calls(defaults(card))
    # Its statements are its debaters' public speeches (a judge's questions are not a side's statements).
    debaters = {s.key for s in card.seat_specs if s.role == "debater"}
    assert sum(1 for s in steps if s.kind == "TURN" and s.seat in debaters) == card.statements(defaults(card))
    # Its outcome names one of its sides, and the premise is upheld by the FOR side's win.
    outcome = card.outcome(config, records)
    assert outcome["winner"] in outcome["scores"]
    assert outcome["premise_upheld"] is (None if card.ranks_teams() else True)  # a ranking upholds nothing


@pytest.mark.parametrize("name", NAMES)
def test_each_card_runs_at_its_options_bounds_and_when_ended_early(name):
    card = card_of(name)
    for bound in ("minimum", "maximum"):
        options = {o.name: getattr(o, bound) for o in card.option_specs}
        config = config_for(card, options=options)
        steps, _, _, plan = run(card, config, reply=reply)
        assert plan.finished
        assert sum(1 for s in steps if s.calls_llm) == card.calls(options)
    config = config_for(card)
    _, _, records, _ = run(card, config, reply=reply, stop=lambda rs: sum(r.kind == "TURN" for r in rs) >= 2)
    _, _, records, plan = run(card, config_for(card, is_ending=True), records, reply=reply)
    assert plan.finished and card.outcome(config, records)["winner"]


def test_a_consultancy_with_no_questions_goes_from_the_argument_to_the_verdict():
    card = card_of("one-consultant")
    steps, _, _, _ = run(card, config_for(card, options={"questions": 0}, premise="Yes"), reply=reply)
    assert [(s.seat, s.step) for s in steps if s.calls_llm] == [("consultant", "case"), ("judge", "verdict_json")]


@pytest.mark.parametrize("name", NAMES)
def test_the_status_line_and_the_export_headings_use_the_cards_step_labels(name):
    card = card_of(name)
    labels = label_of_steps(yaml.safe_load(text_of(name)))
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    for step in (s for s in steps if s.kind == "TURN"):
        label = labels[re.sub(r"_\d+$", "", step.step)]
        number = step.step.rsplit("_", 1)[1] if step.step not in labels else ""
        shown = f"{label} {number}".strip()
        assert card.step_title(step.step) == shown[:1].upper() + shown[1:]
        doing = activity("Ann", step, card, defaults(card))
        assert doing.startswith(f"Ann is giving the {shown}"), doing


# --- the card as text: which template each step takes ---------------------------------------------------------------


def label_of_steps(data: dict) -> dict[str, str]:
    """Each speech's and cross-examination's step name and its label, as the card writes them."""
    labels: dict[str, str] = {}

    def walk(stages: list[dict]) -> None:
        for stage in stages:
            if "repeat" in stage:
                walk(stage["stages"])
            elif "speech" in stage:
                labels.setdefault(stage["speech"], stage.get("label", stage["speech"].replace("_", " ")))
                for variant in (stage.get("first"), stage.get("final"), stage.get("last")):
                    if variant and "step" in variant:
                        labels[variant["step"]] = variant.get("label", variant["step"].replace("_", " "))
            elif "cross" in stage:
                for part in ("question", "answer"):
                    step = stage[part]["step"]
                    labels[step] = stage[part].get("label", step.replace("_", " "))

    walk(data["stages"])
    return labels


def templates_of(data: dict) -> dict[str, list[str]]:
    """Every step's prompt templates in the card (a speech's, its first and final round's, a question's and an
    answer's, the judge's)."""
    found: dict[str, list[str]] = {}

    def walk(stages: list[dict]) -> None:
        for stage in stages:
            if "repeat" in stage:
                walk(stage["stages"])
                continue
            kind = next(iter(stage))
            if kind == "cross":
                for part in ("question", "answer"):
                    found.setdefault(stage[part]["step"], []).append(stage[part]["prompt"])
                continue
            if kind == "system":
                continue
            found.setdefault(stage[kind], []).append(stage.get("prompt") or stage["system"])
            think = stage.get("think")
            if kind == "speech" and think:
                found.setdefault(think.get("step", "think") if isinstance(think, dict) else "think", []).append(
                    think["prompt"] if isinstance(think, dict) else think
                )
            for variant in (stage.get("first"), stage.get("final"), stage.get("last")):
                if variant:
                    found.setdefault(variant.get("step", stage[kind]), []).append(
                        variant.get("prompt") or stage.get("prompt") or stage["system"]
                    )

    walk(data["stages"])
    judging = data.get("judge", {})
    verdict = judging.get("verdict", {})
    for step, key in (
        ("deliberate", "deliberate"),
        ("confirm_winner", "confirm"),
        ("verdict_json", "decide"),
        ("announce", "announce"),
    ):
        if key in verdict:
            found[step] = [verdict[key]]
    if "score" in judging:
        found[judging["score"].get("step", "score")] = [judging["score"]["prompt"]]
        if "evaluate" in judging["score"]:
            found["evaluate"] = [judging["score"]["evaluate"]]
    return found


def template_pattern(template: str, known: dict[str, str]) -> re.Pattern[str]:
    """The template as a pattern: its literal text exactly, a known placeholder as its value, any other as text."""
    parts = re.split(r"(\{\{|\}\}|\{if [a-z0-9_]+\}|\{end\}|\{[a-z0-9_]+\})", template)
    pattern = ""
    for part in parts:
        if part.startswith("{if ") or part == "{end}":
            continue  # a section's text is kept: the placeholders it tests are all filled in here
        if part in ("{{", "}}"):
            pattern += re.escape(part[0])
        elif part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            pattern += re.escape(known[name]) if name in known else "(?s:.*?)"
        else:
            pattern += re.escape(part)
    return re.compile(pattern, re.S)


# --- saved, run from the command line, exported, polled ----------------------------------------------------------

TOPIC = "Should schools require uniforms?"
PREMISE = "Schools should require uniforms"


@pytest.mark.django_db(transaction=True)
def test_import_formats_saves_every_protocol_card():
    out = StringIO()
    call_command("import_formats", str(FOLDER), stdout=out)
    assert f"Imported {len(NAMES)} card(s): {', '.join(NAMES)}" in out.getvalue()
    assert {c.name: c.yaml for c in FormatCard.objects.all()} == {n: text_of(n) for n in NAMES}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", NAMES)
def test_the_api_saves_each_card_and_starts_a_debate_of_it(name, llm_server):
    user = get_user_model().objects.create_user("olive")
    _, secret = create_token(user, "cards", read_only=False)
    api = Client(headers={"Authorization": f"Bearer {secret}"})
    made = api.post("/api/v1/formats", {"yaml": text_of(name)}, content_type="application/json")
    assert made.status_code == 201, made.content
    card = card_of(name)
    body = made.json()
    assert (body["name"], body["yaml"], body["owner"]) == (name, text_of(name), "olive")
    assert [s["key"] for s in body["seats"]] == [s.key for s in card.seat_specs]
    assert name in [f["name"] for f in api.get("/api/v1/formats").json()]

    for seat in card.seat_specs:
        Persona.objects.create(name=f"Speaker {seat.key}", role=seat.role, personality=f"Speaker {seat.key} speaks.")
    found = {p["name"]: p["id"] for p in api.get("/api/v1/personas").json()}
    seats = {s.key: found[f"Speaker {s.key}"] for s in card.seat_specs}
    started = api.post(
        "/api/v1/debates", {"format": name, "topic": TOPIC, "seats": seats}, content_type="application/json"
    )
    assert started.status_code == 201, started.content
    inline.wait_idle(120)  # a 3-against-3 card makes many calls: a loaded machine needs more than 30 s
    debate = Debate.objects.get(pk=started.json()["id"])
    assert (debate.format, debate.card_source, debate.status) == (name, text_of(name), Debate.Status.COMPLETED)
    assert len(llm_server.requests) == card.calls(defaults(card))


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", NAMES)
def test_each_card_runs_from_the_command_line_asking_what_its_card_says(name, llm_server):
    call_command("import_formats", str(FOLDER), stdout=StringIO())
    fmt = format_cards.card_format_of(FormatCard.objects.get(name=name))
    import_personas(
        [
            (f"{s.key}.yaml", f"name: Speaker {s.key}\nrole: {s.role}\npersonality: Speaker {s.key} speaks.\n")
            for s in fmt.seat_specs
        ]
    )
    seats = [arg for s in fmt.seat_specs for arg in ("--seat", f"{s.key}=Speaker {s.key}")]
    out = StringIO()
    call_command("debate", name, "--topic", TOPIC, "--premise", PREMISE, "--visibility", "unlisted", *seats, stdout=out)
    debate = Debate.objects.get()
    assert debate.status == Debate.Status.COMPLETED, debate.error_text
    assert (debate.format, debate.card_source) == (name, text_of(name))

    # Every request the server received is one of the debate's calls: the seat's persona as its system message,
    # the step's prompt last (after the debate so far, for a step that sees it all); and each prompt is its step's
    # template in the card with the topic, the premise and the seats' names filled in.
    calls = list(debate.events.exclude(kind__in=["HEADER", "SYSTEM"]).select_related("seat").order_by("ordinal"))
    assert len(calls) == fmt.calls(defaults(fmt)) == len(llm_server.requests)
    unclaimed = list(llm_server.requests)
    templates = templates_of(yaml.safe_load(text_of(name)))
    known = {"topic": TOPIC, "premise": PREMISE} | {s.key: f"Speaker {s.key}" for s in fmt.seat_specs}
    for event in calls:
        persona = f"Speaker {event.seat.key} speaks."
        request = next(r for r in unclaimed if persona in r.system and r.last_user.endswith(event.prompt))
        unclaimed.remove(request)
        own = templates[re.sub(r"_\d+$", "", event.step) if event.step not in templates else event.step]
        assert any(template_pattern(t, known).fullmatch(event.prompt) for t in own), (event.step, event.prompt)
    assert not unclaimed

    # The exports and the terminal name each public statement by the card's label for its step.
    markdown = transcripts.as_markdown(debate)
    exported = json.loads(transcripts.as_json(debate))
    turns = [e for e in calls if e.kind == Event.Kind.TURN]
    for event in turns:
        heading = f"### Speaker {event.seat.key} — {fmt.step_title(event.step)}"
        assert heading in markdown, heading
    assert [(e["step"], e["prompt"]) for e in exported["events"] if e["kind"] == "TURN"] == [
        (e.step, e.prompt) for e in turns
    ]
    # A judge that marks each speaker on a rubric (Australs) gives every criterion within its maximum, and the
    # export shows the marks by the score.
    rubric = {c.key: c.maximum for c in fmt.judge_spec.score_rubric} if fmt.judge_spec else {}
    for score in debate.events.filter(kind="SCORE").select_related("seat"):
        if not rubric:
            assert "marks" not in score.data
            continue
        marks = score.data["marks"]
        assert set(marks) == set(rubric) and all(0 <= marks[k] <= rubric[k] for k in rubric), marks
        shown = ", ".join(f"{k} {v}" for k, v in marks.items())
        assert f"/10** ({shown}) — {score.data['reasoning']}" in markdown
    staff = Client()
    staff.force_login(get_user_model().objects.create_user("stella", is_staff=True, is_superuser=True))
    page = staff.get(reverse("debate_detail", args=[debate.pk]))
    assert page.status_code == 200
    for event in turns:
        assert f'<span class="muted">· {escape(fmt.step_label(event.step))}</span>' in page.content.decode(), event.step
    for score in debate.events.filter(kind="SCORE"):
        if rubric:  # the page shows a speaker's marks by the score, as the export does
            shown = ", ".join(f"{k} {v}" for k, v in score.data["marks"].items())
            assert f'</strong> <span class="muted">({shown})</span>' in page.content.decode()
    printed = out.getvalue()
    assert all(f"· {fmt.step_label(e.step)}" in printed for e in turns)

    # The audience poll (on by default, shown as the debate is unlisted) offers the two sides, each by its first
    # speaker or, for a team, its label; the judge's choice is the side it named.
    poll = votes.poll_of(debate)
    if not fmt.poll:
        assert name == "one-consultant" and poll is None  # one side has no speaker to vote for
        return
    if fmt.poll == "people":  # a people's choice among the debaters (Congress's legislators), by name
        assert poll.peoples and poll.judge_choice is None
        debaters = [s.key for s in fmt.seat_specs if s.role == "debater"]
        assert list(poll.options) == [(key, f"Speaker {key}") for key in debaters]
        return
    assert fmt.poll == "sides"
    teams = {side.seats[0]: side.label for side in fmt.sides if len(side.seats) > 1}
    assert [(key, label) for key, label in poll.options] == [
        (
            side.seats[0],
            f"{side.label} (Speaker {side.seats[0]} and team)"
            if side.seats[0] in teams
            else f"Speaker {side.seats[0]} ({side.key})",
        )
        for side in fmt.sides
    ] + [("undecided", "Undecided")]
    winner = next(s for s in fmt.sides if debate.winner in (s.label, f"Speaker {s.seats[0]}"))
    assert poll.judge_choice == winner.seats[0]


# --- tournaments -------------------------------------------------------------------------------------------------


@pytest.fixture
def runner_idle():
    yield
    inline.wait_idle(120)  # a 3-against-3 card makes many calls: a loaded machine needs more than 30 s


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("name", TWO_SIDED)
def test_each_two_sided_card_runs_in_a_tournament_with_a_judge_panel(name, llm_server, runner_idle):
    format_cards.save_card(text_of(name), owner=None)
    fmt = card_of(name)
    tournament = services.create_tournament(
        name="Protocol cup",
        debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
        judges=[Contestant.of(judge(n)) for n in ("Judge Una", "Judge Vic")],
        questions=questions(1),
        options={},
        sides="once",
        formats=[name],
        owner=None,
    )
    finished = run_to_end(tournament)
    assert finished.status == "completed"
    debate = Match.objects.select_related("debate").get().debate
    assert (debate.format, debate.status) == (name, "completed"), debate.error_text
    inside, replay = Judgment.objects.select_related("debate").order_by("judge__order")
    assert inside.debate_id == debate.pk
    assert replay.debate.format == "sides_judge" and replay.debate.options["source_format"] == name
    spoken = Event.objects.filter(debate=debate, kind="TURN", seat__side__gt="").count()
    assert replay.debate.events.filter(step="evaluate").count() == spoken
    assert [(v.judge, v.format) for v in results.verdicts(finished)] == [("Judge Una", name), ("Judge Vic", name)]
    # Each verdict counts for the side its judge named: the card's judge names a team by its label, the replay
    # by its speakers together, a one-seat side by its speaker; the ratings read them all as FOR or AGAINST.
    seat_names = dict(debate.seats.values_list("key", "name"))
    named = {s.label: s.stance for s in fmt.sides} | {seat_names[s.seats[0]]: s.stance for s in fmt.sides}
    replayed = {d["name"]: d["side"] for d in replay.debate.options["debaters"].values()}
    assert [v.winner for v in results.verdicts(finished)] == [named[debate.winner], replayed[replay.debate.winner]]
    # Every seat of a side is its entrant's.
    entrants = {s.key: s.name for s in debate.seats.all()}
    for side, entrant in zip(fmt.sides, ("Alice", "Bob"), strict=True):
        assert all(entrants[key].startswith(entrant) for key in side.seats)
    assert Persona.objects.filter(name="Judge Una").exists()


@pytest.mark.django_db(transaction=True)
def test_a_tournament_refuses_a_card_with_a_side_nobody_argues():
    format_cards.save_card(text_of("one-consultant"), owner=None)
    with pytest.raises(services.TournamentError) as refused:
        services.create_tournament(
            name="Consultant cup",
            debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
            judges=[Contestant.of(judge("Judge Una"))],
            questions=questions(1),
            options={},
            sides="once",
            formats=["one-consultant"],
            owner=None,
        )
    assert str(refused.value) == (
        "A one-consultant debate has a side no seat argues (Other answer), so an entrant on it would never speak."
    )


# --- what the language refuses, with line and field ---------------------------------------------------------------


def test_misreading_the_language_is_refused_with_the_line_and_field():
    text = text_of("multi-round").replace(
        '{previous}"}\n      - speech: round_b', '{opponent_round_b}"}\n      - speech: round_b'
    )
    assert text != text_of("multi-round")
    with pytest.raises(CardError) as refused:
        parse_card(text)
    (problem,) = refused.value.problems
    assert problem.field == "stages[1].stages[1].final.prompt"
    assert text.splitlines()[problem.line - 1].strip().startswith("final:")
    assert problem.message.startswith("{opponent_round_b} reads a step not yet given")


def test_the_shipped_policy_card_runs_the_nsda_order_of_speeches():
    card = parse_card((Path(__file__).resolve().parents[3] / "cards" / "policy.yaml").read_text())
    config = config_for(card, options={"questions": 1})
    steps, _, _, plan = run(card, config, reply=reply)
    spoken = [(s.seat, card.step_label(s.step)) for s in steps if s.kind == "TURN"]
    assert spoken == [
        ("aff1", "first affirmative constructive (1AC)"),
        ("neg2", "1AC cross-examination question 1"),
        ("aff1", "1AC cross-examination answer 1"),
        ("neg1", "first negative constructive (1NC)"),
        ("aff1", "1NC cross-examination question 1"),
        ("neg1", "1NC cross-examination answer 1"),
        ("aff2", "second affirmative constructive (2AC)"),
        ("neg1", "2AC cross-examination question 1"),
        ("aff2", "2AC cross-examination answer 1"),
        ("neg2", "second negative constructive (2NC)"),
        ("aff2", "2NC cross-examination question 1"),
        ("neg2", "2NC cross-examination answer 1"),
        ("neg1", "first negative rebuttal (1NR)"),
        ("aff1", "first affirmative rebuttal (1AR)"),
        ("neg2", "second negative rebuttal (2NR)"),
        ("aff2", "second affirmative rebuttal (2AR)"),
    ]
    by_step = {s.step: s for s in steps}
    # The 2AC reads its partner's 1AC and the 1NC it answers, as quoted; its own notes, never another's.
    assert by_step["second_affirmative_constructive"].prompt == (
        "Your notes:\n<aff2 preparation 2>\n\nYour partner's constructive was:\n\n"
        '"<aff1 first_affirmative_constructive 5>"\n\nThe first negative constructive was:\n\n'
        '"<neg1 first_negative_constructive 8>"\n\n'
        "Deliver the second affirmative constructive: answer every Negative argument and extend the case."
    )
    assert by_step["cx_2ac_answer_1"].prompt == (
        'Cross-examination: Neg1-name asks you:\n\n"<neg1 cx_2ac_question_1 12>"\n\n'
        "Answer directly and briefly. Give only the answer."
    )
    assert plan.finished and card.calls({"questions": 1}) == 4 + 16 + 4


# --- what the four newer cards needed of the language (Australs, Canadian parliamentary, Congress, moot court) -----


def test_a_cross_examination_in_a_repeat_takes_its_askers_and_answerers_in_turn():
    """Congress: each legislator's speech is questioned by the one who spoke before (the first by the last); the
    question names its answerer and the answer its asker, as {answerer} and {asker}."""
    card = card_of("congress")
    steps, _, _, _ = run(card, config_for(card, options={"questions": 2}), reply=reply)
    asked = [(s.seat, s.step, s.prompt) for s in steps if s.step.startswith(("question", "answer"))]
    assert asked[:4] == [
        ("d", "question_1", "Question A-name on their speech."),
        ("a", "answer_1", "D-name asks you: <d question_1 4>"),
        ("d", "question_2", 'Question A-name on their speech.\nEarlier you asked: "<d question_1 4>"\nThey answered: "<a answer_1 5>"\n'),
        ("a", "answer_2", "D-name asks you: <d question_2 6>"),
    ]  # fmt: skip
    assert [(s.seat, s.step) for s in steps if s.step.startswith(("question", "answer"))][4:] == [
        ("a", "question_1"), ("b", "answer_1"), ("a", "question_2"), ("b", "answer_2"),
        ("b", "question_1"), ("c", "answer_1"), ("b", "question_2"), ("c", "answer_2"),
        ("c", "question_1"), ("d", "answer_1"), ("c", "question_2"), ("d", "answer_2"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        # A list outside a repeat has no rounds to take turns with.
        (
            (
                "  - repeat: 4\n    stages:\n",
                "  - repeat: 4\n    stages:\n      - cross: early\n        asker: [a, b]\n        answerer: c\n        question: {step: early_q, prompt: Ask.}\n        answer: {step: early_a, prompt: Answer.}\n",
            ),
            "stages[2].stages[1].asker",
            None,
        ),
        # Round 2 would pair Baker with Baker.
        (
            ("asker: [d, a, b, c]", "asker: [d, b]"),
            "stages[2].stages[2].answerer",
            "A seat cannot answer its own questions.",
        ),
        # {asker} names the examination's other end: a speech has none.
        (
            ('prompt: "Give the authorship speech for the bill: {topic}."', 'prompt: "Answer {asker}."'),
            "stages[2].stages[1].first.prompt",
            "Unknown placeholder {asker}.",
        ),
    ],
)
def test_the_turns_of_a_cross_examination_are_checked(change, field, message):
    text = text_of("congress").replace(*change)
    assert text != text_of("congress")
    if field == "stages[2].stages[1].asker":  # the cross moved outside the repeat
        text = text_of("congress").replace(
            "  - repeat: 4\n",
            "  - cross: early\n    asker: [a, b]\n    answerer: c\n    question: {step: early_q, prompt: Ask.}\n"
            "    answer: {step: early_a, prompt: Answer.}\n  - repeat: 4\n",
        )
        field, message = "stages[2].asker", "Several seats take turns only inside a repeat; outside one, give one seat."
    with pytest.raises(CardError) as refused:
        parse_card(text)
    found = [(p.field, p.message) for p in refused.value.problems]
    assert any(f == field and m.startswith(message) for f, m in found), found


def test_last_is_the_repeats_last_round_and_final_each_seats_last_speech():
    """Australs' six speakers take turns in a repeat of three: `last` gives the third speakers their own prompt;
    `final` would have been every seat's only speech, hence every round after the first."""
    card = card_of("australs")
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    assert [(s.seat, s.step) for s in steps if s.kind == "TURN"][:6] == [
        ("aff1", "aff_first"), ("neg1", "neg_substantive"), ("aff2", "aff_substantive"),
        ("neg2", "neg_substantive"), ("aff3", "aff_third"), ("neg3", "neg_third"),
    ]  # fmt: skip
    as_final = text_of("australs").replace("        last: {step: aff_third,", "        final: {step: aff_third,")
    steps, _, _, _ = run(parse_card(as_final), config_for(card), reply=reply)
    assert [(s.seat, s.step) for s in steps if s.kind == "TURN" and s.seat.startswith("aff")][:3] == [
        ("aff1", "aff_first"), ("aff2", "aff_third"), ("aff3", "aff_third"),
    ]  # fmt: skip
    with pytest.raises(CardError) as refused:
        parse_card(text_of("australs").replace("first: {step: aff_first, ", "first: {"))
    assert refused.value.problems[0].message == (
        "The step 'aff_substantive' is labelled 'Affirmative substantive' on line 34; give it one label, or give this"
        " 'first' a step of its own."
    )


def test_what_each_seat_saw_a_point_of_information_the_bench_and_the_chair():
    card = card_of("canadian")
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    by_step = {s.step: s for s in steps}
    # A point of information (sees: last) reads only the speech it interrupts, then its prompt.
    assert by_step["poi_to_pm_1"].messages == (
        {"role": "system", "content": "mo persona"},
        {"role": "user", "content": "Pm-name: <pm pm_constructive 6>\n\nRise on a point of information to Pm-name."},
    )
    # The Prime Minister's rebuttal thinks first, privately, on the Leader of the Opposition's speech.
    assert (by_step["think"].seat, by_step["think"].visibility, by_step["think"].prompt) == (
        "pm", "private", "Privately list what the Leader of the Opposition left standing: <lo lo_speech 15>",
    )  # fmt: skip
    card = card_of("moot-court")
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    by_step = {s.step: s for s in steps}
    # The wing judge asks from its own chat; the surrebuttal (sees: last) reads the rebuttal alone.
    assert by_step["bench_asks_res1_1"].messages == (
        {"role": "system", "content": "wing persona"},
        {"role": "user", "content": "Put one question to App1-name on: <app1 app1_submission 1>"},
        {"role": "assistant", "content": "<wing bench_asks_app1_1 4>"},
        {"role": "user", "content": "Put one question to Res1-name on: <res1 res1_submission 11>"},
    )
    assert by_step["surrebuttal"].messages[1:] == (
        {"role": "user", "content": "App1-name: <app1 rebuttal 21>\n\nSurrebuttal for the Respondent: answer only the rebuttal."},
    )  # fmt: skip


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["australs", "canadian", "congress", "moot-court"])
def test_each_newer_cards_page_shows_its_plan(name, client):
    format_cards.save_card(text_of(name), owner=None)
    page = client.get(reverse("format_detail", args=[name]))
    assert page.status_code == 200
    html = page.content.decode()
    card = card_of(name)
    assert f"exactly {card.calls(defaults(card))} LLM calls" in html
    for planned in card.plan(defaults(card)):
        assert escape(planned.label) in html, planned.label


@pytest.mark.django_db(transaction=True)
def test_a_moot_courts_bench_seats_the_panels_next_judge_and_needs_as_many(llm_server, runner_idle):
    format_cards.save_card(text_of("moot-court"), owner=None)

    def make(judges: tuple[str, ...]):
        return services.create_tournament(
            name="Moot",
            debaters=[Contestant.of(debater(n)) for n in ("Alice", "Bob")],
            judges=[Contestant.of(judge(n)) for n in judges],
            questions=questions(1),
            options={},
            sides="once",
            formats=["moot-court"],
            owner=None,
        )

    with pytest.raises(services.TournamentError) as refused:
        make(("Judge Una",))
    assert str(refused.value) == "A moot-court debate seats 2 judges (its own and Judge): give as many."
    finished = run_to_end(make(("Judge Una", "Judge Vic")))
    debate = Match.objects.get().debate
    assert (finished.status, debate.status) == ("completed", "completed"), debate.error_text
    assert dict(debate.seats.filter(role="judge").values_list("key", "name")) == {
        "president": "Judge Una",
        "wing": "Judge Vic",
    }
    assert list(debate.events.filter(seat__key="wing").values_list("step", flat=True)) == [
        "bench_asks_app1_1",
        "bench_asks_res1_1",
    ]
    assert [v.judge for v in results.verdicts(finished)] == ["Judge Una", "Judge Vic"]


@pytest.mark.django_db(transaction=True)
def test_congress_ranks_four_entrants_in_a_tournament_presided_by_its_moderator(llm_server, runner_idle):
    """Each legislator is a side of one seat, named by its speaker: the parliamentarian's ranking names the
    entrants, and counts as the six pairwise results it implies."""
    ballot = {"ranking": ["Cy", "Ann", "Di", "Ben"], "scores": {"Cy": 6, "Ann": 5, "Di": 4, "Ben": 3}}
    llm_server.configure(rules=[{"match": "Rank them all, best first", "reply": json.dumps(ballot)}])
    format_cards.save_card(text_of("congress"), owner=None)
    tournament = services.create_tournament(
        name="Congress",
        debaters=[Contestant.of(debater(n)) for n in ("Ann", "Ben", "Cy", "Di")],
        judges=[Contestant.of(judge("Judge Una"))],
        questions=questions(1),
        options={},
        sides="once",
        formats=["congress"],
        moderator=Contestant.of(judge("Chair Po")),
        owner=None,
    )
    finished = run_to_end(tournament)
    debate = Match.objects.get().debate
    assert (finished.status, debate.status) == ("completed", "completed"), debate.error_text
    seats = dict(debate.seats.values_list("key", "name"))
    assert seats == {"po": "Chair Po", "a": "Ann", "b": "Ben", "c": "Cy", "d": "Di", "parliamentarian": "Judge Una"}
    assert [(r.place, r.seats) for r in selectors.ranked_sides(debate)] == [
        (1, (("Representative Clark", "Cy"),)),
        (2, (("Representative Adams", "Ann"),)),
        (3, (("Representative Diaz", "Di"),)),
        (4, (("Representative Baker", "Ben"),)),
    ]
    report = results.report(finished)
    assert [(r.name, r.wins, r.losses) for r in report.ratings] == [
        ("Cy", 3, 0),
        ("Ann", 2, 1),
        ("Di", 1, 2),
        ("Ben", 0, 3),
    ]
    # The exports name every place of the ranking, not only the first.
    assert json.loads(transcripts.as_json(debate))["verdict"]["ranking"] == ["Cy", "Ann", "Di", "Ben"]
    assert "**Ranking:** 1. Cy, 2. Ann, 3. Di, 4. Ben (Ann 5, Ben 3, Cy 6, Di 4)" in transcripts.as_markdown(debate)


def test_the_protocol_page_tells_a_speechs_moderator_line_from_its_prompt():
    """Congress's chair recognises each speaker before the speech's prompt: both texts are the step's, so the
    page heads the line as the system line."""
    page = protocol_markdown(card_of("congress"))
    assert (
        "### authorship (system line)\n\n```text\n[PRESIDING OFFICER]: The chair recognises {speaker} for speech"
        " {round} of {rounds}.\n```\n\n### authorship\n\n```text\nGive the authorship speech for the bill: {topic}.\n```"
    ) in page


def test_a_judge_may_mark_each_speaker_on_a_rubric_with_each_score():
    """Australs' adjudicator marks every speaker on matter, manner and method: the score's JSON must carry each
    criterion from 0 to its maximum, besides the 0-10 score the pages chart."""
    card = card_of("australs")
    steps, _, _, _ = run(card, config_for(card), reply=reply)
    score = next(s for s in steps if s.kind == "SCORE")
    assert score.json_schema["required"] == ["score", "reasoning", "marks"]
    assert score.json_schema["properties"]["marks"] == {
        "type": "object",
        "properties": {
            "matter": {"type": "integer", "minimum": 0, "maximum": 40},
            "manner": {"type": "integer", "minimum": 0, "maximum": 40},
            "method": {"type": "integer", "minimum": 0, "maximum": 20},
        },
        "required": ["matter", "manner", "method"],
    }
    # Without a rubric under `score`, a score is the duel's.
    plain = card_of("multi-round")
    steps, _, _, _ = run(plain, config_for(plain), reply=reply)
    assert "marks" not in next(s for s in steps if s.kind == "SCORE").json_schema["properties"]
    with pytest.raises(CardError) as refused:
        parse_card(
            text_of("australs")
            .replace(
                "- {key: method, label: Method, max: 20}\n  verdict",
                "- {key: method, label: Method, max: 0}\n  verdict",
                0,
            )
            .replace("      - {key: method, label: Method, max: 20}", "      - {key: method, label: Method, max: 0}")
        )
    assert [(p.field, p.message) for p in refused.value.problems] == [
        ("judge.score.rubric[3].max", "A criterion's maximum must be from 1 to 100.")
    ]
