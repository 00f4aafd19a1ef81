"""The model service through the official `openai` client: MiniLM embeddings (and the n-gram
stand-in on request), schema-valid structured output, tool calls, extraction prompts answered
with the input's facts, and a price list memeval's own client reads."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from memeval.llm.client import LlmClient
from memeval.llm.prompt import messages as answer_messages
from memeval.models import CHAT_MODEL, EMBED_MODEL, NOTE
from tests.model_service import model_service

NULL = {"type": "null"}
SCHEMA = {
    "type": "object",
    "$defs": {
        "Edge": {
            "type": "object",
            "properties": {
                "fact": {"type": "string", "maxLength": 40},
                "kind": {"enum": ["LIVES_IN", "LIKES"]},
                "source": {"type": "integer", "minimum": 1},
                "valid_at": {"anyOf": [{"type": "string", "format": "date-time"}, NULL]},
                "weight": {"type": "number"},
                "sure": {"type": "boolean"},
            },
            "required": ["fact", "kind", "source", "valid_at", "weight", "sure"],
            "additionalProperties": False,
        }
    },
    "properties": {
        "edges": {"type": "array", "items": {"$ref": "#/$defs/Edge"}},
        "ids": {"type": "array", "items": {"type": "integer"}, "minItems": 2},
        "version": {"const": 3},
    },
    "required": ["edges", "ids", "version"],
    "additionalProperties": False,
}
TEXT = "Alice moved to Paris in 2019. She drinks green tea every morning!"


@pytest.fixture
def client(model_url):
    import openai  # here, not at the top: collection (once per xdist worker) skips it

    return openai.OpenAI(base_url=model_url, api_key="anything")


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_ngram_embeddings_are_unit_vectors_that_follow_spelling():
    import openai

    from memeval.models.server import running

    with running(embedder="ngram") as url:
        client = openai.OpenAI(base_url=url, api_key="anything")
        texts = ["Alice lives in Paris", "Alice lived in Paris", "quarterly tax filing deadline"]
        first = [d.embedding for d in client.embeddings.create(model="any", input=texts).data]
        again = client.embeddings.create(model="other", input=texts[0]).data[0].embedding
        sized = client.embeddings.create(model="m", input="x", dimensions=64).data[0].embedding
        listed = [m.id for m in client.models.list()]
    assert again == first[0]  # deterministic, whatever the model name
    assert all(math.isclose(_cosine(v, v), 1.0, rel_tol=1e-9) for v in first)
    assert _cosine(first[0], first[1]) > 0.6 > _cosine(first[0], first[2])
    assert len(sized) == 64
    assert listed == [CHAT_MODEL, "memeval/stand-in-embed"]


def test_minilm_embeddings_match_meaning_and_name_the_model(client):
    pair = ["A man is eating food.", "A man is eating a piece of bread."]
    reply = client.embeddings.create(model="text-embedding-3-small", input=pair)
    first, second = (d.embedding for d in reply.data)
    assert reply.model == EMBED_MODEL == "sentence-transformers/all-MiniLM-L6-v2 (int8)"
    assert len(first) == 384
    # The figure sentence-transformers publishes for this pair with this model.
    assert _cosine(first, second) == pytest.approx(0.755, abs=0.01)
    listed = {m.id: m for m in client.models.list()}
    assert set(listed) == {CHAT_MODEL, EMBED_MODEL}


def test_minilm_refuses_a_size_it_does_not_have(client):
    import openai

    with pytest.raises(openai.BadRequestError, match="has 384 dimensions, not 64"):
        client.embeddings.create(model="m", input="x", dimensions=64)


def test_structured_output_is_a_valid_instance_holding_the_facts(client):
    import jsonschema  # as openai: collection skips it

    reply = client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "system", "content": "Extract."}, {"role": "user", "content": TEXT}],
        response_format={"type": "json_schema", "json_schema": {"name": "E", "schema": SCHEMA}},
    )
    body = json.loads(reply.choices[0].message.content)
    jsonschema.validate(body, SCHEMA)
    assert [e["fact"] for e in body["edges"]] == [
        "Alice moved to Paris in 2019.",
        "She drinks green tea every morning!",
    ]
    assert body["edges"][0]["valid_at"] is None  # states no time it was not given
    assert body["edges"][0]["source"] == 1 and len(body["ids"]) == 2
    assert reply.usage.prompt_tokens > 0 and reply.model == "gpt-4.1-mini"


def test_the_parse_helper_of_the_sdk_reads_the_answer(client):
    from pydantic import BaseModel

    class Facts(BaseModel):
        facts: list[str]
        count: int

    parsed = client.beta.chat.completions.parse(
        model="m", messages=[{"role": "user", "content": TEXT}], response_format=Facts
    )
    assert parsed.choices[0].message.parsed == Facts(
        facts=["Alice moved to Paris in 2019.", "She drinks green tea every morning!"], count=0
    )


def test_json_object_follows_the_example_the_prompt_shows(client):
    from mem0.configs.prompts import (
        ADDITIVE_EXTRACTION_PROMPT,
        generate_additive_extraction_prompt,
    )

    user = generate_additive_extraction_prompt(
        existing_memories=[], new_messages=f"user: {TEXT}\n", last_k_messages=[]
    )
    reply = client.chat.completions.create(
        model="m",
        messages=[
            {"role": "system", "content": ADDITIVE_EXTRACTION_PROMPT},
            {"role": "user", "content": user},
        ],
        response_format={"type": "json_object"},
    )
    body = json.loads(reply.choices[0].message.content)
    assert body == {
        "memory": [
            {"id": "0", "text": "Alice moved to Paris in 2019."},
            {"id": "1", "text": "She drinks green tea every morning!"},
        ]
    }


def test_json_object_without_an_example_lists_the_facts(client):
    reply = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "Bob uses Postgres 16. It listens on 5433."}],
        response_format={"type": "json_object"},
    )
    facts = ["Bob uses Postgres 16.", "It listens on 5433."]
    assert json.loads(reply.choices[0].message.content) == {"facts": facts}


def test_a_tool_call_carries_valid_arguments_for_the_chosen_tool(client):
    import jsonschema

    tools = [
        {"type": "function", "function": {"name": "noop", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "save", "parameters": SCHEMA}},
    ]
    reply = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": TEXT}],
        tools=tools,
        tool_choice={"type": "function", "function": {"name": "save"}},
    )
    call = reply.choices[0].message.tool_calls[0]
    assert reply.choices[0].finish_reason == "tool_calls" and call.function.name == "save"
    jsonschema.validate(json.loads(call.function.arguments), SCHEMA)


def test_logprobs_say_every_token_is_certain(client):
    reply = client.chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "True"}],
        logprobs=True,
        top_logprobs=2,
    )
    tokens = reply.choices[0].logprobs.content
    assert [t.token for t in tokens] == ["True"] and tokens[0].top_logprobs[0].logprob == 0.0


def test_memevals_answer_prompt_gets_the_best_matching_pack_line(client):
    pack = "# Context\n- The deploy key rotates on Fridays.\n- Alice moved to Paris in 2019."
    messages = answer_messages("Where did Alice move?", pack)
    reply = client.chat.completions.create(model="m", messages=messages)
    assert reply.choices[0].message.content == "- Alice moved to Paris in 2019."


def test_memevals_client_reads_a_price_of_zero(model_url):
    async def prices():
        client = LlmClient(model_url, require_key=False)
        try:
            return await client.models()
        finally:
            await client.aclose()

    listed = asyncio.run(prices())
    assert {m.id: (m.prompt, m.completion) for m in listed} == {
        CHAT_MODEL: ("0", "0"),
        EMBED_MODEL: ("0", "0"),
    }


def test_serve_prints_its_url_and_the_caveat(tmp_path):
    import openai

    with model_service() as (url, proc):
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == f"embeddings: {EMBED_MODEL}"
        assert proc.stdout.readline().strip() == f"note: {NOTE}"
        models = openai.OpenAI(base_url=url, api_key="k").models.list()
        assert [m.id for m in models] == [CHAT_MODEL, EMBED_MODEL]


def test_a_busy_port_is_one_line_and_exit_2(cli, model_url):
    port = model_url.rsplit(":", 1)[1].split("/")[0]
    done = cli("models", "serve", "--port", port)
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr and "Traceback" not in done.stderr


def test_langmems_session_section_is_the_input_without_role_banners():
    """LangMem's memory manager prints the new messages inside `<session_ID>` with LangChain's
    banners; the instructions before it are not facts."""
    from memeval.models.facts import facts

    prompt = (
        "You are a long-term memory manager. Extract memories.\n\n"
        "<session_5f0c2a9e-1b2c-4d3e-8f90-123456789abc>\n"
        "================================ Human Message =================================\n\n"
        "Ada moved to Bergen. She runs the lab.\n"
        "</session_5f0c2a9e-1b2c-4d3e-8f90-123456789abc>"
    )
    assert facts(prompt) == ["Ada moved to Bergen.", "She runs the lab."]


def test_free_to_choose_the_stand_in_calls_a_tool_needing_no_existing_id(client):
    patch = {
        "type": "object",
        "properties": {"json_doc_id": {"type": "string"}, "planned_edits": {"type": "string"}},
        "required": ["json_doc_id", "planned_edits"],
    }
    tools = [
        {"type": "function", "function": {"name": "PatchDoc", "parameters": patch}},
        {"type": "function", "function": {"name": "save", "parameters": SCHEMA}},
    ]
    reply = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": TEXT}], tools=tools, tool_choice="required"
    )
    assert reply.choices[0].message.tool_calls[0].function.name == "save"
    only_patch = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": TEXT}], tools=tools[:1]
    )
    assert only_patch.choices[0].message.tool_calls[0].function.name == "PatchDoc"


def test_json_object_answers_an_instance_of_a_json_schema_the_prompt_shows(client):
    """cognee's fallback: the response model's JSON Schema in the system prompt."""
    schema = {
        "type": "object",
        "properties": {"summary": {"type": "string"}, "description": {"type": "string"}},
        "required": ["summary"],
    }
    reply = client.chat.completions.create(
        model="m",
        messages=[
            {
                "role": "system",
                "content": f"Summarise. Conform to this schema:\n{json.dumps(schema)}",
            },
            {"role": "user", "content": "Ada moved to Bergen. She runs the lab."},
        ],
        response_format={"type": "json_object"},
    )
    answer = json.loads(reply.choices[0].message.content)
    assert "Ada moved to Bergen." in answer["summary"] and "facts" not in answer
