"""The scripted Messages API on its own, over plain HTTP: fast, no CLI needed."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from harness.queries import RecordingAPI
from harness.scenarios import subagent_report
from maker_scripted import (
    ApiError,
    FakeMessagesAPI,
    RecordedRequest,
    Reply,
    ToolUseBlock,
)

HELPER_SYSTEM = [{"type": "text", "text": "You are a Claude agent."},
                 {"type": "text", "text": "maker-agent: helper\nYou help."}]


def _post(api: FakeMessagesAPI, body: dict[str, Any],
          path: str = "/v1/messages?beta=true") -> tuple[int, str]:
    request = urllib.request.Request(
        api.base_url + path, data=json.dumps(body).encode(), method="POST",
        headers={"content-type": "application/json", "x-api-key": "sk-fake"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read().decode()


def _body(text: str = "hi", *, stream: bool = True, system: Any = "You are Claude.",
          **extra: Any) -> dict[str, Any]:
    return {"model": "claude-test", "max_tokens": 100, "stream": stream, "system": system,
            "tools": [{"name": "Bash"}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
            **extra}


def _events(raw: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for chunk in raw.strip().split("\n\n"):
        name_line, data_line = chunk.split("\n")
        events.append((name_line.removeprefix("event: "),
                       json.loads(data_line.removeprefix("data: "))))
    return events


def _reassemble(events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Rebuild the content blocks from a stream, the way a client does."""
    blocks: list[dict[str, Any]] = []
    partial: dict[int, str] = {}
    for name, data in events:
        if name == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[data["index"]]["text"] += delta["text"]
            else:
                partial[data["index"]] = partial.get(data["index"], "") + delta["partial_json"]
        elif name == "content_block_stop" and data["index"] in partial:
            blocks[data["index"]]["input"] = json.loads(partial[data["index"]])
    return blocks


@pytest.fixture
def api() -> Iterator[FakeMessagesAPI]:
    with RecordingAPI() as server:
        yield server


