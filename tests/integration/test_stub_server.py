"""Real-HTTP tests of the fault-injecting stub: the other integration tests trust it to misbehave exactly
as configured, so its oracle, fault schedule and control plane are pinned down here."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import BaseModel

from longgraph.errors import StructuredOutputError
from longgraph.state.outputs import (
    DirectAnswer,
    FilterDecision,
    FreeTextNote,
    MapOutput,
    MergedReasoning,
    ReduceOutput,
    SegmentNote,
    StructuredOutput,
)
from longgraph.structured import format_instructions, parse_structured, response_format
from longgraph.testing.stub_app import CHATML_TOKENS_PER_MESSAGE
from longgraph.testing.stub_server import (
    EXIT_AFTER_RETURN_CODE,
    NO_INFORMATION,
    Fault,
    StubConfig,
    StubHandle,
    decide_fault,
    extract_question_and_text,
    oracle_answer,
    requested_labels,
    run_stub_in_subprocess,
    run_stub_in_thread,
)
from longgraph.tokenizer import get_tokenizer

pytestmark = pytest.mark.integration

PLANTED = "The silver key to the observatory is hidden beneath the third loose floorboard."
QUESTION = "Where is the silver key to the observatory hidden?"
FILLER = " ".join(
    f"Sentence number {i} talks about the weather, the harvest and the price of bread in the village."
    for i in range(40)
)

ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "extracted_information": {"type": "string"},
        "rationale": {"type": "string"},
        "answer": {"type": "string"},
        "confidence_score": {"type": "integer"},
        "decision": {"type": "string", "enum": ["Keep", "Remove"]},
        "is_relevant": {"type": "boolean"},
        "evidence": {"type": "array", "items": {"type": "string"}},
        "certainty": {"type": "number"},
    },
    "required": [
        "extracted_information",
        "rationale",
        "answer",
        "confidence_score",
        "decision",
        "is_relevant",
        "evidence",
        "certainty",
    ],
    "additionalProperties": False,
}


class ChunkAnswer(BaseModel):
    """The structured map output shape the official client should be able to parse."""

    extracted_information: str
    answer: str
    confidence_score: int


def map_messages(text: str, question: str = QUESTION) -> list[dict[str, str]]:
    """A map prompt shaped like the project's: instructions, fenced text, then the question."""
    user = (
        "You are reading one chunk of a long document. Extract what answers the question.\n"
        f"Note that the question ({question}) may not be answerable from this chunk.\n"
        "The chunk begins as follows:\n"
        f"{text}\n"
        "The chunk concludes here.\n\n"
        f"Question: {question}\n\n"
        "Answer: use the four-line format."
    )
    return [{"role": "system", "content": "You are a careful reader."}, {"role": "user", "content": user}]


def chat_body(text: str, **extra: Any) -> dict[str, Any]:
    return {"model": "stub", "messages": map_messages(text), **extra}


def schema_format(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "chunk_answer", "schema": schema, "strict": True}}


@pytest.fixture(scope="module")
def stub() -> Iterator[StubHandle]:
    with run_stub_in_thread(StubConfig()) as handle:
        yield handle


@pytest.fixture
def clean_stub(stub: StubHandle) -> StubHandle:
    """The shared stub with default faults and zeroed counters, whatever the previous test left."""
    stub.configure(**StubConfig().model_dump())
    stub.reset()
    return stub


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as c:
        yield c


# ---------------------------------------------------------------------------------------------------
# Oracle
# ---------------------------------------------------------------------------------------------------


def test_oracle_pure_functions_find_planted_sentence_and_refuse_otherwise() -> None:
    text = f"{FILLER} {PLANTED} {FILLER}"
    assert oracle_answer(QUESTION, text) == (PLANTED, 5.0)
    assert oracle_answer(QUESTION, FILLER) == (None, 0.0)


def test_extract_question_and_text_searches_only_inside_markers() -> None:
    question, text = extract_question_and_text(map_messages(FILLER))
    assert question == QUESTION
    assert "careful reader" not in text and "may not be answerable" not in text
    assert text.strip() == FILLER
    # The question is echoed in the instructions; it must not be mistaken for the answer.
    assert oracle_answer(question, text) == (None, 0.0)


