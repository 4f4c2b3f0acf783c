"""PyYAML's side of the persona files (personas/yaml_io.py): a loader that refuses anchors, aliases and
deep nesting, and a dumper that writes multi-line text as a block. yaml_io imports it on its first parse or dump."""

from __future__ import annotations

from typing import Any

import yaml

# A persona is a mapping of scalars (or a list of them): three levels. PyYAML composes nested
# collections recursively, so a small file nested a few hundred levels deep would exhaust Python's
# stack; it is refused at this depth instead, long before.
MAX_DEPTH = 20


class TooDeep(yaml.YAMLError):
    def __init__(self, field: str | None, mark: Any) -> None:
        self.field = field
        self.mark = mark


class NoAliasLoader(yaml.SafeLoader):
    depth = 0
    keys: list[str]

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.constructor.ConstructorError(
                None, None, "anchors and aliases are not allowed in persona files", event.start_mark
            )
        if self.depth == 0:
            self.keys = []
        # Composing a mapping's value, `index` is its key node: remember the outermost key, the field.
        key = index.value if isinstance(index, yaml.ScalarNode) and isinstance(index.value, str) else None
        if self.depth >= MAX_DEPTH:
            raise TooDeep(self.keys[0] if self.keys else key, self.peek_event().start_mark)
        self.depth += 1
        if key is not None:
            self.keys.append(key)
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1
            if key is not None:
                self.keys.pop()


class Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


Dumper.add_representer(str, _str_presenter)
