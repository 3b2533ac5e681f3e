"""Every agent's and command's front matter is one YAML mapping of keys the client knows:
a value that runs onto a line of its own (an example's `assistant: …`) reads as another
key, and the client keeps only what comes before it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
AGENT_KEYS = {"name", "description", "tools", "disallowedTools", "model", "color"}
COMMAND_KEYS = {"description", "argument-hint", "allowed-tools", "model",
                "disable-model-invocation"}
FILES = sorted([*REPO.glob("agents/*.md"), *REPO.glob("commands/*.md")])


def _front(path: Path) -> object:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n") and "\n---\n" in text, path.name
    return yaml.safe_load(text.split("\n---\n", 1)[0].removeprefix("---\n"))


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.name}" for p in FILES])
def test_the_front_matter_is_one_mapping_of_known_keys(path: Path) -> None:
    front = _front(path)
    assert isinstance(front, dict), path.name
    known = AGENT_KEYS if path.parent.name == "agents" else COMMAND_KEYS
    assert set(front) <= known, set(front) - known
    assert isinstance(front["description"], str) and front["description"].strip()
    for key, value in front.items():  # (a list or mapping is not what the client reads)
        assert isinstance(value, (str, bool)), (key, value)


def test_each_agents_examples_are_in_its_description() -> None:
    agents = [p for p in FILES if p.parent.name == "agents"]
    assert len(agents) == 3
    for path in agents:
        front = _front(path)
        assert isinstance(front, dict)
        description = front["description"]
        assert description.count("<example>") == description.count("</example>") >= 1
        assert "\nassistant: " in description and "user: " in description, path.name
        assert front["name"] == path.stem