def test_several_fenced_blocks_and_reduce_prompts_are_searched() -> None:
    user = (
        "Passage A begins as follows:\nNothing here.\nPassage A concludes here.\n"
        f"Passage B begins as follows:\n{PLANTED}\nPassage B concludes here.\n\n"
        f"Question: {QUESTION}\n"
    )
    question, text = extract_question_and_text([{"role": "user", "content": user}])
    assert oracle_answer(question, text)[0] == PLANTED

    reduce_user = (
        f"Question: {QUESTION}\n\nInformation from chunks:\n"
        "Chunk 1:\nExtracted Information: None\nAnswer: [NO INFORMATION]\nConfidence Score: 0\n\n"
        f"Chunk 2:\nExtracted Information: {PLANTED}\nAnswer: {PLANTED}\nConfidence Score: 5\n"
    )
    question, text = extract_question_and_text([{"role": "user", "content": reduce_user}])
    assert question == QUESTION
    assert oracle_answer(question, text)[0] == PLANTED


def test_reduce_prompt_with_json_map_outputs_quotes_the_fact() -> None:
    outputs = [
        {"extracted_information": "None", "answer": NO_INFORMATION, "confidence_score": 0},
        {"extracted_information": PLANTED, "answer": PLANTED, "confidence_score": 5},
    ]
    user = f"Question: {QUESTION}\n\nInformation from chunks:\n" + "\n".join(json.dumps(o) for o in outputs)
    assert oracle_answer(*extract_question_and_text([{"role": "user", "content": user}])) == (PLANTED, 5.0)


def test_oracle_over_http_text_protocol(clean_stub: StubHandle, client: httpx.Client) -> None:
    url = f"{clean_stub.base_url}/chat/completions"
    found = client.post(url, json=chat_body(f"{FILLER} {PLANTED} {FILLER}"))
    assert found.status_code == 200
    content = found.json()["choices"][0]["message"]["content"]
    assert f"Answer: {PLANTED}" in content
    assert "Confidence Score: 5" in content

    absent = client.post(url, json=chat_body(FILLER)).json()["choices"][0]["message"]["content"]
    assert f"Answer: {NO_INFORMATION}" in absent
    assert "Extracted Information: None" in absent
    assert "Confidence Score: 0" in absent


def labelled_messages(text: str, schema: type[StructuredOutput]) -> list[dict[str, str]]:
    """A project-shaped text-mode prompt: the fenced text, the question, then the format block the
    structured path writes for ``schema`` (``Please follow this format:`` and one ``Label:`` a line)."""
    user = (
        "The text begins as follows:\n"
        f"{text}\n"
        "The text concludes here.\n\n"
        f"Question: {QUESTION}\n\n"
        f"{format_instructions(schema, 'text')}"
    )
    return [{"role": "user", "content": user}]


OUTPUT_SCHEMAS: list[type[StructuredOutput]] = [
    MapOutput,
    ReduceOutput,
    SegmentNote,
    FilterDecision,
    MergedReasoning,
    FreeTextNote,
    DirectAnswer,
]
"""Every schema a graph asks the model for."""


def test_labels_asked_for_are_parsed_from_the_last_user_message() -> None:
    assert requested_labels(labelled_messages(FILLER, SegmentNote)) == ["Evidence", "Reasoning"]
    assert requested_labels(labelled_messages(FILLER, MapOutput)) == [
        "Extracted Information",
        "Rationale",
        "Answer",
        "Confidence Score",
    ]
    assert requested_labels(map_messages(FILLER)) == []  # no format block: the four-line protocol
    earlier = [*labelled_messages(FILLER, SegmentNote), {"role": "user", "content": "Answer: briefly."}]
    assert requested_labels(earlier) == []  # only the last user message counts


@pytest.mark.parametrize("schema", OUTPUT_SCHEMAS, ids=lambda schema: schema.__name__)
def test_text_mode_answers_with_the_labels_the_prompt_asks_for(
    schema: type[StructuredOutput], clean_stub: StubHandle, client: httpx.Client
) -> None:
    """Without ``response_format`` the oracle writes exactly the requested labels, filled as JSON mode
    fills the same fields, and the project's parser reads them back into the schema."""
    url = f"{clean_stub.base_url}/chat/completions"
    labels = requested_labels(labelled_messages(FILLER, schema))
    contents = {}
    for case, text in (("hit", f"{FILLER} {PLANTED} {FILLER}"), ("miss", FILLER)):
        body = {"model": "stub", "messages": labelled_messages(text, schema)}
        contents[case] = client.post(url, json=body).json()["choices"][0]["message"]["content"]
        assert [line.split(":")[0] for line in contents[case].splitlines() if ":" in line] == labels
        as_text = parse_structured(contents[case], schema)
        fmt = {"response_format": response_format(schema)}
        as_json = client.post(url, json={**body, **fmt}).json()["choices"][0]["message"]["content"]
        assert as_text == parse_structured(as_json, schema), "text and JSON modes answer differently"
    hit, miss = (parse_structured(contents[c], schema).model_dump() for c in ("hit", "miss"))
    if "answer" in hit:
        assert hit["answer"] == PLANTED and miss["answer"] == NO_INFORMATION
    if "confidence_score" in hit:
        assert (hit["confidence_score"], miss["confidence_score"]) == (5.0, 0.0)
    if "decision" in hit:
        assert (hit["decision"], miss["decision"]) == ("Keep", "Remove")
    if "evidence" in hit:
        assert (hit["evidence"], miss["evidence"]) == ([PLANTED], [])
        assert f"Evidence:\n- {PLANTED}" in contents["hit"]
    if "note" in hit:
        assert hit["note"] == PLANTED


