"""The room's turn queue with no LLM: order, mentions, skips, pauses, limits, the speaker guard."""

import pytest

from rooms.queue import (
    PICK,
    SELECTOR_SYSTEM,
    Agent,
    Queue,
    Turn,
    add_agent,
    advance,
    asked,
    context_level,
    everyone_skipped,
    find_mentions,
    guard_speaker,
    message_limit_reached,
    move_earlier,
    next_group,
    next_turn,
    parse_selection,
    pick,
    remove_agent,
    selector_candidates,
    selector_messages,
    skip_line,
    skip_reason,
    upcoming,
    was_picked,
    with_mentions,
)

ALICE, BOB, CHARLIE = Agent(1, "Alice"), Agent(2, "Bob"), Agent(3, "Charlie")
AGENTS = [ALICE, BOB, CHARLIE]


def queue(*ids):
    q = Queue()
    for agent_id in ids:
        q = add_agent(q, agent_id)
    return q


def rotation(q, agents, steps, skipped=()):
    spoken = []
    for _ in range(steps):
        group = next_group(q, agents)
        spoken.append(group)
        q = advance(q, group, [a for a in group if a in skipped])
    return spoken, q


def test_agents_answer_in_the_order_they_were_added():
    spoken, _ = rotation(queue(1, 2, 3), AGENTS, 4)
    assert spoken == [(1,), (2,), (3,), (1,)]


def test_the_specs_example_a_mention_is_inserted_then_normal_order_returns():
    q = queue(1, 2, 3)
    q = with_mentions(q, find_mentions("@Charlie what do you think?", AGENTS))
    spoken, _ = rotation(q, AGENTS, 3)
    assert spoken == [(3,), (1,), (2,)]


def test_mentions_are_case_insensitive_partial_and_self_mentions_are_ignored():
    agents = [Agent(1, "Alice"), Agent(2, "Alan"), Agent(3, "Judge Ines Okafor")]
    assert find_mentions("hey @alice", agents) == (1,)
    assert find_mentions("hey @AL, thoughts?", agents) == (1,)  # partial: the first match in queue order
    assert find_mentions("@ines okafor?", agents) == (3,)
    assert find_mentions("@Judge Ines Okafor, rule on it.", agents) == (3,)
    assert find_mentions("I, Alice, say @Alice", agents, author_id=1) == ()
    assert find_mentions("email me at bob@example.org", [Agent(9, "example")]) == ()
    assert find_mentions("@nobody here", agents) == ()


def test_several_mentions_answer_together_in_queue_order_then_the_queue_resumes():
    q = queue(1, 2, 3)
    q = advance(q, next_group(q, AGENTS))  # Alice spoke; Bob is next in rotation
    q = with_mentions(q, find_mentions("@Charlie and @Alice, please", AGENTS))
    assert next_group(q, AGENTS) == (1, 3)
    q = advance(q, (1, 3))
    assert next_group(q, AGENTS) == (2,)


def test_agents_can_mention_each_other():
    q = queue(1, 2, 3)
    q = advance(q, next_group(q, AGENTS))  # Alice answered, mentioning Charlie
    q = with_mentions(q, find_mentions("I defer to @Charlie", AGENTS, author_id=1))
    spoken, _ = rotation(q, AGENTS, 2)
    assert spoken == [(3,), (2,)]


def test_paused_agents_are_passed_over_and_keep_their_place():
    agents = [ALICE, Agent(2, "Bob", participating=False), CHARLIE]
    spoken, q = rotation(queue(1, 2, 3), agents, 3)
    assert spoken == [(1,), (3,), (1,)]
    assert q.order == (1, 2, 3)
    assert next_group(with_mentions(q, [2]), agents) != (2,)  # a paused agent does not answer a mention


def test_new_agents_join_the_end_and_removed_ones_leave_without_disturbing_the_turn():
    q = queue(1, 2)
    q = advance(q, (1,))
    q = add_agent(q, 3)
    assert q.order == (1, 2, 3) and next_group(q, AGENTS) == (2,)
    q = remove_agent(q, 1)
    assert q.order == (2, 3) and next_group(q, AGENTS) == (2,)
    q = remove_agent(q, 2)
    assert next_group(q, AGENTS) == (3,)
    emptied = remove_agent(remove_agent(q, 3), 3)
    assert (emptied.order, emptied.cursor, next_group(emptied, AGENTS)) == ((), 0, ())


def test_a_full_round_of_skips_stops_auto_mode_and_one_answer_resets_it():
    q = queue(1, 2, 3)
    _, q = rotation(q, AGENTS, 2, skipped={1, 2})
    assert not everyone_skipped(q, AGENTS)
    _, q = rotation(q, AGENTS, 1, skipped={3})
    assert everyone_skipped(q, AGENTS)
    _, q = rotation(q, AGENTS, 1)
    assert not everyone_skipped(q, AGENTS) and q.skipped == ()


