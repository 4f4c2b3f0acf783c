"""Chat message lists, as every caller builds them. Plain Python: formats import this without Django."""

from __future__ import annotations

Message = dict[str, str]


def append_merged(messages: list[Message], role: str, content: str) -> None:
    """Append a chat message; one of the same role as the last (not system) is merged into it with a blank line,
    since some chat templates insist that user and assistant turns alternate."""
    if messages and messages[-1]["role"] == role and role != "system":
        messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n\n" + content}
    else:
        messages.append({"role": role, "content": content})