def test_json_schema_output_has_every_property(clean_stub: StubHandle, client: httpx.Client) -> None:
    url = f"{clean_stub.base_url}/chat/completions"
    fmt = schema_format(ANSWER_SCHEMA)
    hit = json.loads(
        client.post(url, json=chat_body(PLANTED, response_format=fmt)).json()["choices"][0]["message"][
            "content"
        ]
    )
    assert set(hit) == set(ANSWER_SCHEMA["properties"])
    assert hit["answer"] == PLANTED
    assert hit["confidence_score"] == 5 and isinstance(hit["confidence_score"], int)
    assert hit["certainty"] == 5.0
    assert hit["decision"] == "Keep" and hit["is_relevant"] is True
    assert hit["evidence"] == [PLANTED] and hit["extracted_information"] == PLANTED

    miss = json.loads(
        client.post(url, json=chat_body(FILLER, response_format=fmt)).json()["choices"][0]["message"][
            "content"
        ]
    )
    assert set(miss) == set(ANSWER_SCHEMA["properties"])
    assert miss["answer"] == NO_INFORMATION and miss["confidence_score"] == 0
    assert miss["decision"] == "Remove" and miss["is_relevant"] is False and miss["evidence"] == []


def test_streaming_returns_sse_chunks_and_usage(clean_stub: StubHandle, client: httpx.Client) -> None:
    body = chat_body(PLANTED, stream=True, stream_options={"include_usage": True})
    with client.stream("POST", f"{clean_stub.base_url}/chat/completions", json=body) as response:
        assert response.status_code == 200
        events = [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert f"Answer: {PLANTED}" in text
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] >= 2


def test_models_health_and_usage(clean_stub: StubHandle, client: httpx.Client) -> None:
    assert client.get(f"{clean_stub.root_url}/health").status_code == 200
    models = client.get(f"{clean_stub.base_url}/models").json()
    assert [m["id"] for m in models["data"]] == ["stub"]
    usage = client.post(f"{clean_stub.base_url}/chat/completions", json=chat_body(FILLER)).json()["usage"]
    sent = chat_body(FILLER)["messages"]  # as vLLM counts: the texts, the ChatML marks, the opening
    tokens = sum(get_tokenizer().count(m["content"]) for m in sent)
    assert usage["prompt_tokens"] == tokens + CHATML_TOKENS_PER_MESSAGE * len(sent) + 3
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_forced_tool_call_gets_schema_arguments(clean_stub: StubHandle, client: httpx.Client) -> None:
    tool = {"type": "function", "function": {"name": "ChunkAnswer", "parameters": ANSWER_SCHEMA}}
    body = chat_body(
        PLANTED, tools=[tool], tool_choice={"type": "function", "function": {"name": "ChunkAnswer"}}
    )
    choice = client.post(f"{clean_stub.base_url}/chat/completions", json=body).json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]["function"]
    assert call["name"] == "ChunkAnswer"
    assert json.loads(call["arguments"])["answer"] == PLANTED


def test_openai_sdk_parses_structured_output(clean_stub: StubHandle) -> None:
    """The response shape must satisfy the official client, which the LangChain stack sits on."""
    openai = pytest.importorskip("openai")
    sdk = openai.OpenAI(base_url=clean_stub.base_url, api_key="unused", max_retries=0, timeout=10)
    completion = sdk.chat.completions.parse(
        model="stub", messages=map_messages(PLANTED), response_format=ChunkAnswer
    )
    parsed = completion.choices[0].message.parsed
    assert parsed is not None and parsed.answer == PLANTED and parsed.confidence_score == 5
    sdk.close()


# ---------------------------------------------------------------------------------------------------
# Faults
# ---------------------------------------------------------------------------------------------------