def test_skips_count_only_participating_agents():
    agents = [ALICE, Agent(2, "Bob", participating=False), CHARLIE]
    _, q = rotation(queue(1, 2, 3), agents, 2, skipped={1, 3})
    assert everyone_skipped(q, agents)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("SKIP", ""),
        ("skip", ""),
        ('"SKIP"', ""),
        ("SKIP.", ""),
        (" **SKIP** ", ""),
        ("SKIP:", ""),
        ("SKIP: nothing to add on pricing", "nothing to add on pricing"),
        ("**SKIP**: outside my field.", "outside my field."),
        ("skip \u2014 off topic", "off topic"),
        ("SKIP - " + "x" * 300, "x" * 200),
        ("SKIP:\nBob: a line for someone else", None),  # a reason is one line; more is an answer
        ("Skipping this one because", None),
        ("I would not skip this", None),
        ("", None),
    ],
)
def test_skip_with_or_without_a_reason(text, reason):
    assert skip_reason(text) == reason


def test_the_skip_line_carries_the_reason_when_there_is_one():
    assert skip_line("Bob | critic", "") == "[Bob | critic] skipped their turn"
    assert skip_line("Bob | critic", "nothing to add on pricing") == (
        "[Bob | critic] skipped their turn: nothing to add on pricing"
    )


@pytest.mark.parametrize(
    ("tokens", "window", "level"),
    [
        (0, 8000, "ok"),
        (6399, 8000, "ok"),
        (6400, 8000, "warning"),
        (7599, 8000, "warning"),
        (7600, 8000, "critical"),
        (9000, 8000, "critical"),
        (10, 0, "ok"),
    ],
)
def test_context_thresholds_at_80_and_95_percent(tokens, window, level):
    assert context_level(tokens, window) == level


def test_message_limit_and_zero_for_unlimited():
    assert message_limit_reached(10, 10) and not message_limit_reached(9, 10)
    assert not message_limit_reached(10_000, 0)


def test_the_queue_survives_a_round_trip_through_json():
    q = with_mentions(advance(queue(1, 2, 3), (1,), [1]), [3])
    assert Queue.from_json(q.to_json()) == q
    assert Queue.from_json(None) == Queue()


@pytest.mark.parametrize(
    ("text", "kept", "cut_at"),
    [
        ("I agree with that.\nBob: No you don't!\nAlice: Yes I do.", "I agree with that.", "Bob"),
        ("Point one.\n**Charlie:** and another", "Point one.", "Charlie"),
        ("As Bob said: costs matter.", "As Bob said: costs matter.", ""),
        ("Alice: I am me.", "Alice: I am me.", ""),  # its own name is not someone else's line
    ],
)
def test_the_speaker_guard_cuts_where_an_agent_speaks_for_another(text, kept, cut_at):
    guarded = guard_speaker(text, "Alice", ["Alice", "Bob", "Charlie", "You"])
    assert (guarded.text, guarded.cut_at) == (kept, cut_at)


ROLED = [Agent(1, "Alice", role="economist"), Agent(2, "Bob", role="critic"), Agent(3, "Charlie Day")]


def test_the_selector_may_name_participating_candidates_and_not_the_last_speaker_unless_allowed():
    agents = [*ROLED[:2], Agent(3, "Charlie Day", candidate=False), Agent(4, "Dee", participating=False)]
    q = advance(queue(1, 2, 3, 4), (1,))
    assert [a.id for a in selector_candidates(q, agents, allow_repeat=False)] == [2]
    assert [a.id for a in selector_candidates(q, agents, allow_repeat=True)] == [1, 2]


def test_the_exact_messages_the_selector_receives():
    recent = [("olive", "What will it cost?"), ("Alice", "x" * 700)]
    messages = selector_messages(recent, ROLED[1:], just_spoke="Alice")
    assert messages == [
        {"role": "system", "content": SELECTOR_SYSTEM},
        {
            "role": "user",
            "content": "Participants who may speak next:\n- Bob (critic)\n- Charlie Day\n\n"
            "The conversation so far (most recent last):\nolive: What will it cost?\nAlice: " + "x" * 600 + "\u2026\n\n"
            "Who should speak next? Not Alice, who just spoke.",
        },
    ]
    assert "Mira \u2014 asked about costs" in SELECTOR_SYSTEM
    # Only the most recent twelve lines: the request does not grow with the conversation.
    long = selector_messages([("olive", f"line {i}") for i in range(40)], ROLED)[1]["content"]
    assert "line 27" not in long and "line 28" in long and "line 39" in long
    assert "(nothing yet)" in selector_messages([], ROLED)[1]["content"]