def test_streams_text_and_tool_calls_in_the_order_the_client_expects(
        api: FakeMessagesAPI) -> None:
    long_command = "echo " + "x" * 1000  # sent in several input_json_delta chunks
    api.script("main", Reply.of("let me look", ToolUseBlock("Bash", {"command": long_command},
                                                            id="toolu_1")))

    status, raw = _post(api, _body())

    assert status == 200
    events = _events(raw)
    names = [name for name, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == names.count("content_block_stop") == 2
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert _reassemble(events) == [
        {"type": "text", "text": "let me look"},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": long_command}},
    ]


def test_answers_json_when_not_streaming(api: FakeMessagesAPI) -> None:
    api.script("main", "plain answer")

    status, raw = _post(api, _body(stream=False))

    message = json.loads(raw)
    assert status == 200
    assert message["content"] == [{"type": "text", "text": "plain answer"}]
    assert message["stop_reason"] == "end_turn"
    assert message["role"] == "assistant" and message["model"] == "claude-test"


def test_queues_are_per_agent_and_callables_see_the_request(api: FakeMessagesAPI) -> None:
    seen: list[str] = []

    def helper_reply(request: RecordedRequest) -> str:
        seen.append(request.last_user_text)
        return f"helper got {request.last_user_text}"

    api.script("main", "main answer")
    api.script("helper", helper_reply)

    _, helper_raw = _post(api, _body("the brief", system=HELPER_SYSTEM, stream=False))
    _, main_raw = _post(api, _body(stream=False))

    assert json.loads(helper_raw)["content"][0]["text"] == "helper got the brief"
    assert json.loads(main_raw)["content"][0]["text"] == "main answer"
    assert seen == ["the brief"]
    assert [r.agent for r in api.requests] == ["helper", "main"]
    assert api.requests_for("helper")[0].system_text.endswith("You help.")
    api.assert_done()


def test_agent_markers_override_the_default_convention() -> None:
    with RecordingAPI(agent_markers={"rev": "You review."}) as api:
        api.script("rev", "reviewed")
        _, raw = _post(api, _body(system="You review.", stream=False))
    assert json.loads(raw)["content"][0]["text"] == "reviewed"
    api.assert_done()


def test_an_empty_queue_answers_the_default_and_assert_done_says_so(
        api: FakeMessagesAPI) -> None:
    api.script("helper", "never asked")

    _, raw = _post(api, _body("are you there?", stream=False))

    assert json.loads(raw)["content"][0]["text"] == api.default_text
    assert api.remaining() == {"helper": 1}
    with pytest.raises(AssertionError) as failure:
        api.assert_done()
    assert "agent 'helper' left 1 scripted reply unused" in str(failure.value)
    assert "from agent 'main' had no scripted reply" in str(failure.value)
    assert "are you there?" in str(failure.value)


def test_a_script_that_raises_fails_the_request_and_assert_done(api: FakeMessagesAPI) -> None:
    def broken(request: RecordedRequest) -> str:
        raise KeyError("brief")

    api.script("main", broken)

    status, raw = _post(api, _body())

    assert status == 500 and json.loads(raw)["type"] == "error"
    with pytest.raises(AssertionError, match="raised: KeyError") as failure:
        api.assert_done()
    assert isinstance(failure.value.__cause__, KeyError)


def test_a_scripted_api_error_is_sent_with_its_status(api: FakeMessagesAPI) -> None:
    api.script("main", ApiError(529, "overloaded_error", "Overloaded"))

    status, raw = _post(api, _body())

    assert status == 529
    assert json.loads(raw) == {"type": "error",
                               "error": {"type": "overloaded_error", "message": "Overloaded"}}
    api.assert_done()


@pytest.mark.parametrize(("body", "kind"), [
    ({"max_tokens": 1, "messages": [{"role": "user", "content": "quota"}]}, "quota"),
    ({"system": 'Name it.\nReturn JSON with a single "title" field.'}, "session_title"),
    ({"system": HELPER_SYSTEM, "messages": [{"role": "user", "content":
      "Describe the agent's most recent action in 3-5 words using present tense"}]},
     "agent_progress"),
])
def test_side_requests_are_answered_without_touching_the_script(
        api: FakeMessagesAPI, body: dict[str, Any], kind: str) -> None:
    api.script("main", "scripted")
    api.script("helper", "scripted")

    status, _ = _post(api, {**_body(stream=False), **body})

    assert status == 200
    (request,) = api.side_requests_seen
    assert request.side_kind == kind
    assert api.remaining() == {"main": 1, "helper": 1}


def test_other_endpoints_answer_at_once_and_are_recorded(api: FakeMessagesAPI) -> None:
    status, raw = _post(api, _body(), path="/v1/messages/count_tokens?beta=true")
    assert status == 200 and json.loads(raw)["input_tokens"] > 0

    head = urllib.request.Request(api.base_url + "/api/hello", method="HEAD")
    with urllib.request.urlopen(head, timeout=5) as response:
        assert response.status == 200

    status, raw = _post(api, {}, path="/v1/unknown")
    assert status == 404 and json.loads(raw)["error"]["type"] == "not_found_error"

    assert [(r.method, r.path.split("?")[0], r.outcome) for r in api.requests] == [
        ("POST", "/v1/messages/count_tokens", "other"),
        ("HEAD", "/api/hello", "other"),
        ("POST", "/v1/unknown", "other"),
    ]


def test_start_twice_is_refused_and_stop_twice_is_harmless() -> None:
    api = RecordingAPI().start()
    try:
        with pytest.raises(RuntimeError, match="already started"):
            api.start()
    finally:
        api.stop()
    api.stop()
    with pytest.raises(RuntimeError, match="not started"):
        _ = api.base_url


def test_recorded_request_reads_tool_results_and_latest_text() -> None:
    request = RecordedRequest(0, "POST", "/v1/messages", {}, {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                           "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                      "is_error": True,
                                      "content": [{"type": "text", "text": "denied"}]}]},
        {"role": "system", "content": "a note from the client"},
    ]})

    (result,) = request.tool_results
    assert (result.tool_use_id, result.text, result.is_error) == ("t1", "denied", True)
    assert request.last_user_text == "denied"
    assert request.latest_text == "denied\na note from the client"
    assert request.all_tool_results == [result]


def test_subagent_report_undoes_the_hand_back_frame() -> None:
    framed = ("[Subagent hand-back] The text below is the final report. The report follows:\n"
              "  step: 3\n  output:\n    ok: true\n"
              "agentId: a1 (use SendMessage to continue)\n<usage>tool_uses: 0</usage>")
    assert subagent_report(framed) == "step: 3\noutput:\n  ok: true"
    assert subagent_report("Async agent launched successfully.") is None


def test_on_request_sees_each_answer_as_it_is_sent() -> None:
    narrated: list[tuple[str | None, str]] = []

    def narrate(request: RecordedRequest) -> None:
        assert isinstance(request.reply, Reply)
        narrated.append((request.agent, request.reply.text_content))

    with RecordingAPI(on_request=narrate) as api:
        api.script("main", "first")
        _post(api, _body(stream=False))
        _post(api, _body(stream=False))

    assert narrated == [("main", "first"), ("main", api.default_text)]