def test_error_rate_one_gives_server_errors(clean_stub: StubHandle, client: httpx.Client) -> None:
    clean_stub.configure(error_rate=1.0)
    codes = [
        client.post(f"{clean_stub.base_url}/chat/completions", json=chat_body(PLANTED)).status_code
        for _ in range(8)
    ]
    assert set(codes) <= {500, 503} and 500 in codes
    stats = clean_stub.stats()
    assert stats["completed"] == 0 and stats["requests"] == 8


def test_rate_limit_answers_429_with_retry_after(clean_stub: StubHandle, client: httpx.Client) -> None:
    clean_stub.configure(rate_limit_every=3, retry_after_s=2)
    responses = [
        client.post(f"{clean_stub.base_url}/chat/completions", json=chat_body(PLANTED)) for _ in range(6)
    ]
    assert [r.status_code for r in responses] == [200, 200, 429, 200, 200, 429]
    assert responses[2].headers["Retry-After"] == "2"
    assert clean_stub.stats()["by_status"] == {"200": 4, "429": 2}


def test_timeout_rate_makes_client_time_out(clean_stub: StubHandle) -> None:
    clean_stub.configure(timeout_rate=1.0)
    with httpx.Client(timeout=0.5) as impatient, pytest.raises(httpx.TimeoutException):
        impatient.post(f"{clean_stub.base_url}/chat/completions", json=chat_body(PLANTED))
    assert clean_stub.stats()["completed"] == 0


def test_malformed_rate_returns_unparseable_content(clean_stub: StubHandle, client: httpx.Client) -> None:
    clean_stub.configure(malformed_rate=1.0)
    url = f"{clean_stub.base_url}/chat/completions"
    for _ in range(6):
        response = client.post(url, json=chat_body(PLANTED, response_format=schema_format(ANSWER_SCHEMA)))
        assert response.status_code == 200
        with pytest.raises(ValueError):
            json.loads(response.json()["choices"][0]["message"]["content"])
        text = client.post(url, json=chat_body(PLANTED)).json()["choices"][0]["message"]["content"]
        assert "Answer:" not in text and "Confidence Score:" not in text


@pytest.mark.parametrize("schema", OUTPUT_SCHEMAS, ids=lambda schema: schema.__name__)
def test_malformed_answers_defeat_the_tolerant_parser(
    schema: type[StructuredOutput], clean_stub: StubHandle, client: httpx.Client
) -> None:
    """The project's parser closes JSON cut off inside a value and reads any ``Label:`` line; a malformed
    answer must still be unreadable to it, for every schema and in both modes, whatever its kind."""
    clean_stub.configure(malformed_rate=1.0)
    url = f"{clean_stub.base_url}/chat/completions"
    messages = labelled_messages(f"{FILLER} {PLANTED}", schema)
    for _ in range(12):  # the kind (truncated, gibberish, prose) is drawn per request
        for extra in ({"response_format": response_format(schema)}, {}):
            body = {"model": "stub", "messages": messages, **extra}
            content = client.post(url, json=body).json()["choices"][0]["message"]["content"]
            with pytest.raises(StructuredOutputError):
                parse_structured(content, schema)


def _send_in_background(stub: StubHandle, statuses: list[int]) -> threading.Thread:
    """One chat request on its own thread, its status appended to ``statuses``; returns once the stub
    has it in flight (or after 10 s)."""

    def send() -> None:
        with httpx.Client(timeout=30.0) as patient:
            statuses.append(
                patient.post(f"{stub.base_url}/chat/completions", json=chat_body(PLANTED)).status_code
            )

    sender = threading.Thread(target=send)
    sender.start()
    deadline = time.monotonic() + 10
    while stub.stats()["in_flight"] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    return sender


def test_a_held_answer_waits_until_it_is_released(clean_stub: StubHandle) -> None:
    clean_stub.configure(hold=True)
    answers: list[int] = []
    sender = _send_in_background(clean_stub, answers)
    time.sleep(0.5)
    held = (list(answers), clean_stub.stats()["completed"])
    clean_stub.configure(hold=False)
    sender.join(timeout=10)
    assert held == ([], 0)
    assert answers == [200] and clean_stub.stats()["completed"] == 1


def test_die_after_refuses_later_requests(clean_stub: StubHandle, client: httpx.Client) -> None:
    clean_stub.configure(die_after=2)
    codes = [
        client.post(f"{clean_stub.base_url}/chat/completions", json=chat_body(PLANTED)).status_code
        for _ in range(4)
    ]
    assert codes == [200, 200, 503, 503]


