"""YAML cleaner: what models really send, what is repaired, and what is refused."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.plan_strategies import yaml_like
from maker.errors import YAMLCleanError
from maker.yaml_cleaner.cleaner import YAMLCleaner
from maker.yaml_cleaner.load import load_yaml

DOC = "reasoning: because\nplan:\n  - step: 0\n    title: read\n"
DATA = {"reasoning": "because", "plan": [{"step": 0, "title": "read"}]}


@pytest.fixture
def cleaner() -> YAMLCleaner:
    return YAMLCleaner()


@pytest.mark.parametrize(("raw", "repaired"), [
    (DOC, False),
    (f"```yaml\n{DOC}```", True),
    (f"```yml\n{DOC}```\n", True),
    (f"```YAML\n{DOC}```", True),
    (f"```\n{DOC}```", True),
    (f"~~~yaml\n{DOC}~~~", True),
    (f"  ```yaml\n{DOC}  ```", True),
    (f"Here is the plan:\n\n```yaml\n{DOC}```\n\nLet me know if you want changes.", True),
    (f"Example:\n```yaml\na: 0\n```\nThe real plan:\n```yaml\n{DOC}```", True),
    (f"```python\nprint('hi')\n```\n```yaml\n{DOC}```", True),
    (f"Here it is:\n```yaml\n{DOC}", True),
    (f"Here is the plan:\n{DOC}", True),
    (f"{DOC}\nLet me know if you need anything else!", True),
    (f"Sure! Here you go:\n{DOC}Hope this helps.", True),
    (f"\ufeff{DOC}", False),
    (DOC.replace("\n", "\r\n"), False),
    (DOC.replace("\n", "\r"), False),
    (f"{DOC}\n\n\n", False),
    ("reasoning: because\nplan:\n\t- step: 0\n\t  title: read\n", True),
], ids=["bare", "fence-yaml", "fence-yml", "fence-caps", "fence-no-lang", "tilde-fence",
        "indented-fence", "prose-around-fence", "example-then-answer", "other-language-first",
        "unclosed-fence", "prose-before", "prose-after", "prose-both", "bom", "crlf", "cr",
        "trailing-blank-lines", "tabs"])
def test_clean_extracts_the_document(cleaner, raw, repaired):
    assert cleaner.clean(raw) == (DATA, repaired)


def test_bytes_are_decoded(cleaner):
    assert cleaner.clean(DOC.encode()) == (DATA, False)
    assert cleaner.clean(("\ufeff" + DOC).encode()) == (DATA, False)


def test_a_fence_nested_in_a_block_text_does_not_cut_the_document(cleaner):
    text = ("Here is the plan:\n\n```yaml\nreasoning: r\nplan:\n  - step: 0\n"
            "    task_description: |\n      Run:\n      ```bash\n      pytest -q\n      ```\n"
            "      and report.\n  - step: 1\n```\n")
    data, _ = cleaner.clean(text)
    assert [s["step"] for s in data["plan"]] == [0, 1]
    assert data["plan"][0]["task_description"] == "Run:\n```bash\npytest -q\n```\nand report.\n"


@pytest.mark.parametrize("raw", [f"```yaml\n{DOC}```", f"Here is the plan:\n{DOC}", "a:\n\tb: 1\n"])
def test_strict_mode_refuses_repair(raw):
    with pytest.raises(YAMLCleanError, match="strict mode"):
        YAMLCleaner(strict=True).clean(raw)


@pytest.mark.parametrize("raw", [DOC, f"\ufeff{DOC}", DOC.replace("\n", "\r\n")])
def test_strict_mode_accepts_transport_noise(raw):
    assert YAMLCleaner(strict=True).clean(raw) == (DATA, False)


@pytest.mark.parametrize(("raw", "message", "line"), [
    ("", "empty", None),
    ("  \n\n", "empty", None),
    ("a: 1\nb: [1, 2\nc: 3\n", "invalid YAML", 3),
    ("a: 1\n  b: 2\n", "invalid YAML", 2),
    ("key: 'open\n", "invalid YAML", 2),
])
def test_errors_name_what_and_the_line(cleaner, raw, message, line):
    with pytest.raises(YAMLCleanError, match=message) as info:
        cleaner.clean(raw)
    assert info.value.line == line
    if line is not None:
        assert str(info.value).startswith(f"line {line}: ")


@pytest.mark.parametrize(("raw", "end", "start"), [
    ("a: 1\nb: \"open\nc: 2\nd: 3\n", 5, 2),  # an unclosed quote: found at the end
    ("a: [1,\n  2,\n  3\nb: 4\n", 4, 1),  # an unclosed bracket
])
def test_errors_name_the_line_where_the_mistake_starts(cleaner, raw, end, start):
    with pytest.raises(YAMLCleanError) as info:
        cleaner.clean(raw)
    assert info.value.line == end
    assert str(info.value).endswith(f", which starts at line {start}"), str(info.value)


def test_non_utf8_bytes_name_the_byte_and_line(cleaner):
    with pytest.raises(YAMLCleanError, match=r"not UTF-8 \(byte 0xff at offset 8\)") as info:
        cleaner.clean(b"a: 1\nb: \xff\n")
    assert info.value.line == 2


def test_prose_only_is_returned_as_text_but_refused_as_a_mapping(cleaner):
    assert cleaner.clean("I could not finish the plan.") == ("I could not finish the plan.",
                                                              False)
    with pytest.raises(YAMLCleanError, match="expected a YAML mapping"):
        cleaner.clean_mapping("I could not finish the plan.")


def test_clean_mapping_refuses_a_list(cleaner):
    with pytest.raises(YAMLCleanError, match="but the answer is list"):
        cleaner.clean_mapping("- a\n- b\n")


def _bomb(levels: int, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(["x"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text", [_bomb(9), _bomb(7, 10), "a: &a x\nb: [" + ",".join(
    ["*a"] * 500) + "]\n"], ids=["billion-laughs", "wide", "many-aliases"])
def test_alias_bombs_are_refused_quickly(cleaner, text):
    with pytest.raises(YAMLCleanError, match="alias"):
        cleaner.clean(text)  # refused before the aliases are expanded


def test_a_few_aliases_are_fine(cleaner):
    data, _ = cleaner.clean("base: &b {x: 1}\nuse: *b\n")
    assert data == {"base": {"x": 1}, "use": {"x": 1}}


@pytest.mark.parametrize("expr", ["'[' * 100_000", "'[' * 30_000 + ']' * 30_000",
                                  "'- ' * 60_000 + 'x'", "'{a: ' * 40_000"])
def test_deep_nesting_is_an_error_not_a_crash(expr):
    # libyaml's composer overflows the C stack here (a segfault): run it apart.
    code = ("from maker.yaml_cleaner.load import load_yaml\n"
            "from maker.errors import YAMLCleanError\n"
            f"try:\n    load_yaml({expr})\nexcept YAMLCleanError as exc:\n    print(exc)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "nested too deeply" in result.stdout


def test_moderate_nesting_still_loads():
    data = load_yaml("a: " + "[" * 400 + "1" + "]" * 400 + "\nb: " + "x" * 600 + "\n")
    depth, node = 0, data["a"]
    while isinstance(node, list):
        depth, node = depth + 1, node[0]
    assert depth == 400 and len(data["b"]) == 600


def test_brackets_inside_quotes_are_not_nesting():
    # Looks deep to the cheap bound, so it takes the careful loader, and still loads.
    text = "a: '" + "[" * 800 + "'\nb: 1\n"
    assert load_yaml(text) == {"a": "[" * 800, "b": 1}


async def test_parse_is_the_async_spelling(cleaner):
    assert await cleaner.parse(DOC) == (DATA, False)


# -- properties -----------------------------------------------------------------------

_fragments = st.sampled_from(["```", "```yaml\n", "~~~", "\n", "\t", "  ", "- ", ": ", "a:",
                              "&x ", "*x", "[", "]", "{", "}", "'", '"', "#", "\ufeff", "\r\n",
                              "---\n", "...\n", "|\n", ">\n", "!!python/object:x ", "%YAML 1.1\n",
                              "plan:", "Here is the plan:\n"])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_clean_returns_or_raises_yaml_clean_error_for_any_text(text):
    _clean_or_documented_error(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(_fragments | st.text(max_size=5), max_size=40).map("".join))
def test_clean_returns_or_raises_yaml_clean_error_for_yaml_ish_text(text):
    _clean_or_documented_error(text)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=100))
def test_clean_returns_or_raises_yaml_clean_error_for_any_bytes(raw):
    _clean_or_documented_error(raw)


@settings(max_examples=200, deadline=None)
@given(yaml_like)
@example({"step": None, "0 0": None})  # a quoted key with a space is data, not prose
def test_clean_round_trips_dumped_data(data):
    import yaml

    text = yaml.safe_dump(data)
    if isinstance(data, (dict, list)) and data:
        parsed, _ = YAMLCleaner().clean(text)  # a mapping or a list always comes back
        assert parsed == data
        return
    try:
        YAMLCleaner().clean(text)
    except YAMLCleanError:
        pass  # a bare scalar, or an empty document: nothing to extract


def _clean_or_documented_error(raw: str | bytes) -> None:
    for strict in (False, True):
        try:
            YAMLCleaner(strict=strict).clean(raw)
        except YAMLCleanError as exc:
            assert str(exc)


@pytest.mark.parametrize(("text", "fragment"), [
    ("step: 1\nstatus: failed\nsummary: s\nstatus: complete\n",
     "line 4: the key 'status' appears twice"),
    ("output:\n  a: 1\n  a: 2\n", "line 3: the key 'a' appears twice"),
    ("n: " + "9" * 5000 + "\n", "a value cannot be read"),
])
def test_duplicate_keys_and_unreadable_values_are_errors(text, fragment):
    with pytest.raises(YAMLCleanError, match=re.escape(fragment)):
        YAMLCleaner().clean(text)


def test_merge_keys_are_not_duplicates():
    data, _ = YAMLCleaner().clean("base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n")
    assert data["use"] == {"x": 1, "y": 2}
