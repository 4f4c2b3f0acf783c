"""The peers bench/concurrency.py measures ChaosLM against, each run in a process of its own.

    python bench/_peers.py bare URL CONVERSATIONS.json DUELS
    python bench/_peers.py autogen URL CONVERSATIONS.json DUELS

`bare`: the floor. The openai client alone, with the best transport it offers (`DefaultAioHttpClient`),
asking for whole replies: DUELS tasks at once, each sending the conversations of one ChaosLM duel (read
from the JSON file, as the test server recorded them) one after another, through the typed
`chat.completions.create` as an application would.

`autogen`: AutoGen AgentChat, DUELS `RoundRobinGroupChat` teams of three agents at once (two debaters and
a judge, with the system prompts of ChaosLM's duel), each team making as many calls as a duel makes. Needs
autogen-agentchat and autogen-ext[openai]: run with the interpreter of an environment that has them.

Prints one JSON line: {"wall": seconds, "cpu": seconds, "calls": n}, the CPU of this process (user and
system) over the concurrent part only, after a warm-up; imports and client start-up are not counted.
Imports nothing from ChaosLM, so it runs under another environment's interpreter.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any


def measure(one: Callable[[], Awaitable[int]], duels: int) -> dict[str, float]:
    async def run() -> dict[str, float]:
        await one()  # warm up: the first connection, lazy imports
        cpu, wall = time.process_time(), time.perf_counter()
        calls = sum(await asyncio.gather(*(one() for _ in range(duels))))
        return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "calls": calls}

    return asyncio.run(run())


def bare(url: str, conversations: list[list[dict[str, str]]], duels: int) -> dict[str, float]:
    import openai

    client: Any = None

    async def one() -> int:
        nonlocal client
        if client is None:
            http = openai.DefaultAioHttpClient()
            client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0, http_client=http)
        for messages in conversations:
            reply = await client.chat.completions.create(model="bench-model", messages=messages)  # type: ignore[arg-type]
            assert reply.choices[0].message.content
        return len(conversations)

    return measure(one, duels)


def autogen(url: str, conversations: list[list[dict[str, str]]], duels: int) -> dict[str, float]:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import MaxMessageTermination
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    model_info = {
        "vision": False,
        "function_calling": False,
        "json_output": False,
        "structured_output": False,
        "family": "unknown",
    }
    client = OpenAIChatCompletionClient(model="bench-model", base_url=url, api_key="bench", model_info=model_info)
    systems = list(dict.fromkeys(m[0]["content"] for m in conversations if m and m[0]["role"] == "system"))[:3]
    calls = len(conversations)

    async def one() -> int:
        agents = [
            AssistantAgent(name, model_client=client, system_message=system)
            for name, system in zip(("proposer", "opponent", "judge"), systems, strict=False)
        ]
        team = RoundRobinGroupChat(agents, termination_condition=MaxMessageTermination(calls + 1))
        result = await team.run(task="Debate the premise: Cities should ban private cars.")
        return len(result.messages) - 1

    return measure(one, duels)


def main() -> None:
    kind, url, path, duels = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(path) as file:
        conversations = json.load(file)
    print(json.dumps({"bare": bare, "autogen": autogen}[kind](url, conversations, duels)))


if __name__ == "__main__":
    main()