def test_exit_after_kills_the_subprocess(client: httpx.Client) -> None:
    config = StubConfig(exit_after=2, model="oracle-x", seed=5, retry_after_s=0.5)
    with run_stub_in_subprocess(config) as handle:
        assert handle.process is not None
        assert handle.stats()["config"] == config.model_dump()  # every CLI flag made it through
        url = f"{handle.base_url}/chat/completions"
        assert [client.post(url, json=chat_body(PLANTED)).status_code for _ in range(2)] == [200, 200]
        assert handle.process.wait(timeout=10) == EXIT_AFTER_RETURN_CODE
        with httpx.Client(timeout=2.0) as fresh, pytest.raises(httpx.ConnectError):
            fresh.post(url, json=chat_body(PLANTED))


def test_exit_after_in_thread_stops_the_server(client: httpx.Client) -> None:
    with run_stub_in_thread(StubConfig(exit_after=1)) as handle:
        url = f"{handle.base_url}/chat/completions"
        assert client.post(url, json=chat_body(PLANTED)).status_code == 200
        with httpx.Client(timeout=2.0) as fresh:
            for _ in range(100):  # the listener closes a few tens of milliseconds later
                try:
                    fresh.get(f"{handle.root_url}/health")
                except httpx.ConnectError:
                    break
                time.sleep(0.05)
            else:
                pytest.fail("server still accepting connections after exit_after")


def test_stats_count_requests_stages_and_reset(clean_stub: StubHandle, client: httpx.Client) -> None:
    url = f"{clean_stub.base_url}/chat/completions"
    for stage in ("map", "map", "reduce"):
        client.post(url, json=chat_body(PLANTED), headers={"X-Longgraph-Stage": stage})
    client.post(url, json=chat_body(PLANTED))
    stats = clean_stub.stats()
    assert stats["requests"] == 4 and stats["completed"] == 4
    assert stats["by_status"] == {"200": 4}
    assert stats["by_stage"] == {"map": 2, "reduce": 1, "unknown": 1}
    clean_stub.reset()
    assert clean_stub.stats()["requests"] == 0


def test_config_endpoint_rejects_invalid_values(clean_stub: StubHandle, client: httpx.Client) -> None:
    bad = client.post(f"{clean_stub.root_url}/stub/config", json={"error_rate": 2})
    assert bad.status_code == 400
    unknown = client.post(f"{clean_stub.root_url}/stub/config", json={"no_such_knob": 1})
    assert unknown.status_code == 400
    assert clean_stub.configure(latency_s=0.01)["latency_s"] == 0.01


def _fault_trace(config: StubConfig, n: int) -> list[tuple[int, bool]]:
    """(status, content parses as JSON) for n sequential requests to a fresh stub."""
    trace: list[tuple[int, bool]] = []
    with run_stub_in_thread(config) as handle, httpx.Client(timeout=10.0) as c:
        for _ in range(n):
            r = c.post(
                f"{handle.base_url}/chat/completions",
                json=chat_body(PLANTED, response_format=schema_format(ANSWER_SCHEMA)),
            )
            parses = True
            if r.status_code == 200:
                try:
                    json.loads(r.json()["choices"][0]["message"]["content"])
                except ValueError:
                    parses = False
            trace.append((r.status_code, parses))
    return trace


def test_same_seed_injects_same_faults_in_same_order() -> None:
    config = StubConfig(seed=1234, error_rate=0.25, malformed_rate=0.25, rate_limit_every=7)
    first = _fault_trace(config, 30)
    assert first == _fault_trace(config, 30)
    assert {s for s, _ in first} >= {200, 429} and (200, False) in first
    expected = [decide_fault(config, seq) for seq in range(1, 31)]
    assert [s == 429 for s, _ in first] == [f is Fault.RATE_LIMIT for f in expected]
    assert [s in (500, 503) for s, _ in first] == [f in (Fault.ERROR_500, Fault.ERROR_503) for f in expected]
    other = [decide_fault(config.model_copy(update={"seed": 99}), seq) for seq in range(1, 31)]
    assert other != expected


def test_shutdown_with_a_hanging_request_is_prompt() -> None:
    """A hung request must not hold the server open for hang_s (3600 s) when the test ends."""
    results: list[int] = []
    with run_stub_in_thread(StubConfig(timeout_rate=1.0)) as handle:
        worker = _send_in_background(handle, results)
        started = time.monotonic()
    assert time.monotonic() - started < 5
    worker.join(timeout=5)
    assert results == [503]
