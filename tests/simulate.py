"""Drive a format with no LLM and no database: land every ready step with a scripted reply."""

from debates.formats import Record, get_format


def land(records, step, content=None, data=None):
    if content is None:
        content = f"<{step.seat} {step.step} {step.ordinal}>" if step.calls_llm else step.content
    records.append(
        Record(
            ordinal=step.ordinal,
            kind=step.kind,
            seat=step.seat,
            step=step.step,
            prompt=step.prompt,
            content=content,
            data={**step.data, **(data or {})},
            visibility=step.visibility,
        )
    )


def run(config, records=None, reply=None, until=None):
    """Run waves of ready steps until the format finishes, waits, or `until(records)` is true.

    Returns (calls, records, last plan). `reply(step)` may return the content for a step.
    """
    fmt = get_format(config.format)
    records = list(records or [])
    calls = []
    while True:
        plan = fmt.next_steps(config, records)
        if not plan.steps:
            return calls, records, plan
        for step in plan.steps:
            land(records, step, reply(step) if reply and step.calls_llm else None)
            if step.calls_llm:
                calls.append(step)
        if until and until(records):
            return calls, records, fmt.next_steps(config, records)


def user_message(records, seat, text):
    ordinal = max(r.ordinal for r in records) + 1
    records.append(Record(ordinal=ordinal, kind="USER", seat=seat, step="human", content=text))