@pytest.mark.parametrize(
    ("answer", "chosen", "reason"),
    [
        ("Bob \u2014 asked about costs", 2, "asked about costs"),
        ("**Bob**: he was asked directly", 2, "he was asked directly"),
        ("Next: charlie day - to balance the view\nmore text", 3, "to balance the view"),
        ("Charlie", 3, ""),
        ("Alice \u2014 she knows", None, ""),  # not a candidate (she just spoke)
        ("Zed \u2014 anyone", None, ""),
        ("I think Bob should speak", None, ""),
        ("", None, ""),
    ],
)
def test_reading_the_selector_s_answer(answer, chosen, reason):
    selection = parse_selection(answer, ROLED[1:])
    if chosen is None:
        assert selection is None
    else:
        assert (selection.agent_id, selection.reason) == (chosen, reason)


def test_pick_speak_next_goes_first_after_mentions_then_the_rotation_resumes_where_it_was():
    q = advance(queue(1, 2, 3), (1,))  # Alice spoke; Bob is next in rotation
    q = pick(pick(q, 1), 3)  # Charlie speaks next, then Alice
    assert upcoming(q, AGENTS) == (3, 1, 2)
    assert next_group(q, AGENTS) == (2,)  # round robin ignores the owner's picks
    mentioned = with_mentions(q, [2])
    assert next_group(mentioned, AGENTS, PICK) == (2,) and not was_picked(mentioned, AGENTS, (2,), PICK)
    spoken = []
    for _ in range(4):
        group = next_group(q, AGENTS, PICK)
        spoken.append(group)
        q = advance(q, group, picked=was_picked(q, AGENTS, group, PICK))
    assert spoken == [(3,), (1,), (2,), (3,)]
    assert q.picked == ()


def test_pick_reordering_moves_an_agent_up_one_place_and_skips_paused_agents():
    q = queue(1, 2, 3)
    q = move_earlier(q, AGENTS, 3)
    assert upcoming(q, AGENTS) == (1, 3, 2)
    q = move_earlier(q, AGENTS, 3)
    assert upcoming(q, AGENTS) == (3, 1, 2) and next_group(q, AGENTS, PICK) == (3,)
    assert move_earlier(q, AGENTS, 3) == q  # already first
    paused = [ALICE, Agent(2, "Bob", participating=False), CHARLIE]
    assert upcoming(q, paused) == (3, 1)
    assert Queue.from_json(q.to_json()) == q


def run_turns(agents, seed, count, q=None):
    q = q or queue(*(a.id for a in agents))
    spoken, passed = [], []
    for _ in range(count):
        turn = next_turn(q, agents, seed=seed)
        spoken.append(turn.group[0])
        passed.append(turn.passed)
        q = advance(q, turn.group, passed=turn.passed)
    return spoken, passed, q


def test_talkativeness_draws_are_seeded_per_room_so_a_run_replays_exactly():
    agents = [Agent(1, "Alice", talkativeness=50), Agent(2, "Bob", talkativeness=30), Agent(3, "Charlie")]
    first, passed, q = run_turns(agents, seed=7, count=30)
    assert run_turns(agents, seed=7, count=30)[0] == first
    assert run_turns(agents, seed=8, count=30)[0] != first
    # Charlie (100 %) is never passed over; the quieter ones speak less, and every pass is recorded.
    counts = {a: first.count(a) for a in (1, 2, 3)}
    assert counts[3] > counts[1] > counts[2] > 0
    assert all(3 not in p for p in passed) and any(2 in p for p in passed)
    assert q.passed == passed[-1] and q.turns == 30


def test_talkativeness_zero_speaks_only_when_mentioned():
    agents = [Agent(1, "Alice"), Agent(2, "Bob", talkativeness=0), Agent(3, "Charlie")]
    spoken, passed, q = run_turns(agents, seed=1, count=4)
    assert spoken == [1, 3, 1, 3] and passed[1] == (2,)
    assert next_turn(with_mentions(q, [2]), agents).group == (2,)
    assert [a.id for a in selector_candidates(q, agents, allow_repeat=True)] == [1, 3]
    silent = [Agent(1, "Alice", talkativeness=0), Agent(2, "Bob", talkativeness=0)]
    assert next_turn(queue(1, 2), silent) == Turn((), (1, 2))


def test_when_every_draw_passes_the_most_talkative_speaks():
    agents = [Agent(1, "Alice", talkativeness=1), Agent(2, "Bob", talkativeness=2)]
    seed = next(s for s in range(1000) if not any(asked(s, 0, a) for a in agents))
    assert next_turn(queue(1, 2), agents, seed=seed) == Turn((2,), (1,))
